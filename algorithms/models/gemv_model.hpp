// gemv's cost model (linear_fit.hpp): the large operand streamed once from DRAM by as many blocks as
// the division gives; `side` is the small side (m for rows, n = 1 for cols) rounded up to the
// kernel's capacity (1, 2, 4, 8 or 16):
//   f1 = 4 (k n + m k + m n) / 1e6          MB moved: the bandwidth's part
//   f2 = f1 / blocks x 1e3                  KB each block moves: the part of too few blocks in flight
//   f3 = 2 side big k / 1e9                 GFLOP at the kernel's capacity
// One row per `width` (a cols problem, where the width plays no part, is priced by each row alike).
// Fitted by scripts/fit-flagship on experiments/flagship-weak-classes.ini's GEMV-like and narrow
// problems and experiments/flagship-gemv-large.ini's in one file (data/flagship/weak-classes/
// h100-207f04a/: training.csv, large.csv).
#pragma once

#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

// How gemv cuts the problem: its side (rows: m small, else cols), the capacity of the small side and
// its blocks (grid x y).
struct GemvCut {
  bool rows;
  int side;
  long blocks;
};
ModelTerms gemv_model(const Problem& p, const Params& q, const GemvCut& cut);

}  // namespace mmlab
