// deep_k's cost model (deep_k_model.hpp).
#include "algorithms/models/deep_k_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // not fitted yet
  {"manual", "tile=64x64;warp=64x32", "", 0, 0, 0, 0},
  {"manual", "tile=128x64;warp=64x32", "", 0, 0, 0, 0},
  {"manual", "tile=128x128;warp=64x32", "", 0, 0, 0, 0},
  {"manual", "tile=64x128;warp=64x64", "", 0, 0, 0, 0},
  {"manual", "tile=128x128;warp=64x64", "", 0, 0, 0, 0},
  {"manual", "tile=64x64;warp=32x64", "", 0, 0, 0, 0},
  {"manual", "tile=128x64;warp=32x64", "", 0, 0, 0, 0},
  {"manual", "tile=64x128;warp=32x64", "", 0, 0, 0, 0},
  {"manual", "tile=128x128;warp=32x64", "", 0, 0, 0, 0},
  {"manual", "tile=128x128;warp=32x128", "", 0, 0, 0, 0},
};
// clang-format on
}  // namespace

ModelTerms deep_k_model(const Problem& p, const Params& q, long split, long blocks, const DeviceInfo& d) {
  const double m = double(p.m), n = double(p.n), k = double(p.k), s = double(split);
  const Shape2 tile = q.shape("tile");
  const double per_block = std::ceil(k / s) / 1e3, busiest = std::ceil(double(blocks) / model_sms(d));
  return {{busiest * per_block * double(tile.x * tile.y) / 1e6, split > 1 ? s * m * n / 1e6 : 0,
           per_block * (p.k % 4 || p.n % 4 ? 2 : 1)},
          fit_of(kFits, q)};
}

}  // namespace mmlab
