// Split-k, the one rule of register_tiled, tma_tiled and tf32x3 (and of register_tiled's cost model):
// k is divided over blockIdx.z in whole k tiles of `depth`. Its launch side: launch/split_k.hpp.
#pragma once

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

}  // namespace mmlab
