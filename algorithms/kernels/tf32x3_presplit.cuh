// tf32x3's presplit path (sm_90a; variants presplit3, presplit2 with TF32 parts, half3, half2 with FP16
// parts): the wgmma product that reads by TMA the parts the pass wrote once (tf32x3_split_pass.cuh);
// algorithms/tf32x3.cu says how they split the work.
#pragma once

#include <cstdint>

#include "algorithms/kernels/tf32x3_split_pass.cuh"
#include "algorithms/kernels/tf32x3_wgmma.cuh"

namespace mmlab {
namespace {

// The presplit path: a pass over A and B writes their big and small parts as four K-major arrays
// (A's as m x kp, B's transposed as n x kp, kp = k rounded up to 16 bytes' worth, zeros past k), then a
// plain wgmma product reads all four by TMA in wgmma's 128-byte swizzle: no splitting, no transposing
// in the k loop. Shared memory: STAGES x {big A, small A, big B^T, small B^T}, 16 KiB tiles of 128
// rows x 128 bytes. T is the parts' type: float (TF32 parts) or __half (FP16 parts of the scaled
// values; tf32_split.cuh), whose tiles hold 64 k where TF32's hold 32, at twice the tensor-core rate.

// The listed values' terms, added into this thread's 64 elements of the tile (wgmma's fragment layout,
// store_accumulators: rows r0 and r0 + 8, columns col0 + 8 j + 2 (lane % 4) + {0, 1}): A's listed values
// of each row times B's columns (as given), then B's listed values of each column times the row's
// values that A's parts hold (A's listed ones are in the first sum), each list in increasing k. The
// loads of one list entry, across the thread's columns or rows, are issued together.
__device__ inline void add_lossy_terms(const HalfLossy& f, const unsigned* a_bits, int r0, int col0, int m, int n,
                                       float (&terms)[64]) {
  const int lane = threadIdx.x % 32;
  int na[2], nb[32], most_b = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) na[h] = r0 + 8 * h < m ? min(f.a_count[r0 + 8 * h], kLossyPerLine) : 0;
#pragma unroll
  for (int q = 0; q < 32; ++q) {
    const int col = col0 + 8 * (q / 2) + 2 * (lane % 4) + q % 2;
    nb[q] = col < n ? min(f.b_count[col], kLossyPerLine) : 0;
    most_b = max(most_b, nb[q]);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < na[h]; ++i) {
      const Lossy e = f.a_list[long(r0 + 8 * h) * kLossyPerLine + i];
#pragma unroll
      for (int q = 0; q < 32; ++q) {
        const int col = col0 + 8 * (q / 2) + 2 * (lane % 4) + q % 2, at = 4 * (q / 2) + 2 * h + q % 2;
        if (col < n) terms[at] = fmaf(e.x, f.b[long(e.p) * f.n + col], terms[at]);
      }
    }
  const int e_row[2] = {r0 < m ? half_scale(a_bits[r0]) : 0, r0 + 8 < m ? half_scale(a_bits[r0 + 8]) : 0};
  for (int i = 0; i < most_b; ++i)
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      if (i >= nb[q]) continue;
      const int col = col0 + 8 * (q / 2) + 2 * (lane % 4) + q % 2;
      const Lossy e = f.b_list[long(col) * kLossyPerLine + i];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (r0 + 8 * h >= m) continue;
        const float a = f.a[long(r0 + 8 * h) * f.k + e.p];
        const int at = 4 * (q / 2) + 2 * h + q % 2;
        terms[at] = fmaf(half_parts(a, e_row[h], true).holds ? a : 0.f, e.x, terms[at]);
      }
    }
}

// x 2^-e rounded once, as ldexpf(x, -e) rounds it: a product with the power of two where that is a
// normal float (a few instructions where ldexpf takes dozens).
__device__ inline float times_pow2(float x, int e) {
  const int biased = 127 - e;
  return biased >= 1 && biased <= 254 ? x * __int_as_float(biased << 23) : ldexpf(x, -e);
}

// The FP16 product's epilogue: warpgroup `half`'s 64 x 128 accumulators (store_accumulators' layout)
// times 2^-(e_row + e_column), plus the listed values' terms where kTerms, into C (atomically where
// `add`). Each of the thread's 2 rows' and 32 columns' exponents is found once, and a pair of
// adjacent columns goes as one float2 where C's rows are 8-byte aligned. (With an ldexpf and two scale
// lookups per element, half3's product at 4096 issued 126 M instructions and took 657 us by ncu; so,
// 109 M and 621 us: data/tf32x3/every-input/epilogue-13c1cf5/. Both warpgroups store at once, the
// tensor pipe idle meanwhile.)
template <bool kTerms>
__device__ inline void store_unscaled(const float (&acc)[64], const float (&terms)[64], float* __restrict__ c,
                                      int ldc, int m, int n, int row0, int col0, int half,
                                      const unsigned* __restrict__ a_bits, const unsigned* __restrict__ b_bits,
                                      bool add) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
  const int row = row0 + half * 64 + warp * 16 + lane / 4;  // and row + 8
  const bool pairs = !add && ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % 8 == 0;
  int e_row[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) e_row[h] = row + 8 * h < m ? half_scale(a_bits[row + 8 * h]) : 0;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int col = col0 + 8 * j + 2 * (lane % 4);  // and col + 1
    if (col >= n) continue;
    const bool second = col + 1 < n;
    const int e0 = half_scale(b_bits[col]), e1 = second ? half_scale(b_bits[col + 1]) : 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h, i = 4 * j + 2 * h;  // acc[i] is (r, col), acc[i + 1] (r, col + 1)
      if (r >= m) continue;
      float v0 = times_pow2(acc[i], e_row[h] + e0), v1 = times_pow2(acc[i + 1], e_row[h] + e1);
      if (kTerms) v0 += terms[i], v1 += terms[i + 1];
      float* at = c + long(r) * ldc + col;
      if (add) {
        atomicAdd(at, v0);
        if (second) atomicAdd(at + 1, v1);
      } else if (pairs && second) {
        *reinterpret_cast<float2*>(at) = make_float2(v0, v1);
      } else {
        at[0] = v0;
        if (second) at[1] = v1;
      }
    }
  }
}

// One instruction's k of the parts' type: d += a b (or d = a b), K-major tiles by descriptor.
template <typename T>
__device__ inline void wgmma_parts(float (&d)[64], std::uint64_t a, std::uint64_t b, bool accumulate) {
  if constexpr (sizeof(T) == 4)
    wgmma_tf32_m64n128k8(d, a, b, accumulate);
  else
    wgmma_f16_m64n128k16(d, a, b, accumulate);
}

// The product. a_bits and b_bits (FP16 parts only, else null) give each row's and column's scale
// exponents, undone in the epilogue: c = acc 2^-(e_row + e_column), exact short of FP32's underflow,
// plus the listed values' terms (`lossy`, FP16 parts only). Block z of the grid multiplies k tiles
// z per ... (z + 1) per - 1 and, with more than one block in z, adds its partial tile into C (zeroed
// first) atomically; the listed terms go with z = 0's.
template <typename T, int kStages, int kProducts>
__device__ __forceinline__ void presplit_product(const CUtensorMap& a_big_map, const CUtensorMap& a_small_map,
                                                 const CUtensorMap& b_big_map, const CUtensorMap& b_small_map,
                                                 float* __restrict__ c, int ldc, int m, int n, int k,
                                                 const unsigned* __restrict__ a_bits,
                                                 const unsigned* __restrict__ b_bits, int per,
                                                 const HalfLossy* lossy) {
  constexpr int kDepth = 128 / sizeof(T);  // k per 128-byte tile row
  extern __shared__ unsigned char smem_bytes[];
  unsigned char* stages = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_bytes) + 1023) & ~std::uintptr_t(1023));
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(stages + kStages * 4 * kTileBytes);
  std::uint64_t* freed = landed + kStages;  // every consumer's products have read the stage
  const int tid = threadIdx.x, group = tid / 128;
  const int row0 = blockIdx.y * kWgTile, col0 = blockIdx.x * kWgTile;
  const int first = blockIdx.z * per, tiles = min((k + kDepth - 1) / kDepth - first, per);
  // Tile t (of this block's) stage: 0 big A, 1 small A, 2 big B^T, 3 small B^T.
  auto operand = [&](int t, int which) { return stages + ((t % kStages) * 4 + which) * kTileBytes; };
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
        mbarrier_wait_cta(&freed[t % kStages], ((t / kStages) & 1) ^ 1);
        std::uint64_t* bar = &landed[t % kStages];
        mbarrier_expect_bytes(bar, (kProducts == 3 ? 4 : 3) * kTileBytes);
        const int at = (first + t) * kDepth;
        tma_load_2d(operand(t, 0), a_big_map, at, row0, bar);
        tma_load_2d(operand(t, 1), a_small_map, at, row0, bar);
        tma_load_2d(operand(t, 2), b_big_map, at, col0, bar);
        if (kProducts == 3) tma_load_2d(operand(t, 3), b_small_map, at, col0, bar);
      }
    return;
  }
  claim_registers<232>();
  const int half = group - 1;
  // Whether this tile holds listed values: read now, used after the k loop (its latency hidden).
  const bool listed = lossy && blockIdx.z == 0 && (lossy->a_any[blockIdx.y] | lossy->b_any[blockIdx.x]);
  float acc[64] = {}, part[64] = {};
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait_cta(&landed[t % kStages], (t / kStages) & 1);
    const std::uint64_t a_big = swizzled_descriptor(operand(t, 0) + half * 64 * 128),
                        a_small = swizzled_descriptor(operand(t, 1) + half * 64 * 128),
                        b_big = swizzled_descriptor(operand(t, 2)),
                        b_small = swizzled_descriptor(operand(t, 3));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int step = 2 * kk;  // one instruction's k = 32 bytes = 2 descriptor units
      wgmma_parts<T>(part, a_small + step, b_big + step, kk > 0);
      if (kProducts == 3) wgmma_parts<T>(part, a_big + step, b_small + step, true);
      wgmma_parts<T>(part, a_big + step, b_big + step, true);
    }
    wgmma_commit();
    wgmma_wait<0>();
    mbarrier_arrive_cta(&freed[t % kStages]);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i];
  }
  const bool add = gridDim.z > 1;
  if (!a_bits) {
    store_accumulators(acc, c, ldc, m, n, row0, col0, half, Unscaled{}, add);
    return;
  }
  float (&terms)[64] = part;  // free after the k loop
  if (listed) {
#pragma unroll
    for (int i = 0; i < 64; ++i) terms[i] = 0.f;
    const int r0 = row0 + half * 64 + (tid % 128 / 32) * 16 + (tid % 32) / 4;
    add_lossy_terms(*lossy, a_bits, r0, col0, m, n, terms);
    store_unscaled<true>(acc, terms, c, ldc, m, n, row0, col0, half, a_bits, b_bits, add);
  } else {
    store_unscaled<false>(acc, terms, c, ldc, m, n, row0, col0, half, a_bits, b_bits, add);
  }
}

// presplit3, presplit2: TF32 parts.
template <int kStages, int kProducts>
__global__ void __launch_bounds__(kWgThreads, 1)
    tf32x3_presplit_kernel(const __grid_constant__ CUtensorMap a_big_map,
                           const __grid_constant__ CUtensorMap a_small_map,
                           const __grid_constant__ CUtensorMap b_big_map,
                           const __grid_constant__ CUtensorMap b_small_map, float* __restrict__ c, int ldc,
                           int m, int n, int k, int per) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  presplit_product<float, kStages, kProducts>(a_big_map, a_small_map, b_big_map, b_small_map, c, ldc, m, n, k,
                                              nullptr, nullptr, per, nullptr);
#endif
}

// half3, half2: FP16 parts with the listed values' terms, or, where the split pass fell back, TF32 parts
// of the whole (`fallback`, read once by every block: the whole grid takes the same path).
struct PartMaps {
  CUtensorMap a_big, a_small, b_big, b_small;
};
template <int kStages, int kProducts>
__global__ void __launch_bounds__(kWgThreads, 1)
    tf32x3_half_kernel(const __grid_constant__ PartMaps halves, const __grid_constant__ PartMaps tf32,
                       float* __restrict__ c, int ldc, int m, int n, int kp_half, int kp_tf32,
                       const unsigned* __restrict__ a_bits, const unsigned* __restrict__ b_bits, int per_half,
                       int per_tf32, const __grid_constant__ HalfLossy lossy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (*lossy.fallback)
    presplit_product<float, kStages, kProducts>(tf32.a_big, tf32.a_small, tf32.b_big, tf32.b_small, c, ldc, m,
                                                n, kp_tf32, nullptr, nullptr, per_tf32, nullptr);
  else
    presplit_product<__half, kStages, kProducts>(halves.a_big, halves.a_small, halves.b_big, halves.b_small, c,
                                                 ldc, m, n, kp_half, a_bits, b_bits, per_half, &lossy);
#endif
}

}  // namespace
}  // namespace mmlab
