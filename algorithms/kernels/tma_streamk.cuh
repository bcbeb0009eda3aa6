// Stream-K for the TMA-fed quads product (tma_tiled's `streamk` and `hybrid` variants): a persistent
// grid, every block resident, and the MAC-loop iterations (k tiles) of all output tiles divided
// evenly among the blocks, so the last wave is never part-empty (Osama, Merrill, Cecka, Garland and
// Owens, "Stream-K: Work-centric Parallel Decomposition for Dense Matrix Multiplication on the GPU",
// PPoPP 2023, sec. 4).
//
// The iterations are numbered tile-major (tile t's k tiles t * iters ... (t + 1) * iters - 1), and
// block c takes [c S / P, (c + 1) S / P) of the S stream-K iterations (P blocks). A block's range
// crosses tiles: a segment that covers a whole tile stores it; a segment that begins inside a tile
// (only a block's first segment can) writes its partial accumulators to the workspace, slot c, and
// raises its flag; the block whose segment begins the tile (its owner, the lowest-numbered block on
// it) adds the later blocks' partials in block order, then stores. The sum's order depends only on
// the decomposition, so C is bit-identical from run to run (deterministic), and no block waits on
// anything but the first segments of blocks after it, which never wait: with all blocks resident
// (the grid is at most what the device holds at once) there is no deadlock.
// `hybrid` ("DP + SK", sec. 5.2): the tiles of all but the last full wave run one per block in
// turn, data-parallel; the last full wave and the rest are split stream-K, each block at least one
// tile's worth.
#pragma once

#include <cstdint>

#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/ptx/tma.cuh"

namespace mmlab {
namespace {

// The work of one launch, decided on the host (tma_tiled.cu).
struct StreamKWork {
  int tiles_n;         // output tiles per row of tiles
  int iters;           // k tiles per output tile
  int dp_tiles;        // tiles 0 ... dp_tiles - 1: one block each, in turn (data-parallel)
  long long sk_iters;  // the k tiles of the remaining tiles, split evenly over the grid
  int ctas;            // the grid: every block resident at once
  __device__ long long begin(int cta) const { return (long long)cta * sk_iters / ctas; }
};

__device__ inline unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// `partial`: ctas x (BM x BN) floats, slot c written only by block c; `flags`: ctas words, zero at launch.
template <int kBM, int kBN, int kBK, int kStages, int kQN>
__global__ void __launch_bounds__(Quads<kBM, kBN, kBK, kQN, 0>::kThreads,
                                  Quads<kBM, kBN, kBK, kQN, 0>::kMinBlocks)
    tma_streamk_kernel(const __grid_constant__ CUtensorMap at_map, const __grid_constant__ CUtensorMap b_map,
                       float* __restrict__ c, int ldc, int m, int n, StreamKWork work,
                       float* __restrict__ partial, unsigned* __restrict__ flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Quads<kBM, kBN, kBK, kQN, 0>;         // A's tile as TMA writes it: (BK, BM), no pad
  constexpr int kElements = 8 * 4 * kQN;          // accumulators per thread
  extern __shared__ __align__(128) float smem[];  // kStages x [A^T (BK, BM), B (BK, BN)], then the barriers
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(smem + kStages * S::kStage);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(&landed[s], 1);
    mbarrier_init_fence();
  }
  int done = 0;  // k tiles this block has consumed: tile j of a segment is stage (done + j) % kStages
  auto stage = [&](int g) { return smem + (g % kStages) * S::kStage; };

  // acc += the product over k tiles [kb, ke) of output tile `tile`, through the stages.
  auto segment = [&](int tile, int kb, int ke, typename S::Acc& acc) {
    const int row0 = (tile / work.tiles_n) * kBM, col0 = (tile % work.tiles_n) * kBN, count = ke - kb;
    auto issue = [&](int j) {
      std::uint64_t* bar = &landed[(done + j) % kStages];
      mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
      tma_load_2d(stage(done + j), at_map, row0, (kb + j) * kBK, bar);
      tma_load_2d(stage(done + j) + S::kTileA, b_map, col0, (kb + j) * kBK, bar);
    };
    __syncthreads();  // every thread is done with the last segment's stages (and the barriers are set)
    if (threadIdx.x == 0)
      for (int j = 0; j < kStages - 1 && j < count; ++j) issue(j);
    for (int j = 0; j < count; ++j) {
      mbarrier_wait_cta(&landed[(done + j) % kStages], unsigned((done + j) / kStages) & 1u);
      __syncthreads();  // every thread is done with tile j - 1: its stage may be overwritten
      if (threadIdx.x == 0 && j + kStages - 1 < count) issue(j + kStages - 1);
      S::product(stage(done + j), stage(done + j) + S::kTileA, acc);
    }
    done += count;
  };
  auto store = [&](const typename S::Acc& acc, int tile) {
    S::store(acc, c, ldc, (tile / work.tiles_n) * kBM, (tile % work.tiles_n) * kBN, m, n);
  };
  // Slot `cta`'s element e of this thread: consecutive threads, consecutive addresses.
  auto slot = [&](int cta, int e) {
    return partial + (long(cta) * kElements + e) * S::kThreads + threadIdx.x;
  };

  const int cta = blockIdx.x;
  for (int tile = cta; tile < work.dp_tiles; tile += work.ctas) {  // data-parallel: whole tiles
    typename S::Acc acc = {};
    segment(tile, 0, work.iters, acc);
    store(acc, tile);
  }
  const long long end = work.begin(cta + 1);
  for (long long i = work.begin(cta); i < end;) {  // stream-K: this block's share of the iterations
    const int t = int(i / work.iters), kb = int(i % work.iters);
    const int ke = int(min((long long)work.iters, kb + (end - i)));
    const long long tile_end = (long long)(t + 1) * work.iters;
    typename S::Acc acc = {};
    segment(work.dp_tiles + t, kb, ke, acc);
    if (kb != 0) {  // a later part of the tile: hand the partial to the tile's owner
#pragma unroll
      for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int q = 0; q < 4 * kQN; ++q) *slot(cta, r * 4 * kQN + q) = acc[r][q];
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) store_release(&flags[cta], 1u);
    } else {  // the tile's owner: its own part, then each later block's, in block order
      for (int other = cta + 1; other < work.ctas && work.begin(other) < tile_end; ++other) {
        if (threadIdx.x == 0)
          while (load_acquire(&flags[other]) == 0) {
          }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
          for (int q = 0; q < 4 * kQN; ++q) acc[r][q] += __ldcg(slot(other, r * 4 * kQN + q));
      }
      store(acc, work.dp_tiles + t);
    }
    i += ke - kb;
  }
#endif
}

}  // namespace
}  // namespace mmlab
