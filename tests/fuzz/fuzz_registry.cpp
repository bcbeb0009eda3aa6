// The fuzz targets' registry (see fuzz_support.hpp): eigen, and `axes`, a host descriptor with an
// integer, a shape, a choice and a grid axis and two variants. Never run: only parsed against.
#include "core/algorithm.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace mmlab {

namespace algorithms {
const Algorithm& eigen();
}

namespace {
const Algorithm& axes() {
  static const Algorithm a = [] {
    Algorithm x;
    x.name = "axes";
    x.summary = "every axis kind (fuzzing only)";
    x.backend = Backend::host;
    x.variants = {{"default", "one"}, {"other", "two"}};
    x.axes = {{"count", AxisKind::integer, "an integer", "4", {"1", "4"}, {}, 64},
              {"block", AxisKind::shape, "a shape", "16x16", {"16x16", "32x8"}},
              {"mode", AxisKind::choice, "a choice", "a", {"a", "b"}, {"other"}},
              {"grid", AxisKind::grid, "a grid", "2x2", {"2x2", "2x1x2"}}};
    return x;
  }();
  return a;
}
}  // namespace

const Registry& fuzz::registry() {
  static const Registry all{{&algorithms::eigen(), &axes()}};
  return all;
}

}  // namespace mmlab
