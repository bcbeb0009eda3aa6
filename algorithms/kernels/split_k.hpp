// Split-k, the one rule of register_tiled, tma_tiled and tf32x3: k is divided over blockIdx.z in
// whole k tiles of `depth`, and each block adds its partial output tile into C atomically, so C is
// zeroed first and the order of the sum changes from run to run (a split result is not
// bit-reproducible).
#pragma once

#include <cuda_runtime.h>

#include "core/algorithm.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab {

struct SplitK {
  long tiles = 1;   // k tiles per block in z (the last block may have fewer)
  long blocks = 1;  // blocks in z: at most the split asked, fewer when k has fewer tiles
  long k_per_block(long depth) const { return tiles * depth; }
};

// k in `asked` (>= 1) parts of whole tiles of `depth`: ceil(ceil(k / depth) / asked) tiles each.
inline SplitK split_k(long k, long depth, long asked) {
  const long tiles = (k + depth - 1) / depth, per = (tiles + asked - 1) / asked;
  return {per, (tiles + per - 1) / per};
}

// C = 0 before a split launch (its blocks add into it).
inline void zero_for_split_k(const RunArgs& r) {
  MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * std::size_t(r.problem.m * r.problem.n), r.stream));
}

}  // namespace mmlab
