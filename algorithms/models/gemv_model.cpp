// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"

#include <algorithm>
#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"default", "", "gemv", 0.004, 0.000351, 0.0299, 0},
  {"wide", "", "gemv", 0.004, 0.000351, 0.0299, 0},
};
// clang-format on
}  // namespace

ModelTerms gemv_model(const Problem& p, const Params& q, const GemvCut& cut, double sms) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const double big = cut.rows ? n : m, side = cut.side;
  const double busy = std::min(1.0, double(cut.blocks) / (3 * sms));
  return {{4 * (k * n + m * k + m * n) / 1e6 / busy, 2 * side * big * k / 1e9, side * big * double(cut.split) / 1e6},
          fit_of(kFits, q)};
}

}  // namespace mmlab
