// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"


namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"default", "width=128", "gemv", 0.004, 0.000351, 0, 0.0299},
  {"default", "width=256", "gemv", 0.004, 0.000351, 0, 0.0299},
  {"default", "width=512", "gemv", 0.004, 0.000351, 0, 0.0299},
  {"default", "width=1024", "gemv", 0.004, 0.000351, 0, 0.0299},
};
// clang-format on
}  // namespace

ModelTerms gemv_model(const Problem& p, const Params& q, const GemvCut& cut) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const double big = cut.rows ? n : m, side = cut.side;
  const double mb = 4 * (k * n + m * k + m * n) / 1e6;
  return {{mb, mb / double(cut.blocks) * 1e3, 2 * side * big * k / 1e9}, fit_of(kFits, q)};
}

}  // namespace mmlab
