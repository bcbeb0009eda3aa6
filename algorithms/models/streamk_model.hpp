// streamk's cost model (linear_fit.hpp): the persistent grid's blocks each run their share of the
// k iterations (whole data-parallel tiles first, in the hybrid variant), then a tile's owner adds its
// helpers' partial tiles one after another:
//   f1 = dp / P iters + ceil((tiles - dp) iters / P)   k iterations of a block (P: the grid's blocks,
//        dp: the tiles run data-parallel, as the launcher's schedule decides them)
//   f2 = m k / 1e6                                    A's elements transposed (M)
//   f3 = (parts - 1) 4 BM BN / 1e6                    MB of partial tiles an owner adds, parts =
//        min(iters, ceil(P / stream-K tiles))
// Fitted for the configurations the flagship prices (experiments/flagship-training.ini;
// docs/flagship-notes.md, round three).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

// `dp` and `blocks`: the schedule's data-parallel tiles and grid (algorithms/streamk.cu, plan).
ModelTerms streamk_model(const Problem& p, const Params& q, long dp, long blocks);

}  // namespace mmlab
