// tf32x3's cost model (linear_fit.hpp), for its two FP32-accurate tensor-core paths: half3 (a split
// pass, then FP16 products) and wgmma3 (the split inside the k loop):
//   f1 = 2 128 128 (k / grid_z) ceil(blocks / SMs) SMs / 1e9   GFLOP of the busiest SM's 128 x 128
//        blocks, times the SMs (waves)
//   f2 = (m k + k n) / 1e6                                    elements of A and B the split pass reads (M)
//   f3 = the elements of A (k % 4 != 0) and B (n % 4 != 0) whose rows are off 16 bytes (M): wgmma3
//        copies them padded first, half3's split pass writes them aligned anyway
// Fitted for the configurations the flagship prices (experiments/flagship-training.ini;
// docs/flagship-notes.md, round five), half3 at every split its `auto` resolves to.
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

ModelTerms tf32x3_model(const Problem& p, const Params& q, const LaunchConfig& launch, const DeviceInfo& d);

}  // namespace mmlab
