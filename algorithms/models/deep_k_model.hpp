// deep_k's cost model (linear_fit.hpp): a wave of blocks, each one k slice of an output tile, then the
// slices added. With s the split, K = ceil(k / s) / 1e3 (a block's k, thousands) and b = ceil(blocks /
// SMs) (the busiest SM's blocks):
//   f1 = b K BM BN / 1e6        the busiest SM's multiply-adds (G): the product's throughput
//   f2 = s m n / 1e6 where s > 1 the slices' floats (M), written, read and added
//   f3 = K, doubled where k or n is not a multiple of 4 (a block's latency along k; 4-byte copies)
// One row per block and warp tile, fitted by scripts/fit-flagship on experiments/flagship-deep-k.ini
// (data/flagship/weak-classes/h100-7b6d1d5/deep-k-training.csv). Priced only where k is split (s > 1):
// the training shapes are all deep; an output that fills the device's slots is the data-parallel
// kernels' (register_tiled, tma_tiled).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

ModelTerms deep_k_model(const Problem& p, const Params& q, long split, long blocks, const DeviceInfo& d);

}  // namespace mmlab
