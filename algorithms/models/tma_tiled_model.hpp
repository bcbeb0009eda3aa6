// tma_tiled's cost model (linear_fit.hpp): its data-parallel TMA kernel as waves of one block per SM
// (the 128 x 256 tile holds one), each block's k tiles one after another, plus the pass that
// transposes A for the TMA loads:
//   f1 = ceil(tiles / SMs) ceil(k / depth)   the busiest SM's k tiles
//   f2 = m k / 1e6                           A's elements transposed (M)
// Fitted for the configuration the flagship prices (experiments/flagship-training.ini;
// docs/flagship-notes.md, round three).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

ModelTerms tma_tiled_model(const Problem& p, const Params& q, const DeviceInfo& d);

}  // namespace mmlab
