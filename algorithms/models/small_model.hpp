// small's cost model (linear_fit.hpp): a lone block per SM waits on its copies, so the busiest SM's
// blocks and each block's k price it, plus the partial tiles summed through DSMEM. With b =
// ceil(blocks / SMs) (the busiest SM's blocks) and K = ceil(k / split) / 1e3 (a block's k):
//   f1 = b K                          the busiest SM's work
//   f2 = b BM BN / 1e6 where split > 1 (the partials summed through DSMEM), plus grid_z m n / SMs / 1e6
//        where grid_z > 1 (the groups' add)
//   f3 = K, doubled where k or n is not a multiple of 4 (a block's latency per k step: the 4-byte
//        copies' most)
// One fit per product (variant), block tile and thread tile, over the rows of every split
// (experiments/flagship-training.ini and the small-problem runs; docs/flagship-notes.md, round five).
// The grouped splits (32, 64: a second launch, which no term prices) are modelled from k = 8192 only:
// below it the model priced them too low (on the training shapes the picks were 0.928x cuBLAS with them
// at every k, 0.938x from 8192, 0.931x never).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

ModelTerms small_model(const Problem& p, const Params& q, const LaunchConfig& launch, const DeviceInfo& d);

}  // namespace mmlab
