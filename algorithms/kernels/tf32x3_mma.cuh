// tf32x3's mma.sync kernel (variants split3, split2; algorithms/tf32x3.cu says how it splits the work).
#pragma once

#include "algorithms/kernels/tf32_split.cuh"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 16, kPitchA = kBK + 4, kPitchB = kBN + 8, kThreads = 256;
constexpr int kStageFloats = kBM * kPitchA + kBK * kPitchB;

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
      for (int i = 0; i < 4; ++i)
        split_a_fragment(as + (wm + 16 * i + g) * kPitchA + kk + t, kPitchA, a_big[i], a_small[i]);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        split_b_fragment(bs + (kk + t) * kPitchB + wn + 8 * j + g, kPitchB, b_big[j], b_small[j]);
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

}  // namespace
}  // namespace mmlab
