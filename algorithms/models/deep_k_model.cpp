// deep_k's cost model (deep_k_model.hpp).
#include "algorithms/models/deep_k_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.028-0.108, max 0.114-0.316 over 48 rows each
  {"manual", "tile=64x64;warp=64x32", "", 0, 4.54859, 0.0136677, 0.0716799},
  {"manual", "tile=128x64;warp=64x32", "", 0.00485068, 5.47545, 0.00813113, 0.0446833},
  {"manual", "tile=128x128;warp=64x32", "", 0.00534365, 6.26013, 0.00764032, 0.0195705},
  {"manual", "tile=64x128;warp=64x64", "", 0.0122507, 4.28775, 0.00605501, 0.0790632},
  {"manual", "tile=128x128;warp=64x64", "", 0.0142948, 4.76402, 0.0046015, 0.0416333},
  {"manual", "tile=64x64;warp=32x64", "", 0.0090874, 6.18484, 0.00657111, 0.0123799},
  {"manual", "tile=128x64;warp=32x64", "", 0.0084872, 6.00162, 0.00442766, 0.0114124},
  {"manual", "tile=64x128;warp=32x64", "", 0.0129035, 5.95304, 0.00333721, 0.00815722},
  {"manual", "tile=128x128;warp=32x64", "", 0.00754471, 5.94788, 0.00551487, 0.00889287},
  {"manual", "tile=128x128;warp=32x128", "", 0.0145923, 3.94048, 0.0042594, 0.0533083},
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
