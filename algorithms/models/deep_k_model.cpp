// deep_k's cost model (deep_k_model.hpp).
#include "algorithms/models/deep_k_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {  // |relative error| median 0.029-0.110, max 0.117-0.424 over 48 rows each
  {"manual", "tile=64x64;warp=64x32", "", 0, 4.61227, 0.0136173, 0.0712858},
  {"manual", "tile=128x64;warp=64x32", "", 0.00468845, 5.52237, 0.00809005, 0.0447743},
  {"manual", "tile=128x128;warp=64x32", "", 0.00535928, 6.2766, 0.00769029, 0.0197435},
  {"manual", "tile=64x128;warp=64x64", "", 0.0121023, 4.30334, 0.00590854, 0.0792778},
  {"manual", "tile=128x128;warp=64x64", "", 0.0144491, 4.81997, 0.00444493, 0.0412755},
  {"manual", "tile=64x64;warp=32x64", "", 0.0134539, 6.90367, 0.00402504, 0.0231142},
  {"manual", "tile=128x64;warp=32x64", "", 0.00922615, 6.51885, 0.00385604, 0.0136664},
  {"manual", "tile=64x128;warp=32x64", "", 0.0129067, 6.00437, 0.00325863, 0.00790331},
  {"manual", "tile=128x128;warp=32x64", "", 0.00770768, 5.97171, 0.0055157, 0.00878283},
  {"manual", "tile=128x128;warp=32x128", "", 0.014108, 3.94755, 0.00431985, 0.0538097},
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
