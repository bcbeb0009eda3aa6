// skinny's cost model (skinny_model.hpp).
#include "algorithms/models/skinny_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kRowsFits = {
  {"default", "", "rows", 0.0140671, 0, 0, 0.0126934},
};
const LinearFits kColsFits = {
  {"default", "", "cols", 0.0117629, 0.000327196, 0.0237552, 0.00226196},
  {"staged", "", "cols", 0.0122677, 0, 0.0526431, 0.00208772},
};
// clang-format on
}  // namespace

ModelTerms skinny_model(const Problem& p, const Params& q, long blocks) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const bool rows = p.m <= 64;
  const double side = rows ? std::ceil(m / 8) * 8 : std::ceil(n / 8) * 8;  // its capacity
  return {{4 * (rows ? k * n : m * k) / 1e6, 2 * side * (rows ? n : m) * k / 1e9, double(blocks) * side * k / 1e6},
          fit_of(rows ? kRowsFits : kColsFits, q)};
}

}  // namespace mmlab
