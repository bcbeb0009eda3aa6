// register_tiled's second kernel (warp axis values 32x64 and 32x128): A transposed in shared
// memory, so that each k step of a thread is two 16-byte loads of A and kQN of B for 8 x 4kQN FFMAs.
//
// Split: a block of (BM/32) x (BN/(32 kQN)) warps; each warp a 32 x 32kQN warp tile as 4 x 8
// threads; each thread an 8 x 4kQN tile made of 2 x kQN quads of 4 x 4 outputs (rows tm + {0..3}
// and 16 + tm + {0..3} of the warp tile, columns 32q + tn + {0..3}). kQN = 2 (8x8, 128 registers,
// four warps per scheduler) or 4 (8x16, up to 255 registers, two). The A tile is stored transposed,
// (BK, BM + 4): a warp's A reads are 4 distinct float4s, its B reads 8 contiguous ones, and the +4
// pitch sends the transposing stores to distinct banks. A goes through registers (16-byte loads
// one tile ahead, transposing stores after the barrier); B by cp.async into STAGES buffers.
// Operands are 16-byte aligned with pitches lda, ldb
// (run() pads them); rows past m and columns past ldb are clamped, k past the slice zero-filled.
// The epilogue stores scalars: with float4 stores ptxas kept the accumulators in aligned quads,
// on the register banks of the B quads, and 65% of the FFMAs had a bank conflict; scalar stores
// bring that to about 24% (docs/flagship-notes.md, step 8).
// The struct's device functions are these steps, one each, for the cluster kernels (cluster_cannon.cu,
// cluster_dns.cu), which reuse the flagship's loads, product and k loop. The flagship kernel below keeps
// the same steps written inline: routed through the functions, ptxas allocated its registers
// differently and it measured 3-5% slower at 2048-8192 on the H100 (docs/cluster-notes.md, step 1).
#pragma once

#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

// kPadA: the pad of A's transposed rows (4 for the transposing stores below; 0 where TMA writes the
// tile whole, algorithms/tma_tiled.cu).
template <int kBM, int kBN, int kBK, int kQN, int kPadA = 4>
struct Quads {
  static constexpr int kWarpsM = kBM / 32, kThreads = kWarpsM * (kBN / (32 * kQN)) * 32;
  static constexpr int kMinBlocks = (kQN == 2 ? 512 : 256) / kThreads;  // 128 or 255 registers
  // deep_k's slices of 64-column tiles may take up to 168 registers a thread (the blocks an SM's 64K
  // registers hold at that many: 6 of 64x64, 3 of 128x64), where the 8x8 product kept to 128 (64x64's
  // unaligned-A instance spilled 36-140 bytes there). On an H100 over 14 deep-k shapes, the wave split
  // refilling the fewer slots, against cuBLAS (geometric means, two processes): 128x64 0.743 -> 0.798,
  // 64x64 0.697 -> 0.801 at half the blocks (ptxas: 143-181 registers); 64x128 0.815 -> 0.810, so not
  // there (data/flagship/weak-classes/h100-242db95/deep-low*.csv).
  static constexpr int kSliceRegisters = 168;
  static constexpr int min_blocks(bool slices) {
    return slices && kBN == 64 ? 65536 / (kSliceRegisters * kThreads) : kMinBlocks;
  }
  static constexpr int kPitchA = kBM + kPadA;
  static constexpr int kTileA = kBK * kPitchA, kTileB = kBK * kBN;  // floats of A's and B's tile
  static constexpr int kStage = kTileA + kTileB;                    // floats of one pipeline stage
  static constexpr int kLoadsA = kBM * kBK / 4 / kThreads;          // 16-byte loads of A per thread
  static constexpr int kCopiesB = kBK * kBN / 4 / kThreads;         // 16-byte copies of B per thread
  static_assert(kBM % 32 == 0 && kBN % 64 == 0 && kBK % 4 == 0, "whole warp tiles, whole float4s in k");
  static_assert(kLoadsA * 4 * kThreads == kBM * kBK && kCopiesB * 4 * kThreads == kBK * kBN,
                "every thread copies the same amount");
  using Acc = float[8][4 * kQN];  // (2 x 4 rows, kQN x 4 columns) of one thread

  // The pieces below are the flagship's, shared with the cluster kernels (cluster_cannon.cu,
  // cluster_dns.cu). A tile at k0: 16-byte loads into registers (row r, k offset p), zero past k_end.
  __device__ static void load_a(float4 (&ra)[kLoadsA], const float* __restrict__ a, int lda, int m, int row0,
                                int k0, int k_end) {
#pragma unroll
    for (int f = 0; f < kLoadsA; ++f) {
      const int e = threadIdx.x + f * kThreads, r = e / (kBK / 4), p = k0 + (e % (kBK / 4)) * 4;
      const float4* src = reinterpret_cast<const float4*>(a + min(row0 + r, m - 1) * lda + p);
      ra[f] = p < k_end ? __ldg(src) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  // ... stored transposed into the stage's A tile `as`.
  __device__ static void store_a(float* as, const float4 (&ra)[kLoadsA]) {
#pragma unroll
    for (int f = 0; f < kLoadsA; ++f) {
      const int e = threadIdx.x + f * kThreads, r = e / (kBK / 4), q = (e % (kBK / 4)) * 4;
      as[(q + 0) * kPitchA + r] = ra[f].x;
      as[(q + 1) * kPitchA + r] = ra[f].y;
      as[(q + 2) * kPitchA + r] = ra[f].z;
      as[(q + 3) * kPitchA + r] = ra[f].w;
    }
  }
  // B tile at k0: asynchronous 16-byte copies straight into the stage's B tile `bs`.
  __device__ static void issue_b(float* bs, const float* __restrict__ b, int ldb, int col0, int k0,
                                 int k_end) {
#pragma unroll
    for (int f = 0; f < kCopiesB; ++f) {
      const int e = threadIdx.x + f * kThreads, r = e / (kBN / 4), q = (e % (kBN / 4)) * 4;
      const bool ok = k0 + r < k_end;
      const unsigned dst = unsigned(__cvta_generic_to_shared(&bs[r * kBN + q]));
      copy16(dst, ok ? b + (k0 + r) * ldb + min(col0 + q, ldb - 4) : b, ok);
    }
  }
  // acc += this thread's part of (A tile `as`)^T-stored x (B tile `bs`): the kBK steps of 8 x 4kQN FFMAs.
  __device__ static void product(const float* as, const float* bs, Acc& acc) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = (warp % kWarpsM) * 32, wn = (warp / kWarpsM) * (32 * kQN);  // warp tile origin
    const int tm = (lane / 8) * 4, tn = (lane % 8) * 4;                        // thread quad origin
#pragma unroll
    for (int p = 0; p < kBK; ++p) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[p * kPitchA + wm + tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[p * kPitchA + wm + 16 + tm]);
      if constexpr (kQN == 2) {
        const float4 b0 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + tn]);
        const float4 b1 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 + tn]);
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      } else {
        float bv[4 * kQN];
#pragma unroll
        for (int q = 0; q < kQN; ++q) {
          const float4 v = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 * q + tn]);
          bv[4 * q] = v.x, bv[4 * q + 1] = v.y, bv[4 * q + 2] = v.z, bv[4 * q + 3] = v.w;
        }
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 4 * kQN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
  }
  // The same product with A's tile as stored, k-major: (BM, 32) rows of 128 bytes as TMA writes them
  // with the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)), so no transpose pass
  // precedes the kernel (streamk's a=k_major). Per two k a thread reads its 8 rows' two k with one
  // 8-byte load each, then runs the two k steps from registers (a whole 16-byte chunk per row, 32
  // registers, spilled at 8x8's 128); the sums are the same, in the same order, as product()'s.
  __device__ static void product_k_major(const float* as, const float* bs, Acc& acc) {
    static_assert(kBK == 32 && kPadA == 0, "rows of one 128-byte swizzle span, as TMA writes them");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = (warp % kWarpsM) * 32, wn = (warp / kWarpsM) * (32 * kQN);
    const int tm = (lane / 8) * 4, tn = (lane % 8) * 4;
    // Row r = wm + tm + i (+ 16) has r % 8 = sw + i % 4 with sw = tm % 8 (0 or 4), so chunk c lands at
    // cc ^ sw with cc = c ^ (i % 4): 4 cc + 4 sw floats in where cc < 4, 4 cc - 4 sw where not.
    const int sw = tm % 8;
    const float* up = as + (wm + tm) * kBK + 4 * sw;
    const float* down = as + (wm + tm) * kBK - 4 * sw;
#pragma unroll 1  // unrolled whole, ptxas hoisted the loads of later chunks and spilled at 128 registers
    for (int c = 0; c < kBK / 4; ++c) {
      const float* row[4];  // chunk c of rows i % 4 (immediate offsets: + 16 rows, + the k pair)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int cc = c ^ i;
        row[i] = (cc < 4 ? up : down) + i * kBK + 4 * cc;
      }
#pragma unroll
      for (int h = 0; h < 4; h += 2) {
        float2 av[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) av[i] = *reinterpret_cast<const float2*>(row[i % 4] + (i < 4 ? 0 : 16 * kBK) + h);
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int p = 4 * c + h + u;
          float bv[4 * kQN];
#pragma unroll
          for (int q = 0; q < kQN; ++q) {
            const float4 v = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 * q + tn]);
            bv[4 * q] = v.x, bv[4 * q + 1] = v.y, bv[4 * q + 2] = v.z, bv[4 * q + 3] = v.w;
          }
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const float x = u == 0 ? av[i].x : av[i].y;
#pragma unroll
            for (int j = 0; j < 4 * kQN; ++j) acc[i][j] = fmaf(x, bv[j], acc[i][j]);
          }
        }
      }
    }
  }
  // Row and column, within the block tile, of this thread's accumulator (i, j).
  __device__ static int row_of(int i) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    return (warp % kWarpsM) * 32 + (i < 4 ? (lane / 8) * 4 + i : 16 + (lane / 8) * 4 + i - 4);
  }
  __device__ static int col_of(int j) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tn = (lane % 8) * 4;
    return (warp / kWarpsM) * (32 * kQN) +
           (kQN == 2 ? (j < 4 ? tn + j : 32 + tn + j - 4) : 32 * (j / 4) + tn + j % 4);
  }
  // The epilogue of the block tile at (row0, col0): this thread's accumulators into C (m x n, pitch
  // ldc), rows >= m and columns >= n left alone; added atomically where `accumulate` (split-k).
  // Scalar stores: see the file's header.
  template <class Pitch>  // int or long, as the kernel holds it: the index arithmetic follows its type
  __device__ __forceinline__ static void store(const Acc& acc, float* c, Pitch ldc, int row0, int col0, int m,
                                               int n, bool accumulate = false) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int row = row0 + row_of(i);
      if (row >= m) continue;
#pragma unroll
      for (int j = 0; j < 4 * kQN; ++j) {
        const int col = col0 + col_of(j);
        if (col >= n) continue;
        if (accumulate)
          atomicAdd(c + long(row) * ldc + col, acc[i][j]);
        else
          c[long(row) * ldc + col] = acc[i][j];
      }
    }
  }

  // The whole k loop of one block over [k_begin, k_end): acc += A (rows row0 ...) x B (columns col0
  // ...), through kStages shared-memory stages at `smem`. A goes through registers (loaded one tile
  // ahead, stored transposed after the barrier), B by cp.async.
  template <int kStages>
  __device__ static void mainloop(float* smem, const float* __restrict__ a, int lda,
                                  const float* __restrict__ b, int ldb, int m, int row0, int col0,
                                  int k_begin, int k_end, Acc& acc) {
    const int tiles = (k_end - k_begin + kBK - 1) / kBK;
    float4 ra[kLoadsA];
    auto stage = [&](int t) { return smem + (t % kStages) * kStage; };
    // Prologue: tiles 0 .. STAGES - 2 into their stages, and tile STAGES - 1 of A into registers.
#pragma unroll
    for (int t = 0; t < kStages - 1; ++t) {
      if (t < tiles) {
        issue_b(stage(t) + kTileA, b, ldb, col0, k_begin + t * kBK, k_end);
        load_a(ra, a, lda, m, row0, k_begin + t * kBK, k_end);
        store_a(stage(t), ra);
      }
      commit();  // one group per tile, empty past the end, so the counting below stays uniform
    }
    if (kStages - 1 < tiles) load_a(ra, a, lda, m, row0, k_begin + (kStages - 1) * kBK, k_end);
    for (int t = 0; t < tiles; ++t) {
      wait_for<kStages - 2>();  // B of tile t has landed (for this thread) ...
      __syncthreads();          // ... and for everyone, as have A's stores; stage (t - 1) % STAGES is free
      const int next = t + kStages - 1;
      if (next < tiles) {
        issue_b(stage(next) + kTileA, b, ldb, col0, k_begin + next * kBK, k_end);
        store_a(stage(next), ra);  // loaded during the last tile's multiply
      }
      commit();
      if (next + 1 < tiles) load_a(ra, a, lda, m, row0, k_begin + (next + 1) * kBK, k_end);  // in flight now
      product(stage(t), stage(t) + kTileA, acc);
    }
    wait_for<0>();  // no copy may still target shared memory when the block exits
  }
};

// kSlices (deep_k.cu): block z stores its k slice's partial tile into slice z of C (m x ldc each), the
// slices added after. Without kVecA (deep_k.cu: rows of A not 16-byte aligned) A's pieces are four
// 4-byte loads, each zero past k_end on its own; without kVecB, B's four 4-byte copies, each zero past n.
template <int kBM, int kBN, int kBK, int kStages, int kQN, bool kSlices = false, bool kVecA = true,
          bool kVecB = true>
__global__ void __launch_bounds__(Quads<kBM, kBN, kBK, kQN>::kThreads,
                                  Quads<kBM, kBN, kBK, kQN>::min_blocks(kSlices))
    register_tiled_quads_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                                float* __restrict__ c, int ldc, int m, int n, int k, int k_per_split,
                                bool accumulate) {
  using S = Quads<kBM, kBN, kBK, kQN>;
  extern __shared__ __align__(16) float smem[];  // kStages x [A (BK, BM + 4) transposed, B (BK, BN)]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = (warp % S::kWarpsM) * 32, wn = (warp / S::kWarpsM) * (32 * kQN);  // warp tile origin
  const int tm = (lane / 8) * 4, tn = (lane % 8) * 4;                              // thread quad origin
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;

  // A tile t: 16-byte loads into registers (row r, k offset p), stored transposed later.
  float4 ra[S::kLoadsA];
  auto load_a = [&](int t) {
    const int k0 = k_begin + t * kBK;
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBK / 4), p = k0 + (e % (kBK / 4)) * 4;
      if constexpr (kVecA) {
        const float4* src = reinterpret_cast<const float4*>(a + min(row0 + r, m - 1) * lda + p);
        ra[f] = p < k_end ? __ldg(src) : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        const float* src = a + long(min(row0 + r, m - 1)) * lda + p;
        ra[f].x = p < k_end ? __ldg(src) : 0.f;
        ra[f].y = p + 1 < k_end ? __ldg(src + 1) : 0.f;
        ra[f].z = p + 2 < k_end ? __ldg(src + 2) : 0.f;
        ra[f].w = p + 3 < k_end ? __ldg(src + 3) : 0.f;
      }
    }
  };
  auto store_a = [&](int t) {
    float* as = smem + (t % kStages) * S::kStage;
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBK / 4), q = (e % (kBK / 4)) * 4;
      as[(q + 0) * S::kPitchA + r] = ra[f].x;
      as[(q + 1) * S::kPitchA + r] = ra[f].y;
      as[(q + 2) * S::kPitchA + r] = ra[f].z;
      as[(q + 3) * S::kPitchA + r] = ra[f].w;
    }
  };
  // B tile t: asynchronous 16-byte copies straight into its stage.
  auto issue_b = [&](int t) {
    float* bs = smem + (t % kStages) * S::kStage + kBK * S::kPitchA;
    const int k0 = k_begin + t * kBK;
#pragma unroll
    for (int f = 0; f < S::kCopiesB; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBN / 4), q = (e % (kBN / 4)) * 4;
      const bool ok = k0 + r < k_end;
      const unsigned dst = unsigned(__cvta_generic_to_shared(&bs[r * kBN + q]));
      if constexpr (kVecB) {
        copy16(dst, ok ? b + (k0 + r) * ldb + min(col0 + q, ldb - 4) : b, ok);
      } else {
        const float* src = b + long(k0 + r) * ldb + col0 + q;
#pragma unroll
        for (int j = 0; j < 4; ++j) copy4(dst + 4u * j, ok && col0 + q + j < n ? src + j : b, ok && col0 + q + j < n);
      }
    }
  };

  float acc[8][4 * kQN] = {};  // (2 x 4 rows, kQN x 4 columns)
  // Prologue: tiles 0 .. STAGES - 2 into their stages, and tile STAGES - 1 of A into registers.
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < tiles) {
      issue_b(t);
      load_a(t);
      store_a(t);
    }
    commit();  // one group per tile, empty past the end, so the counting below stays uniform
  }
  if (kStages - 1 < tiles) load_a(kStages - 1);
  for (int t = 0; t < tiles; ++t) {
    wait_for<kStages - 2>();  // B of tile t has landed (for this thread) ...
    __syncthreads();          // ... and for everyone, as have A's stores; stage (t - 1) % STAGES is free
    const int next = t + kStages - 1;
    if (next < tiles) {
      issue_b(next);
      store_a(next);  // loaded during the last tile's multiply
    }
    commit();
    if (next + 1 < tiles) load_a(next + 1);  // in flight during this tile's multiply
    const float* as = smem + (t % kStages) * S::kStage;
    const float* bs = as + kBK * S::kPitchA;
#pragma unroll
    for (int p = 0; p < kBK; ++p) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[p * S::kPitchA + wm + tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[p * S::kPitchA + wm + 16 + tm]);
      if constexpr (kQN == 2) {
        const float4 b0 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + tn]);
        const float4 b1 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 + tn]);
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      } else {
        float bv[4 * kQN];
#pragma unroll
        for (int q = 0; q < kQN; ++q) {
          const float4 v = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 * q + tn]);
          bv[4 * q] = v.x, bv[4 * q + 1] = v.y, bv[4 * q + 2] = v.z, bv[4 * q + 3] = v.w;
        }
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 4 * kQN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
  }
  wait_for<0>();  // no copy may still target shared memory when the block exits
  if constexpr (kSlices) c += long(blockIdx.z) * m * ldc;  // this k slice's partial C

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = row0 + wm + (i < 4 ? tm + i : 16 + tm + i - 4);
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < 4 * kQN; ++j) {
      const int col = col0 + wn + (kQN == 2 ? (j < 4 ? tn + j : 32 + tn + j - 4) : 32 * (j / 4) + tn + j % 4);
      if (col >= n) continue;
      if (accumulate)
        atomicAdd(c + long(row) * ldc + col, acc[i][j]);
      else
        c[long(row) * ldc + col] = acc[i][j];
    }
  }
}

}  // namespace
}  // namespace mmlab
