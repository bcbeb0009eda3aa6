// gemv's cost model (linear_fit.hpp): B (and A) streamed once from DRAM by as many blocks as the
// division gives, at most about three per SM resident:
//   f1 = 4 (k n + m k + m n) / 1e6 / min(1, blocks / (3 SMs))   MB moved, scaled up where too few
//                                                              blocks stream to keep DRAM busy
//   f2 = 2 R n k / 1e9                                         GFLOP at the kernel's capacity R (m
//                                                              rounded up to 1, 2, 4, 8 or 16)
//   f3 = R n / 1e6 blocks_per_tile                              M partial sums added through DSMEM
// Fitted by scripts/fit-flagship on experiments/flagship-gemv.ini; the first coefficients are the
// H100's 3.35 TB/s DRAM bound at 85%, its FP32 peak at half and a 4 us launch.
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

// `blocks`: the launch's grid (x y); `sms`: model_sms of the device.
ModelTerms gemv_model(const Problem& p, const Params& q, long blocks, double sms);

}  // namespace mmlab
