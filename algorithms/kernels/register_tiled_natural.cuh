// register_tiled's natural-A kernel (warp axis values 64x64 and 64x32): A read from shared memory as
// it is stored in memory, along k, so both operands go global -> shared by cp.async alone.
//
// Split: a block of (BM/64) x (BN/WN) warps computes a BM x BN tile of C; each warp a 64 x WN warp
// tile as 8 x 4 lanes; each thread 8 rows (wm + 8i + lane%8) by WN/4 columns (float4 quads at
// wn + 16q + 4(lane/8)). Per k step a thread does 8 x WN/4 FFMAs (128 for WN = 64). 8x16 thread
// tiles need ~255 registers (two warps per scheduler); 8x8 ones are held to 128 (four warps).
// Shared memory: STAGES buffers of [A tile (BM, BK) as stored in memory | B tile (BK, BN)], all
// filled by cp.async straight from global memory (no register staging, no transposing stores).
// A is read by 16-byte loads along k (one per row per four k steps), B by 16-byte loads along n;
// the float4s of each A row are XOR-swizzled by row so that the eight rows a warp reads at once
// fall on distinct banks. One barrier per k tile.
// Edges: rows past m and columns past n read clamped (valid) addresses and are never stored; the
// last k tile of a slice zero-fills what lies past its end. Every copy is 16 bytes: an operand
// whose rows are not 16-byte aligned (k % 4 != 0 for A, n % 4 != 0 for B) is first copied, padded
// to an aligned pitch, into the workspace. Any m, n, k.
// Included by register_tiled.cu only.
#pragma once

#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK, int kWN>
struct Tiling {
  static constexpr int kWM = 64, kTM = 8, kTN = kWN / 4;  // warp tile, thread tile (lanes 8 x 4)
  static constexpr int kThreads = 32 * (kBM / kWM) * (kBN / kWN);
  // Registers: 8x16 thread tiles get up to 255 (two warps per scheduler), 8x8 ones 128 (four).
  static constexpr int kMinBlocks = (kWN == 64 ? 256 : 512) / kThreads > 0
                                        ? (kWN == 64 ? 256 : 512) / kThreads
                                        : 1;
  static constexpr int kChunks = kBK / 4;           // float4s along k in a row of the A tile
  static constexpr int kRowsPerLine = 8 / kChunks;  // A rows that share one 32-bank line
  static constexpr int kStageA = kBM * kBK, kStage = kBM * kBK + kBK * kBN;  // floats
  static_assert(kBM % kWM == 0 && kBN % kWN == 0 && (kWN == 32 || kWN == 64), "whole warp tiles");
  static_assert(kBK == 8 || kBK == 16 || kBK == 32, "BK: 2, 4 or 8 float4s per A row");
  static_assert((kBM * kBK / 4) % kThreads == 0 && (kBK * kBN / 4) % kThreads == 0,
                "every thread copies the same number of float4s");
  // Physical float4 slot of float4 `g` of A row `r`: rows that share a bank slot get distinct slots.
  __device__ static int slot(int r, int g) { return g ^ ((r / kRowsPerLine) % kChunks); }
};

// C (m x n, row pitch ldc) = A (m x k, pitch lda) * B (k x n, pitch ldb). With kVec, lda, ldb and
// k are multiples of 4 and the pointers 16-byte aligned (register_tiled pads operands that are not),
// so every copy is 16 bytes, and columns of B are clamped to ldb - 4, in bounds for B's pitch; without
// it (deep_k.cu, any alignment) every copy is 4 bytes, each element zero-filled past k_end on its own
// and, past m and n, zero-filled rather than clamped. kSlices (deep_k.cu): block z stores its k
// slice's partial tile into slice z of C (m x ldc each) instead of C itself; the slices are added after.
template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kAccumulate, bool kSlices = false, bool kVec = true>
__global__ void __launch_bounds__(Tiling<kBM, kBN, kBK, kWN>::kThreads,
                                  Tiling<kBM, kBN, kBK, kWN>::kMinBlocks)
    register_tiled_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                          float* __restrict__ c, int ldc, int m, int n, int k, int k_per_split,
                          bool accumulate) {
  using T = Tiling<kBM, kBN, kBK, kWN>;
  extern __shared__ __align__(16) float smem[];
  const unsigned smem_u32 = unsigned(__cvta_generic_to_shared(smem));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;

  // Copies of one k tile into stage `stage`. Rows past m and columns past the pitch of B are
  // clamped to valid ones; `tail` (the slice's last, partial tile) zero-fills k past k_end.
  const float* a_tile = a + k_begin;
  const float* b_tile = b + long(k_begin) * ldb;
  auto issue = [&](int t, int stage, bool tail) {
    const int k0 = k_begin + t * kBK;
    const float* at = a_tile + t * kBK;
    const float* bt = b_tile + long(t) * kBK * ldb;
    const unsigned as = smem_u32 + 4u * unsigned(stage * T::kStage), bs = as + 4u * T::kStageA;
    if constexpr (kVec) {
#pragma unroll
      for (int f = 0; f < kBM * kBK / 4 / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, r = e / T::kChunks, g = e % T::kChunks;
        const float* src = at + min(row0 + r, m - 1) * lda + 4 * g;
        const bool ok = !tail || k0 + 4 * g < k_end;
        copy16(as + 4u * unsigned(r * kBK + 4 * T::slot(r, g)), ok ? src : a, ok);
      }
#pragma unroll
      for (int f = 0; f < kBK * kBN / 4 / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, p = e / (kBN / 4), q = 4 * (e % (kBN / 4));
        const float* src = bt + p * ldb + min(col0 + q, ldb - 4);
        const bool ok = !tail || k0 + p < k_end;
        copy16(bs + 4u * unsigned(p * kBN + q), ok ? src : b, ok);
      }
    } else {  // element by element: a thread copies one column kk of rows ra + f kARows of A and
              // columns qb + j kBWide of k rows pb + f kBRows of B (consecutive threads: consecutive
              // addresses), each pointer stepped from the last (precomputed addresses spilled)
      constexpr int kARows = T::kThreads / kBK;  // A: rows a pass covers
      constexpr int kBWide = kBN < T::kThreads ? kBN : T::kThreads;  // B: threads along a row
      constexpr int kBRows = T::kThreads / kBWide, kBPer = kBN / kBWide;  // rows a pass covers, copies along one
      static_assert(T::kThreads % kBK == 0 && T::kThreads % kBWide == 0 && kBN % kBWide == 0, "whole rows per pass");
      const int kk = tid % kBK, ra = tid / kBK, qb = tid % kBWide, pb = tid / kBWide;
      const bool a_in = !tail || k0 + kk < k_end;
      const float* src = at + long(row0 + ra) * lda + kk;
#pragma unroll
      for (int f = 0; f < kBM * kBK / T::kThreads; ++f, src += long(kARows) * lda) {
        const int r = ra + f * kARows;
        const bool ok = a_in && row0 + r < m;
        copy4(as + 4u * unsigned(r * kBK + 4 * T::slot(r, kk / 4) + kk % 4), ok ? src : a, ok);
      }
      src = bt + long(pb) * ldb + col0 + qb;
#pragma unroll
      for (int f = 0; f < kBK / kBRows; ++f, src += long(kBRows) * ldb) {
        const int p = pb + f * kBRows;
#pragma unroll
        for (int j = 0; j < kBPer; ++j) {
          const bool ok = col0 + qb + j * kBWide < n && (!tail || k0 + p < k_end);
          copy4(bs + 4u * unsigned(p * kBN + qb + j * kBWide), ok ? src + j * kBWide : b, ok);
        }
      }
    }
  };
  auto is_tail = [&](int t) { return k_begin + (t + 1) * kBK > k_end; };

  // This thread's fragments: A rows wm + lm + 8i (one swizzle for all eight), B columns wn + 4 ln + 16q.
  const int wm = (warp % (kBM / T::kWM)) * T::kWM, wn = (warp / (kBM / T::kWM)) * kWN;
  const int lm = lane % 8, ln = lane / 8;
  const int a_frag = (wm + lm) * kBK, b_frag = T::kStageA + wn + 4 * ln;
  const int swizzle = ((wm + lm) / T::kRowsPerLine) % T::kChunks;

  float acc[T::kTM][T::kTN] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) issue(s, s, is_tail(s));
    commit();  // one group per tile, empty past the end, so the counting below stays uniform
  }
  int read = 0, write = kStages - 1;
  for (int t = 0; t < tiles; ++t) {
    wait_for<kStages - 2>();  // tile t has landed for this thread ...
    __syncthreads();          // ... and for all; everyone is done with the stage written next
    const int next = t + kStages - 1;
    if (next < tiles) issue(next, write, is_tail(next));
    commit();
    write = write + 1 == kStages ? 0 : write + 1;

    const float* as = smem + read * T::kStage + a_frag;
    const float* bs = smem + read * T::kStage + b_frag;
    read = read + 1 == kStages ? 0 : read + 1;
#pragma unroll
    for (int g = 0; g < T::kChunks; ++g) {
      float4 av[T::kTM];  // rows i, k steps 4g .. 4g + 3
#pragma unroll
      for (int i = 0; i < T::kTM; ++i)
        av[i] = *reinterpret_cast<const float4*>(as + i * 8 * kBK + 4 * (g ^ swizzle));
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        float bv[T::kTN];
#pragma unroll
        for (int q = 0; q < T::kTN / 4; ++q) {
          const float4 v = *reinterpret_cast<const float4*>(bs + (4 * g + s) * kBN + 16 * q);
          bv[4 * q] = v.x, bv[4 * q + 1] = v.y, bv[4 * q + 2] = v.z, bv[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < T::kTM; ++i) {
          const float x = s == 0 ? av[i].x : s == 1 ? av[i].y : s == 2 ? av[i].z : av[i].w;
#pragma unroll
          for (int j = 0; j < T::kTN; ++j) acc[i][j] = fmaf(x, bv[j], acc[i][j]);
        }
      }
    }
  }
  wait_for<0>();  // no copy may still target shared memory when the block exits
  if constexpr (kSlices) c += long(blockIdx.z) * m * ldc;  // this k slice's partial C

  // How the accumulators leave shapes how the compiler allocates them all along: float4 stores
  // keep each quad in four aligned registers, the register banks of the B quad they meet in every
  // FFMA. For 8x8 tiles, scalar stores cut the resulting bank conflicts (dispatch stalls) and win;
  // for 8x16 tiles float4 stores measured faster (docs/flagship-notes.md, step 6). Split-k kernels
  // (kAccumulate) add into C with float4 atomics, four times fewer than scalar ones. The runtime
  // `accumulate` test stays in the scalar path: without it ptxas allocated differently and the
  // conflicts came back (44% -> 64% of FFMAs), a compiler heuristic this code has to live with.
  if constexpr (kWN == 32 && !kAccumulate) {
#pragma unroll
    for (int i = 0; i < T::kTM; ++i) {
      const int row = row0 + wm + lm + 8 * i;
      if (row >= m) continue;
#pragma unroll
      for (int q = 0; q < T::kTN / 4; ++q) {
        const int col = col0 + wn + 4 * ln + 16 * q;
        float* dst = c + long(row) * ldc + col;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j >= n) continue;
          if (accumulate)
            atomicAdd(dst + j, acc[i][4 * q + j]);
          else
            dst[j] = acc[i][4 * q + j];
        }
      }
    }
    return;
  }
  const bool vec_c = (ldc & 3) == 0;
#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const int row = row0 + wm + lm + 8 * i;
    if (row >= m) continue;
#pragma unroll
    for (int q = 0; q < T::kTN / 4; ++q) {
      const int col = col0 + wn + 4 * ln + 16 * q;
      float* dst = c + long(row) * ldc + col;
      const float* v = &acc[i][4 * q];
      const bool whole = vec_c && col + 3 < n;
      if (accumulate) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (whole) {
          atomicAdd(reinterpret_cast<float4*>(dst), make_float4(v[0], v[1], v[2], v[3]));
          continue;
        }
#endif
        for (int j = 0; j < 4; ++j)
          if (col + j < n) atomicAdd(dst + j, v[j]);
      } else if (whole) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
        for (int j = 0; j < 4; ++j)
          if (col + j < n) dst[j] = v[j];
      }
    }
  }
}

}  // namespace
}  // namespace mmlab
