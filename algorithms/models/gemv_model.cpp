// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"


namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.04-0.10 over 28 problems, max 0.24-0.53
  {"default", "width=128", "gemv", 0.00878538, 0.000325223, 2.22354e-05, 0.00765903},
  {"default", "width=256", "gemv", 0.00787367, 0.00034723, 1.43918e-05, 0.0077949},
  {"default", "width=512", "gemv", 0.0080201, 0.000320957, 2.07171e-05, 0.0073787},
  {"default", "width=1024", "gemv", 0.00964591, 0.000275132, 1.7177e-05, 0.0113978},
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
