// tf32x3: FP32 accuracy from the TF32 tensor cores. Each operand x is split into a TF32 high part
// big = rn_tf32(x) and a low part small = rn_tf32(x - big) (x - big is exact in FP32); the product
// a b = big_a big_b + big_a small_b + small_a big_b + small_a small_b is computed without its last
// term (below FP32's rounding) as three TF32 tensor-core products accumulated in FP32, the small ones
// first. The tensor cores' FP32 accumulation does not round to nearest: summed over all of k inside
// the mma, the error grew like k (3.1e-5 at 4096, 6.2e-5 at 8192 against float64, 10x and 15x cuBLAS
// SGEMM; data/tf32x3/history/). So each k tile's products go into a fragment of their own and are
// added into the FP32 accumulators with ordinary (round-to-nearest) adds.
//
// Source: the split-precision ("3xTF32") technique of the tensor-core emulation literature, as CUTLASS
// ships it for sm_80; written here for this lab, with mma.sync and with Hopper's wgmma.
//
// Variants (the number is the count of tensor-core products):
//   split3, split2  mma.sync m16n8k8. A 128 x 128 block tile, 8 warps of 64 x 32 (4 x 4 tiles of m16n8
//                   per warp), k tiles of 16 in STAGES shared-memory buffers filled by 16-byte cp.async:
//                   A as (BM, 16 + 4) and B as (16, BN + 8), pitches at which the fragment loads of a
//                   warp fall on 32 distinct banks; operands split in registers as they are loaded.
//   wgmma3, wgmma2  wgmma m64n128k8 (sm_90a). One producer thread and two consumer warpgroups of
//                   64 x 128. TMA lands each k tile of 32 (A 128 x 32 in the 128-byte swizzle, B 32 x 128)
//                   in one of STAGES raw buffers (an mbarrier says when; another, when all consumers have
//                   read it). While the tensor cores multiply tile t, the consumers prepare tile t + 1:
//                   B split into big and small parts and transposed (wgmma reads TF32 from shared memory
//                   only K-major), written in wgmma's 128-byte-swizzled layout into the other of two
//                   operand buffers; A read and split into each thread's own register fragment (wgmma
//                   takes A from registers, which spares shared memory its writes and the products'
//                   reads of A). mbarriers pass the operand buffers between the two warpgroups
//                   (written by all, read by all), so they drift apart and one multiplies while the
//                   other adds and splits.
//   presplit3,      a pass over A and B writes their big and small parts once, K-major (B^T), as four
//   presplit2       arrays in the workspace; then a plain TF32 wgmma product (a producer thread, two
//                   consumer warpgroups of 64 x 128, STAGES buffers) reads all four by TMA in the 128-byte
//                   swizzle and multiplies by descriptors: nothing is split or transposed in the k loop.
// split2, wgmma2 and presplit2 split A only: big_a b' + small_a b' with b' = rn_tf32(b); one product
// fewer, and the error of rounding b to TF32 stays (judged by the tf32 tolerance: a point on the frontier
// between TF32 and FP32, not an FP32 kernel). Rounding is always to nearest (`cvt.rna.tf32.f32`), never
// truncation. Rows past m and columns past n are never stored; mma.sync reads clamped addresses and
// zero-fills k past the end, TMA zero-fills all three; rows not 16-byte aligned are padded first
// (algorithms/aligned.cuh; presplit's pass pads k to a multiple of 4 itself). Any m, n, k. Example: mmlab run
// --algorithms tf32x3,cublas --size 4096,8192
#include "algorithms/aligned.cuh"
#include "algorithms/cp_async.cuh"
#include "algorithms/wgmma.cuh"
#include "harness/gpu.hpp"

namespace mmlab {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 16, kPitchA = kBK + 4, kPitchB = kBN + 8, kThreads = 256;
constexpr int kStageFloats = kBM * kPitchA + kBK * kPitchB;

struct Split {
  unsigned big, small;
};
__device__ inline Split split(float x) {
  unsigned big, small;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(x - __uint_as_float(big)));
  return {big, small};
}

// d += a (m16 x k8, TF32) b (k8 x n8, TF32), FP32 accumulators.
__device__ inline void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int kStages, int kProducts>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                  float* __restrict__ c, int ldc, int m, int n, int k) {
  extern __shared__ __align__(16) float smem[];  // kStages x [A (BM, BK + 4), B (BK, BN + 8)]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = (warp % 2) * 64, wn = (warp / 2) * 32;  // warp tile origin
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int tiles = (k + kBK - 1) / kBK;
  auto stage = [&](int s) { return smem + (s % kStages) * kStageFloats; };
  auto issue = [&](int s) {  // k tile s: 2 x 16 bytes of A and of B per thread
    float* as = stage(s);
    float* bs = as + kBM * kPitchA;
    const int k0 = s * kBK;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      const int e = tid + f * kThreads;
      const int ra = e / 4, qa = (e % 4) * 4;  // A: 128 rows x 4 chunks
      const bool ok_a = k0 + qa < k;
      copy16(unsigned(__cvta_generic_to_shared(&as[ra * kPitchA + qa])),
             ok_a ? a + long(min(row0 + ra, m - 1)) * lda + k0 + qa : a, ok_a);
      const int rb = e / 32, qb = (e % 32) * 4;  // B: 16 rows x 32 chunks
      const bool ok_b = k0 + rb < k;
      copy16(unsigned(__cvta_generic_to_shared(&bs[rb * kPitchB + qb])),
             ok_b ? b + long(k0 + rb) * ldb + min(col0 + qb, ldb - 4) : b, ok_b);
    }
  };

  float acc[4][4][4] = {};  // (m16 tile i, n8 tile j, fragment element)
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) issue(s);
    commit();
  }
  for (int s = 0; s < tiles; ++s) {
    wait_for<kStages - 2>();
    __syncthreads();  // tile s is in for everyone; stage s - 1 is free
    if (s + kStages - 1 < tiles) issue(s + kStages - 1);
    commit();
    const float* as = stage(s);
    const float* bs = as + kBM * kPitchA;
    float part[4][4][4] = {};  // this k tile's products, added into acc in FP32 below
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 8) {
      unsigned a_big[4][4], a_small[4][4], b_big[4][2], b_small[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float* p = as + (wm + 16 * i + g) * kPitchA + kk + t;
        const float v[4] = {p[0], p[8 * kPitchA], p[4], p[8 * kPitchA + 4]};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const Split x = split(v[e]);
          a_big[i][e] = x.big, a_small[i][e] = x.small;
        }
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float* p = bs + (kk + t) * kPitchB + wn + 8 * j + g;
        const float v[2] = {p[0], p[4 * kPitchB]};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const Split x = split(v[e]);
          b_big[j][e] = x.big, b_small[j][e] = x.small;
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          mma(part[i][j], a_small[i], b_big[j]);
          if (kProducts == 3) mma(part[i][j], a_big[i], b_small[j]);
          mma(part[i][j], a_big[i], b_big[j]);
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
  }
  wait_for<0>();

#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row0 + wm + 16 * i + g + (e / 2) * 8, col = col0 + wn + 8 * j + 2 * t + e % 2;
        if (row < m && col < n) c[long(row) * ldc + col] = acc[i][j][e];
      }
}

// The wgmma path. Shared memory, 1024-byte aligned: two operand buffers of two 16 KiB tiles (big and
// small B^T: 128 rows of 32 floats each), then STAGES raw buffers (A, B as TMA lands them), then the
// mbarriers.
constexpr int kWgTile = 128, kWgDepth = 32, kWgThreads = 384, kOperandBuffers = 2;
constexpr int kTileFloats = kWgTile * kWgDepth;
constexpr unsigned kTileBytes = sizeof(float) * kTileFloats;

// Each float of v split, big parts to big[0 .. 4), small parts to small[0 .. 4) (when kept).
__device__ inline void split_chunk(const float4 v, float* big, float* small) {
  const Split x = split(v.x), y = split(v.y), z = split(v.z), w = split(v.w);
  *reinterpret_cast<uint4*>(big) = make_uint4(x.big, y.big, z.big, w.big);
  if (small) *reinterpret_cast<uint4*>(small) = make_uint4(x.small, y.small, z.small, w.small);
}

template <int kRaw, int kProducts>
__global__ void __launch_bounds__(kWgThreads, 1)
    tf32x3_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                        float* __restrict__ c, int ldc, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ unsigned char smem_bytes[];
  float* operands =
      reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(smem_bytes) + 1023) & ~std::uintptr_t(1023));
  float* raw = operands + kOperandBuffers * 2 * kTileFloats;
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(raw + kRaw * 2 * kTileFloats);  // TMA's bytes in
  std::uint64_t* drained = landed + kRaw;   // every consumer has read the raw buffer: TMA may refill it
  std::uint64_t* written = drained + kRaw;  // every consumer has written its part of the operand buffer
  std::uint64_t* read = written + kOperandBuffers;  // every consumer's products have read it
  const int tid = threadIdx.x, group = tid / 128;
  const int row0 = blockIdx.y * kWgTile, col0 = blockIdx.x * kWgTile;
  const int tiles = (k + kWgDepth - 1) / kWgDepth;
  // Operand buffer of tile t: 0 big B^T, 1 small B^T. Raw buffer: 0 A (128-byte swizzled), 1 B.
  auto operand = [&](int t, int which) {
    return operands + ((t % kOperandBuffers) * 2 + which) * kTileFloats;
  };
  auto raw_tile = [&](int t, int which) { return raw + ((t % kRaw) * 2 + which) * kTileFloats; };
  if (tid == 0) {
    for (int i = 0; i < kRaw; ++i) {
      mbarrier_init(&landed[i], 1);
      mbarrier_init(&drained[i], 256);
    }
    for (int i = 0; i < kOperandBuffers; ++i) {
      mbarrier_init(&written[i], 256);
      mbarrier_init(&read[i], 256);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  if (group == 0) {  // the producer: one thread keeps the raw buffers filled; the rest of its group idles
    release_registers<40>();
    if (tid == 0)
      for (int t = 0; t < tiles; ++t) {
        mbarrier_wait(&drained[t % kRaw], ((t / kRaw) & 1) ^ 1);
        std::uint64_t* bar = &landed[t % kRaw];
        mbarrier_expect_bytes(bar, 2 * kTileBytes);
        tma_load_2d(raw_tile(t, 0), a_map, t * kWgDepth, row0, bar);  // A: 128 rows x 32 k
        tma_load_2d(raw_tile(t, 1), b_map, col0, t * kWgDepth, bar);  // B: 32 k x 128 columns
      }
    return;
  }

  // Consumers, 256 threads: prepare tile t + 1 while the tensor cores multiply tile t. Warpgroup g
  // multiplies rows 64 (g - 1) ... of the tile by all 128 columns: its A from registers (each thread
  // splits its own fragment), B^T from the operand buffers.
  claim_registers<232>();  // 128 x 40 + 256 x 232 fit the 64 K registers
  const int me = tid - 128, half = group - 1, lane = tid % 32, warp = (tid % 128) / 32;
  // The k of a tile are multiplied in an order of their own: the wgmma k step kk takes from thread
  // lane % 4 = t the k 8 t + 2 kk and 8 t + 2 kk + 1 (where the fragment's k is t and t + 4), so each
  // thread's A is two float4 per row, and k step pairs (0, 1) and (2, 3) one float4 each; B^T's logical
  // chunk q (k 4 q ... 4 q + 3 of wgmma's view) holds B's rows q, 8 + q, 16 + q, 24 + q to match.
  unsigned frag[2][kWgDepth / 8][4];  // A: [big, small][k step][mma.sync's m16k8 fragment]
  auto split_b = [&](int t) {         // tile t's B, split and transposed into its operand buffer
    mbarrier_wait(&landed[t % kRaw], (t / kRaw) & 1);
    const float* b = raw_tile(t, 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // column j's rows of logical chunk q -> row j of B^T
      const int e = me + 256 * i, j = e % 128, q = e / 128;
      const float* p = b + q * kWgTile + j;
      const float4 v = make_float4(p[0], p[8 * kWgTile], p[16 * kWgTile], p[24 * kWgTile]);
      const int at = swizzled_offset(j, 4 * q);
      split_chunk(v, operand(t, 0) + at, kProducts == 3 ? operand(t, 1) + at : nullptr);
    }
    fence_async_shared();  // the operands, written by the generic proxy, are read by wgmma's
  };
  // Tile t's A for k steps 2 pair and 2 pair + 1 into this thread's fragment (rows r and r + 8).
  const int r = half * 64 + warp * 16 + lane / 4;
  auto split_a = [&](int t, int pair) {
    const float* a = raw_tile(t, 0);  // 128-byte swizzled by TMA: these float4 loads fall on 32 banks
    const int k0 = 8 * (lane % 4) + 4 * pair;
    const float4 top = *reinterpret_cast<const float4*>(a + swizzled_offset(r, k0));
    const float4 bottom = *reinterpret_cast<const float4*>(a + swizzled_offset(r + 8, k0));
    const float v[2][4] = {{top.x, bottom.x, top.y, bottom.y}, {top.z, bottom.z, top.w, bottom.w}};
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const Split x = split(v[s][e]);
        frag[0][2 * pair + s][e] = x.big, frag[1][2 * pair + s][e] = x.small;
      }
  };
  // The two warpgroups pass the operand buffers by mbarriers, not a meeting: each waits only for what
  // it reads or overwrites, so one's products run while the other adds and splits.
  float acc[64] = {}, part[64] = {};
  split_b(0);
  mbarrier_arrive(&written[0]);
  split_a(0, 0);
  split_a(0, 1);
  mbarrier_arrive(&drained[0]);
  for (int t = 0; t < tiles; ++t) {
    const int buffer = t % kOperandBuffers;
    mbarrier_wait(&written[buffer], (t / kOperandBuffers) & 1);
    const std::uint64_t b_big = swizzled_descriptor(operand(t, 0)),
                        b_small = swizzled_descriptor(operand(t, 1));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kWgDepth / 8; ++kk) {  // two groups: k steps 0-1, then 2-3
      const int step = 2 * kk;                   // 8 k = 32 bytes = 2 descriptor units
      wgmma_tf32_m64n128k8(part, frag[1][kk], b_big + step, kk > 0);
      if (kProducts == 3) wgmma_tf32_m64n128k8(part, frag[0][kk], b_small + step, true);
      wgmma_tf32_m64n128k8(part, frag[0][kk], b_big + step, true);
      if (kk % 2 == 1) wgmma_commit();
    }
    // B of tile t + 1 while the tensor cores work, into the other operand buffer once every product
    // of tile t - 1 has read it; A of tile t + 1 into each half of the fragment as its group completes.
    const bool more = t + 1 < tiles;
    if (more) {
      if (t >= 1) mbarrier_wait(&read[(t + 1) % kOperandBuffers], ((t - 1) / kOperandBuffers) & 1);
      split_b(t + 1);
      mbarrier_arrive(&written[(t + 1) % kOperandBuffers]);
    }
    wgmma_wait<1>();
    if (more) split_a(t + 1, 0);
    wgmma_wait<0>();
    mbarrier_arrive(&read[buffer]);
    if (more) {
      split_a(t + 1, 1);
      mbarrier_arrive(&drained[(t + 1) % kRaw]);
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i];
  }
  const int row = row0 + r;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = row + (e / 2) * 8, col = col0 + 8 * j + 2 * (lane % 4) + e % 2;
      if (r < m && col < n) c[long(r) * ldc + col] = acc[4 * j + e];
    }
#endif
}

// The presplit path: a pass over A and B writes their big and small parts as four K-major arrays
// (A's as m x kp, B's transposed as n x kp, kp = k rounded up to 4, zeros past k), then a plain
// TF32 wgmma product reads all four by TMA in wgmma's 128-byte swizzle: no splitting, no
// transposing in the k loop. Shared memory: STAGES x {big A, small A, big B^T, small B^T}.
// Row r of blockIdx.y's rows, 4 k per thread (kp is a multiple of 4): no 64-bit divisions, and
// 16-byte stores of both parts.
__global__ void split_rows(const float* __restrict__ a, long rows, long k, long kp, float* __restrict__ big,
                           float* __restrict__ small) {
  const long chunks = kp / 4;
  for (long r = blockIdx.y; r < rows; r += gridDim.y)
    for (long q = blockIdx.x * long(blockDim.x) + threadIdx.x; q < chunks;
         q += long(gridDim.x) * blockDim.x) {
      const float* src = a + r * k + 4 * q;
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = 4 * q + i < k ? src[i] : 0.f;
      split_chunk(make_float4(v[0], v[1], v[2], v[3]), big + r * kp + 4 * q, small + r * kp + 4 * q);
    }
}
// big^T, small^T (cols x kp) of b (k x cols), 32 x 32 tiles through shared memory (32 x 8 threads),
// both sides coalesced.
__global__ void split_transposed(const float* __restrict__ b, int k, int cols, int kp,
                                 float* __restrict__ big, float* __restrict__ small) {
  __shared__ float tile[32][33];
  const int k0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int kk = k0 + i, c = c0 + threadIdx.x;
    tile[i][threadIdx.x] = kk < k && c < cols ? b[long(kk) * cols + c] : 0.f;
  }
  __syncthreads();
  // 256 threads write 32 rows of B^T, 8 chunks of 4 k each: 16-byte stores, 128 bytes per row.
  const int tid = threadIdx.y * 32 + threadIdx.x, local = tid / 8, chunk = tid % 8;
  const int c = c0 + local, kk = k0 + 4 * chunk;
  if (c < cols && kk < kp)  // kp and kk are multiples of 4
    split_chunk(make_float4(tile[4 * chunk][local], tile[4 * chunk + 1][local], tile[4 * chunk + 2][local],
                            tile[4 * chunk + 3][local]),
                big + long(c) * kp + kk, small + long(c) * kp + kk);
}

template <int kStages, int kProducts>
__global__ void __launch_bounds__(kWgThreads, 1)
    tf32x3_presplit_kernel(const __grid_constant__ CUtensorMap a_big_map,
                           const __grid_constant__ CUtensorMap a_small_map,
                           const __grid_constant__ CUtensorMap b_big_map,
                           const __grid_constant__ CUtensorMap b_small_map, float* __restrict__ c, int ldc,
                           int m, int n, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ unsigned char smem_bytes[];
  float* stages =
      reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(smem_bytes) + 1023) & ~std::uintptr_t(1023));
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(stages + kStages * 4 * kTileFloats);
  std::uint64_t* freed = landed + kStages;  // every consumer's products have read the stage
  const int tid = threadIdx.x, group = tid / 128;
  const int row0 = blockIdx.y * kWgTile, col0 = blockIdx.x * kWgTile;
  const int tiles = (k + kWgDepth - 1) / kWgDepth;
  // Tile t's stage: 0 big A, 1 small A, 2 big B^T, 3 small B^T.
  auto operand = [&](int t, int which) { return stages + ((t % kStages) * 4 + which) * kTileFloats; };
  if (tid == 0) {
    for (int i = 0; i < kStages; ++i) {
      mbarrier_init(&landed[i], 1);
      mbarrier_init(&freed[i], 256);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  if (group == 0) {  // the producer: one thread issues every tile as its stage frees
    release_registers<40>();
    if (tid == 0)
      for (int t = 0; t < tiles; ++t) {
        mbarrier_wait(&freed[t % kStages], ((t / kStages) & 1) ^ 1);
        std::uint64_t* bar = &landed[t % kStages];
        mbarrier_expect_bytes(bar, (kProducts == 3 ? 4 : 3) * kTileBytes);
        tma_load_2d(operand(t, 0), a_big_map, t * kWgDepth, row0, bar);
        tma_load_2d(operand(t, 1), a_small_map, t * kWgDepth, row0, bar);
        tma_load_2d(operand(t, 2), b_big_map, t * kWgDepth, col0, bar);
        if (kProducts == 3) tma_load_2d(operand(t, 3), b_small_map, t * kWgDepth, col0, bar);
      }
    return;
  }
  claim_registers<232>();
  const int half = group - 1, lane = tid % 32, warp = (tid % 128) / 32;
  float acc[64] = {}, part[64] = {};
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait(&landed[t % kStages], (t / kStages) & 1);
    const std::uint64_t a_big = swizzled_descriptor(operand(t, 0) + half * 64 * kWgDepth),
                        a_small = swizzled_descriptor(operand(t, 1) + half * 64 * kWgDepth),
                        b_big = swizzled_descriptor(operand(t, 2)),
                        b_small = swizzled_descriptor(operand(t, 3));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kWgDepth / 8; ++kk) {
      const int step = 2 * kk;  // 8 k = 32 bytes = 2 descriptor units
      wgmma_tf32_m64n128k8(part, a_small + step, b_big + step, kk > 0);
      if (kProducts == 3) wgmma_tf32_m64n128k8(part, a_big + step, b_small + step, true);
      wgmma_tf32_m64n128k8(part, a_big + step, b_big + step, true);
    }
    wgmma_commit();
    wgmma_wait<0>();
    mbarrier_arrive(&freed[t % kStages]);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i];
  }
  const int row = row0 + half * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = row + (e / 2) * 8, col = col0 + 8 * j + 2 * (lane % 4) + e % 2;
      if (r < m && col < n) c[long(r) * ldc + col] = acc[4 * j + e];
    }
#endif
}

enum class Kind { split3, split2, wgmma3, wgmma2, presplit3, presplit2 };
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"split3", "mma.sync: big*big + big*small + small*big, FP32 accumulation"},
      {"split2", "mma.sync: (big + small) A times rn_tf32(B): two products", Precision::tf32},
      {"wgmma3", "wgmma (sm_90a): TMA, producer warpgroup splits into swizzled operands, three products"},
      {"wgmma2", "wgmma (sm_90a): as wgmma3 with A split only: two products", Precision::tf32},
      {"presplit3", "a pass splits A and B (B transposed) once; wgmma (sm_90a) reads all four parts by TMA"},
      {"presplit2", "as presplit3 with B's small part left out: two products", Precision::tf32}};
  return v;
}
bool uses_wgmma(const Params& q) { return variant_kind<Kind>(variants(), q) >= Kind::wgmma3; }
bool presplit(const Params& q) { return variant_kind<Kind>(variants(), q) >= Kind::presplit3; }

// The presplit arrays: big and small A (m x kp) and B^T (n x kp), in floats.
std::size_t split_floats(const Problem& p) { return std::size_t(2 * (p.m + p.n) * round4(p.k)); }

std::size_t workspace(const Problem& p, const Params& q) {
  return presplit(q) ? sizeof(float) * split_floats(p) : aligned_workspace(p, q);
}

std::size_t shared_bytes(const Params& q) {
  const long stages = q.integer("stages");
  if (presplit(q))
    return 1024 + sizeof(float) * std::size_t(stages * 4) * kTileFloats +
           sizeof(std::uint64_t) * std::size_t(2 * stages);
  if (uses_wgmma(q))
    return 1024 + sizeof(float) * std::size_t(kOperandBuffers * 2 + stages * 2) * kTileFloats +
           sizeof(std::uint64_t) * std::size_t(2 * stages + 2 * kOperandBuffers);
  return sizeof(float) * std::size_t(stages * kStageFloats);
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  LaunchConfig lc;
  lc.block = {unsigned(uses_wgmma(q) ? kWgThreads : kThreads), 1, 1};
  lc.grid = {ceil_div(p.n, kBN), ceil_div(p.m, kBM), 1};  // 128 x 128 tiles either way
  lc.shared_bytes = shared_bytes(q);
  return lc;
}

__global__ void sm90a_probe(int* built) {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  *built = 1;
#else
  *built = 0;
#endif
}

// Whether this build holds sm_90a code for the device (wgmma exists only there), asked once.
bool built_for_sm90a() {
  static const bool built = [] {
    Buffer flag(sizeof(int), Buffer::Kind::device);
    sm90a_probe<<<1, 1>>>(flag.as<int>());
    MMLAB_CHECK_LAUNCH();
    int host = 0;
    MMLAB_CHECK(cudaMemcpy(&host, flag.get(), sizeof(int), cudaMemcpyDeviceToHost));
    return host == 1;
  }();
  return built;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (d.present && d.cc_major < 8) return "tf32x3 needs TF32 mma.sync: compute capability 8.0 or newer";
  if (uses_wgmma(q) && d.present && (d.cc_major != 9 || !built_for_sm90a()))
    return "wgmma exists on sm_90a only (Hopper, and a build for 90a)";
  if (presplit(q) && ceil_div(round4(p.k), 32) > 65535)
    return "presplit's pass over B runs a grid row per 32 of k: k at most 2097120";
  return fits_aligned_int(p, "tf32x3");
}

template <int kStages, int kProducts>
void launch_mma(const RunArgs& r, const LaunchConfig& lc) {
  const Operands o = aligned_operands(r);
  const auto kernel = tf32x3_kernel<kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  const Problem& p = r.problem;
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(o.a, o.lda, o.b, o.ldb, r.c, int(p.n),
                                                                     int(p.m), int(p.n), o.k);
}

template <int kRaw, int kProducts>
void launch_wgmma(const RunArgs& r, const LaunchConfig& lc) {
  const Operands o = aligned_operands(r);
  const Problem& p = r.problem;
  auto& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap& a_map = maps.get(o.a, p.m, p.k, o.lda, kWgTile, kWgDepth, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap& b_map = maps.get(o.b, p.k, p.n, o.ldb, kWgDepth, kWgTile);
  const auto kernel = tf32x3_wgmma_kernel<kRaw, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(a_map, b_map, r.c, int(p.n), int(p.m),
                                                                     int(p.n), int(p.k));
}

template <int kStages, int kProducts>
void launch_presplit(const RunArgs& r, const LaunchConfig& lc) {
  const Problem& p = r.problem;
  const long kp = round4(p.k);
  float* a_big = static_cast<float*>(r.workspace);
  float* a_small = a_big + p.m * kp;
  float* b_big = a_small + p.m * kp;
  float* b_small = b_big + p.n * kp;
  const dim3 rows_grid(unsigned(ceil_div(kp / 4, 128)), unsigned(std::min<long>(p.m, 65535)));
  split_rows<<<rows_grid, 128, 0, r.stream>>>(r.a, p.m, p.k, kp, a_big, a_small);
  split_transposed<<<dim3(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(kp, 32))), dim3(32, 8), 0,
                     r.stream>>>(r.b, int(p.k), int(p.n), int(kp), b_big, b_small);
  auto& maps = *static_cast<TensorMaps*>(r.state);
  const auto swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  const CUtensorMap& a_big_map = maps.get(a_big, p.m, kp, kp, kWgTile, kWgDepth, swizzle);
  const CUtensorMap& a_small_map = maps.get(a_small, p.m, kp, kp, kWgTile, kWgDepth, swizzle);
  const CUtensorMap& b_big_map = maps.get(b_big, p.n, kp, kp, kWgTile, kWgDepth, swizzle);
  const CUtensorMap& b_small_map = maps.get(b_small, p.n, kp, kp, kWgTile, kWgDepth, swizzle);
  const auto kernel = tf32x3_presplit_kernel<kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      a_big_map, a_small_map, b_big_map, b_small_map, r.c, int(p.n), int(p.m), int(p.n), int(kp));
}

#define MMLAB_MMA(V, P, S) {{#V, {{"stages", #S}}}, launch_mma<S, P>},
#define MMLAB_WGMMA(V, P, S) {{#V, {{"stages", #S}}}, launch_wgmma<S, P>},
#define MMLAB_PRESPLIT(V, P, S) {{#V, {{"stages", #S}}}, launch_presplit<S, P>},
const KernelTable<Launcher> kKernels = {
    MMLAB_MMA(split3, 3, 2) MMLAB_MMA(split3, 3, 3) MMLAB_MMA(split3, 3, 4)        //
    MMLAB_MMA(split2, 2, 2) MMLAB_MMA(split2, 2, 3) MMLAB_MMA(split2, 2, 4)        //
    MMLAB_WGMMA(wgmma3, 3, 2) MMLAB_WGMMA(wgmma3, 3, 3) MMLAB_WGMMA(wgmma3, 3, 4)  //
    MMLAB_WGMMA(wgmma2, 2, 2) MMLAB_WGMMA(wgmma2, 2, 3) MMLAB_WGMMA(wgmma2, 2, 4)  //
    MMLAB_PRESPLIT(presplit3, 3, 2) MMLAB_PRESPLIT(presplit3, 3, 3)                //
    MMLAB_PRESPLIT(presplit2, 2, 2) MMLAB_PRESPLIT(presplit2, 2, 3)};
#undef MMLAB_MMA
#undef MMLAB_WGMMA
#undef MMLAB_PRESPLIT

void run(const RunArgs& r) {
  kKernels.at (*r.params)(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(tf32x3) {
  a.summary =
      "FP32 from TF32 tensor cores: operands split big + small, three products (mma.sync or wgmma) in FP32";
  a.variants = variants();
  a.axes = {{"stages", AxisKind::integer, "shared-memory stages (wgmma: raw TMA buffers)", "3", {}, {}}};
  a.constraints =
      "compute capability 8.0 (wgmma: sm_90a); every (padded) matrix under 2^31 elements; any m, n, k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
