// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"


namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.08-0.14 over 19 problems, max 0.69-0.82
  {"default", "width=128", "gemv", 0.0086075, 0.000302045, 7.40346e-05, 0.142969},
  {"default", "width=256", "gemv", 0.00995485, 0.000327383, 1.69037e-05, 0.1511},
  {"default", "width=512", "gemv", 0.0113381, 0.000356398, 1.21485e-05, 0.0290464},
  {"default", "width=1024", "gemv", 0.0129653, 0.000320805, 1.47724e-05, 0.00716319},
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
