// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"


namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.08-0.14 over 28 problems, max 0.26-0.46
  {"default", "width=128", "gemv", 0.0111076, 0.000368513, 2.67145e-06, 0.00695268},
  {"default", "width=256", "gemv", 0.00996244, 0.000381582, 7.23833e-06, 0.00468639},
  {"default", "width=512", "gemv", 0.0103373, 0.000332863, 1.90303e-05, 0.00505027},
  {"default", "width=1024", "gemv", 0.0125604, 0.000274625, 2.14074e-05, 0.0058506},
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
