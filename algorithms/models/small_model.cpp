// small's cost model (small_model.hpp).
#include "algorithms/models/small_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"default", "tile=64x64;thread=8x4", "", 0.00595743, 0.0287554, 0.229002, 0.00628394},
  {"default", "tile=32x64;thread=8x4", "", 0.00589546, 0.015011, 0.260568, 0.012564},
  {"default", "tile=32x64;thread=4x4", "", 0.00552771, 0.0163401, 0.263567, 0.00422917},
  {"default", "tile=32x32;thread=4x4", "", 0.00528391, 0.00949937, 0.38761, 0.00849971},
  {"tf32x3", "tile=64x64;thread=8x4", "", 0.00594887, 0.027224, 0.296859, 0.0155971},
  {"tf32x3", "tile=32x64;thread=8x4", "", 0.00581463, 0.0134332, 0.299509, 0.0166168},
  {"tf32x3", "tile=32x64;thread=4x4", "", 0.00590854, 0.0178691, 0.269955, 0.00351462},
  {"tf32x3", "tile=32x32;thread=4x4", "", 0.00541785, 0.00872469, 0.427753, 0.0114696},
};
// clang-format on
constexpr long kGroupedK = 8192;  // the grouped splits' model starts here (above)
}  // namespace

ModelTerms small_model(const Problem& p, const Params& q, const LaunchConfig& lc, const DeviceInfo& d) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const Shape2 tile = q.shape("tile");
  const double sms = model_sms(d), split = double(lc.cluster.x) * lc.grid.z;
  const double per_sm = std::ceil(double(lc.grid.x) * lc.grid.y * lc.grid.z / sms);  // the busiest SM's blocks
  const double per_block = std::ceil(k / split) / 1e3;                               // a block's k (K)
  const bool grouped = lc.grid.z > 1;  // split 32 or 64
  return {{per_sm * per_block,
           (split > 1 ? per_sm * tile.x * tile.y : 0) / 1e6 + (grouped ? lc.grid.z * m * n / sms / 1e6 : 0),
           per_block * (p.k % 4 || p.n % 4 ? 2 : 1)},
          grouped && p.k < kGroupedK ? nullptr : fit_of(kFits, q)};
}

}  // namespace mmlab
