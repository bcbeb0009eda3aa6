// streamk's cost model (streamk_model.hpp).
#include "algorithms/models/streamk_model.hpp"

#include <algorithm>
#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"pure", "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed", "", 0.0120506, 0.00574405, 0.00461014, 0.0191395},
  {"hybrid", "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed", "", 0.0120809, 0.00573152, 0.00465592, 0.0190592},
  {"pure", "tile=128x256;warp=32x128;depth=32;stages=3;a=transposed", "", 0.0183706, 0.00679292, 0.00165361, 0.0126796},
  {"hybrid", "tile=128x256;warp=32x128;depth=32;stages=3;a=transposed", "", 0.018834, 0.00650051, 0.00258731, 0.0125298},
  {"pure", "tile=64x64;warp=32x64;depth=32;stages=4;a=transposed", "", 0.0122844, 0.00300549, 0.00414029, 0.0580281},
};
// clang-format on
}  // namespace

ModelTerms streamk_model(const Problem& p, const Params& q, long dp_tiles, long grid) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const Shape2 tile = q.shape("tile");
  const double tiles = std::ceil(m / tile.x) * std::ceil(n / tile.y), iters = std::ceil(k / q.integer("depth"));
  const double blocks = double(grid), dp = double(dp_tiles), sk_tiles = tiles - dp;
  const double parts = sk_tiles > 0 ? std::min(iters, std::ceil(blocks / sk_tiles)) : 1;  // per tile
  return {{dp / blocks * iters + std::ceil(sk_tiles * iters / blocks), m * k / 1e6,
           (parts - 1) * 4 * tile.x * tile.y / 1e6},
          fit_of(kFits, q)};
}


}  // namespace mmlab
