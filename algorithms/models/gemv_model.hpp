// gemv's cost model (linear_fit.hpp): the large operand streamed once from DRAM by as many blocks as
// the division gives (about three per SM at most); `side` is the small side (m for rows, n for cols)
// rounded up to the kernel's capacity (1, 2 or 4), `split` the cluster's blocks along k:
//   f1 = 4 (k n + m k + m n) / 1e6 / min(1, blocks / (3 SMs))   MB moved, scaled up where too few
//                                                              blocks stream to keep DRAM busy
//   f2 = 2 side big k / 1e9                                    GFLOP at the kernel's capacity
//   f3 = side big split / 1e6                                  M partial sums added through DSMEM
// Its first coefficients are set by hand, not fitted: the H100's 3.35 TB/s DRAM bound at 85%, its FP32
// peak at half and a 4 us launch (the dispatchers time what the models rank first anyway).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

// How gemv cuts the problem: its side (rows: m small, else cols), the capacity of the small side,
// its blocks (grid x y) and its split (grid x).
struct GemvCut {
  bool rows;
  int side;
  long blocks, split;
};
// `sms`: model_sms of the device.
ModelTerms gemv_model(const Problem& p, const Params& q, const GemvCut& cut, double sms);

}  // namespace mmlab
