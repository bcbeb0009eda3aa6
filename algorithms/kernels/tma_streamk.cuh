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
  // The block's work as segments, in order: its data-parallel tiles (cta, cta + ctas, ...; all k),
  // then its stream-K iterations [begin(cta), begin(cta + 1)) cut at tile boundaries. A segment's
  // k tiles pass through the stages as before (the loads kStages - 1 tiles ahead); when its last
  // product is done, thread 0 issues the next segment's first kStages - 1 loads before the epilogue
  // (its stores, or the partial's hand-off and the owner's adds), so they land meanwhile: the
  // persistent loop's counterpart of the co-resident blocks a data-parallel grid overlaps its
  // epilogues with. The next segment is found once per segment; the k loop's loads keep their
  // per-segment coordinates (a cursor stepped per load, in the loop, cost up to 20% at 128x256).
  const int cta = blockIdx.x;
  const long long end = work.begin(cta + 1);
  struct Segment {
    int tile = -1, kb = 0, ke = 0;  // output tile (-1: none), k tiles [kb, ke)
  };
  auto stream_k_at = [&](long long i) {  // the stream-K segment that begins at iteration i
    Segment g;
    if (i >= end) return g;
    g.tile = work.dp_tiles + int(i / work.iters), g.kb = int(i % work.iters);
    g.ke = int(min((long long)work.iters, g.kb + (end - i)));
    return g;
  };
  auto after = [&](const Segment& g) {
    if (g.tile < work.dp_tiles) {
      Segment d;
      if (g.tile + work.ctas < work.dp_tiles) d.tile = g.tile + work.ctas, d.ke = work.iters;
      return d.tile >= 0 ? d : stream_k_at(work.begin(cta));
    }
    return stream_k_at((long long)(g.tile - work.dp_tiles) * work.iters + g.ke);
  };
  int done = 0;  // k tiles this block has consumed: tile j of a segment is stage (done + j - kb) % kStages
  auto stage = [&](int u) { return smem + (u % kStages) * S::kStage; };
  // Thread 0: k tile j of segment g into stage u.
  auto issue = [&](const Segment& g, int j, int u) {
    std::uint64_t* bar = &landed[u % kStages];
    const int row0 = (g.tile / work.tiles_n) * kBM, col0 = (g.tile % work.tiles_n) * kBN;
    fence_async_shared();  // the block's reads of the stage (generic proxy) before TMA's writes
    mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
    if constexpr (kKMajor) tma_load_2d(stage(u), a_map, j * kBK, row0, bar);
    else tma_load_2d(stage(u), a_map, row0, j * kBK, bar);
    tma_load_2d(stage(u) + S::kTileA, b_map, col0, j * kBK, bar);
  };
  auto prologue = [&](const Segment& g) {  // thread 0: the segment's first kStages - 1 loads
    for (int j = g.kb; j < g.kb + kStages - 1 && j < g.ke; ++j) issue(g, j, done + j - g.kb);
  };
  auto store = [&](const typename S::Acc& acc, int tile) {
    S::store(acc, c, ldc, (tile / work.tiles_n) * kBM, (tile % work.tiles_n) * kBN, m, n);
  };
  // Slot `cta`'s element e of this thread: consecutive threads, consecutive addresses.
  auto slot = [&](int cta, int e) {
    return partial + (long(cta) * kElements + e) * S::kThreads + threadIdx.x;
  };

  Segment g = cta < work.dp_tiles ? Segment{cta, 0, work.iters} : stream_k_at(work.begin(cta));
  __syncthreads();  // the barriers are set
  if (threadIdx.x == 0 && g.tile >= 0) prologue(g);
  while (g.tile >= 0) {
    typename S::Acc acc = {};
    const int row0 = (g.tile / work.tiles_n) * kBM, col0 = (g.tile % work.tiles_n) * kBN;
    for (int j = g.kb; j < g.ke; ++j) {
      const int u = done + j - g.kb;
      mbarrier_wait_cta(&landed[u % kStages], unsigned(u / kStages) & 1u);
      __syncthreads();  // every thread is done with tile j - 1: its stage may be overwritten
      if (threadIdx.x == 0 && j + kStages - 1 < g.ke) {
        const int v = u + kStages - 1;
        std::uint64_t* bar = &landed[v % kStages];
        fence_async_shared();  // the block's reads of tile j - 1's stage (generic proxy) before TMA's writes
        mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
        if constexpr (kKMajor) tma_load_2d(stage(v), a_map, (j + kStages - 1) * kBK, row0, bar);
        else tma_load_2d(stage(v), a_map, row0, (j + kStages - 1) * kBK, bar);
        tma_load_2d(stage(v) + S::kTileA, b_map, col0, (j + kStages - 1) * kBK, bar);
      }
      if constexpr (kKMajor) S::product_k_major(stage(u), stage(u) + S::kTileA, acc);
      else S::product(stage(u), stage(u) + S::kTileA, acc);
    }
    done += g.ke - g.kb;
    const Segment next = after(g);
    // The stages the prologue fills held tiles every thread is done with (each passed the barrier of
    // this segment's last k tile); the last tile's own stage is not among them.
    if (threadIdx.x == 0 && next.tile >= 0) prologue(next);
    if (g.tile < work.dp_tiles) {
      store(acc, g.tile);
    } else if (g.kb != 0) {  // a later part of the tile: hand the partial to the tile's owner
#pragma unroll
      for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int q = 0; q < 4 * kQN; ++q) *slot(cta, r * 4 * kQN + q) = acc[r][q];
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) store_release(&flags[cta], 1u);
    } else {  // the tile's owner: its own part, then each later block's, in block order
      const long long tile_end = (long long)(g.tile - work.dp_tiles + 1) * work.iters;
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
      store(acc, g.tile);
    }
    g = next;
  }
#endif
}

}  // namespace
}  // namespace mmlab
