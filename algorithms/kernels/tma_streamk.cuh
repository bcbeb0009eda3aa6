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
// `a_map`: A^T (k x m), boxes (BK, BM); with kKMajor, A as stored (m x k), boxes (BM, 32) with the
// 128-byte swizzle (Quads::product_k_major), and the stages from a 1024-byte boundary (one more KiB
// of dynamic shared memory).
template <int kBM, int kBN, int kBK, int kStages, int kQN, bool kKMajor = false>
__global__ void __launch_bounds__(Quads<kBM, kBN, kBK, kQN, 0>::kThreads,
                                  Quads<kBM, kBN, kBK, kQN, 0>::kMinBlocks)
    tma_streamk_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                       float* __restrict__ c, int ldc, int m, int n, StreamKWork work,
                       float* __restrict__ partial, unsigned* __restrict__ flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Quads<kBM, kBN, kBK, kQN, 0>;         // A's tile as TMA writes it: (BK, BM), no pad
  constexpr int kElements = 8 * 4 * kQN;          // accumulators per thread
  extern __shared__ __align__(128) float smem_raw[];  // kStages x [A^T (BK, BM), B (BK, BN)], then the barriers
  float* smem = smem_raw;
  if constexpr (kKMajor)  // the swizzle's pattern repeats every 1024 bytes: TMA wants the box there
    smem = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(smem + kStages * S::kStage);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(&landed[s], 1);
    mbarrier_init_fence();
  }
  // The block's k tiles as one sequence, g = 0 ... total - 1: its data-parallel tiles' (cta, cta +
  // ctas, ...; iters each), then its stream-K iterations [begin(cta), begin(cta + 1)). k tile g sits
  // in stage g % kStages. The loads run kStages - 1 tiles ahead along the sequence, across segment
  // boundaries, so the next segment's first tiles are in flight while a segment's epilogue (its
  // stores, or its partial's hand-off and the owner's adds) runs: the persistent loop's counterpart
  // of the co-resident blocks a data-parallel grid overlaps its epilogues with.
  const int cta = blockIdx.x;
  const long long dp_own = cta < work.dp_tiles ? (work.dp_tiles - 1 - cta) / work.ctas + 1 : 0;
  const long long dp_iters = dp_own * work.iters, sk_begin = work.begin(cta);
  const long long total = dp_iters + work.begin(cta + 1) - sk_begin;
  auto stage = [&](int g) { return smem + (g % kStages) * S::kStage; };
  // Thread 0's cursor along the sequence, in shared memory (registers live across the k loop spilled
  // the k-major product at 128): the output tile and k tile of the next load, and the loads issued,
  // stepped by one per load (no division in the k loop: a 64-bit one per k tile cost the block ~5%).
  __shared__ int cursor[3];  // next tile, next k tile, loads issued
  auto issue = [&] {         // thread 0: the next k tile's TMA loads into its stage
    int tile = cursor[0], kt = cursor[1];
    const int g = cursor[2]++;
    std::uint64_t* bar = &landed[g % kStages];
    mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
    const int row0 = (tile / work.tiles_n) * kBM, col0 = (tile % work.tiles_n) * kBN;
    if constexpr (kKMajor) tma_load_2d(stage(g), a_map, kt * kBK, row0, bar);
    else tma_load_2d(stage(g), a_map, row0, kt * kBK, bar);
    tma_load_2d(stage(g) + S::kTileA, b_map, col0, kt * kBK, bar);
    if (++kt == work.iters) {
      kt = 0;
      if (g + 1 < dp_iters) tile += work.ctas;  // the next data-parallel tile
      else if (g + 1 == dp_iters) tile = work.dp_tiles + int(sk_begin / work.iters), kt = int(sk_begin % work.iters);
      else ++tile;  // stream-K: the iterations run on into the next tile
    }
    cursor[0] = tile, cursor[1] = kt;
  };
  if (threadIdx.x == 0) {
    cursor[0] = cta, cursor[1] = 0, cursor[2] = 0;
    if (dp_own == 0) cursor[0] = work.dp_tiles + int(sk_begin / work.iters), cursor[1] = int(sk_begin % work.iters);
  }
  __syncthreads();  // the barriers are set
  if (threadIdx.x == 0)
    for (int j = 0; j < kStages - 1 && j < total; ++j) issue();
  int g = 0;  // the next k tile to consume

  // acc += the product over k tiles [kb, ke) of the segment's output tile (the next ke - kb of the
  // block's sequence), through the stages.
  auto segment = [&](int kb, int ke, typename S::Acc& acc) {
    for (int j = kb; j < ke; ++j, ++g) {
      mbarrier_wait_cta(&landed[g % kStages], unsigned(g / kStages) & 1u);
      __syncthreads();  // every thread is done with tile g - 1: its stage may be overwritten
      if (threadIdx.x == 0 && g + kStages - 1 < total) issue();  // k tile g + kStages - 1
      if constexpr (kKMajor) S::product_k_major(stage(g), stage(g) + S::kTileA, acc);
      else S::product(stage(g), stage(g) + S::kTileA, acc);
    }
  };
  auto store = [&](const typename S::Acc& acc, int tile) {
    S::store(acc, c, ldc, (tile / work.tiles_n) * kBM, (tile % work.tiles_n) * kBN, m, n);
  };
  // Slot `cta`'s element e of this thread: consecutive threads, consecutive addresses.
  auto slot = [&](int cta, int e) {
    return partial + (long(cta) * kElements + e) * S::kThreads + threadIdx.x;
  };

  for (int tile = cta; tile < work.dp_tiles; tile += work.ctas) {  // data-parallel: whole tiles
    typename S::Acc acc = {};
    segment(0, work.iters, acc);
    store(acc, tile);
  }
  const long long end = work.begin(cta + 1);
  for (long long i = work.begin(cta); i < end;) {  // stream-K: this block's share of the iterations
    const int t = int(i / work.iters), kb = int(i % work.iters);
    const int ke = int(min((long long)work.iters, kb + (end - i)));
    const long long tile_end = (long long)(t + 1) * work.iters;
    typename S::Acc acc = {};
    segment(kb, ke, acc);
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
