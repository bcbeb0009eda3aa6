// gemv's cost model (gemv_model.hpp).
#include "algorithms/models/gemv_model.hpp"

#include <algorithm>
#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"default", "", "gemv", 0.004, 0.000351, 0.0299, 0},
};
// clang-format on
}  // namespace

ModelTerms gemv_model(const Problem& p, const Params& q, long blocks, double sms) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  double rows = 1;
  while (rows < m) rows *= 2;
  const double tiles = std::max(1.0, std::ceil(n / 128)), split = double(blocks) / tiles;
  const double busy = std::min(1.0, double(blocks) / (3 * sms));
  return {{4 * (k * n + m * k + m * n) / 1e6 / busy, 2 * rows * n * k / 1e9, rows * n * split / 1e6}, fit_of(kFits, q)};
}

}  // namespace mmlab
