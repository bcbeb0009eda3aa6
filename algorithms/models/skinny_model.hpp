// skinny's cost model (linear_fit.hpp), one fit for its rows kernel (m <= 64: B streamed, A staged)
// and one for its cols kernel (n <= 64 < m: A streamed, B staged); `side` is the small side rounded up
// to the kernel's capacity (a multiple of 8), `big` the other:
//   f1 = 4 k big / 1e6                     MB of the large operand streamed
//   f2 = 2 side big k / 1e9                GFLOP at the kernel's capacity
//   f3 = grid_x side k / 1e6               elements of the small operand the blocks stage in shared
//                                          memory (M): every block stages its k range
// Fitted on experiments/flagship-skinny.ini (docs/flagship-notes.md, round three); the staged variant's
// rows kernel is the default's and is not priced apart.
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

// `blocks`: the launch's grid_x.
ModelTerms skinny_model(const Problem& p, const Params& q, long blocks);

}  // namespace mmlab
