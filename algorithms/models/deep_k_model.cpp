// deep_k's cost model (deep_k_model.hpp).
#include "algorithms/models/deep_k_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.022-0.111, max 0.108-0.330 over 48 rows each
  {"manual", "tile=64x64;warp=64x32", "", 0, 4.57233, 0.0134127, 0.0718096},
  {"manual", "tile=128x64;warp=64x32", "", 0.00489149, 5.45518, 0.00816377, 0.0446636},
  {"manual", "tile=128x128;warp=64x32", "", 0.00575601, 6.20503, 0.00771316, 0.0198427},
  {"manual", "tile=64x128;warp=64x64", "", 0.0122195, 4.20656, 0.00619228, 0.0793419},
  {"manual", "tile=128x128;warp=64x64", "", 0.0150667, 4.78662, 0.00432576, 0.0409933},
  {"manual", "tile=64x64;warp=32x64", "", 0.000319861, 5.18005, 0.0109229, 0.0688749},
  {"manual", "tile=128x64;warp=32x64", "", 0.00704468, 6.71065, 0.00468204, 0.0171978},
  {"manual", "tile=64x128;warp=32x64", "", 0.0114227, 6.38736, 0.00348081, 0.00766611},
  {"manual", "tile=128x128;warp=32x64", "", 0.00607826, 6.07062, 0.00633766, 0.0110377},
  {"manual", "tile=128x128;warp=32x128", "", 0.01507, 3.86683, 0.00471157, 0.0565747},
};
// clang-format on
}  // namespace

ModelTerms deep_k_model(const Problem& p, const Params& q, long split, long blocks, const DeviceInfo& d) {
  const double m = double(p.m), n = double(p.n), k = double(p.k), s = double(split);
  const Shape2 tile = q.shape("tile");
  const double per_block = std::ceil(k / s) / 1e3, busiest = std::ceil(double(blocks) / model_sms(d));
  return {{busiest * per_block * double(tile.x * tile.y) / 1e6, split > 1 ? s * m * n / 1e6 : 0,
           per_block * (p.k % 4 || p.n % 4 ? 2 : 1)},
          split > 1 ? fit_of(kFits, q) : nullptr};
}

}  // namespace mmlab
