// tf32x3's fused wgmma kernel (sm_90a; variants wgmma3, wgmma2), and the shapes and epilogue it shares
// with the presplit kernels (tf32x3_presplit.cuh); algorithms/tf32x3.cu says how they split the work.
#pragma once

#include "algorithms/kernels/tf32_split.cuh"
#include "algorithms/ptx/wgmma.cuh"

namespace mmlab {
namespace {

// The wgmma path. Shared memory, 1024-byte aligned: two operand buffers of two 16 KiB tiles (big and
// small B^T: 128 rows of 32 floats each), then STAGES raw buffers (A, B as TMA lands them), then the
// mbarriers.
constexpr int kWgTile = 128, kWgDepth = 32, kWgThreads = 384, kOperandBuffers = 2;
constexpr int kTileFloats = kWgTile * kWgDepth;
constexpr unsigned kTileBytes = sizeof(float) * kTileFloats;

struct Unscaled {
  __device__ float operator()(int, int, float v, int) const { return v; }
};
// Warpgroup `half`'s 64 x 128 accumulators (wgmma's fragment layout, wgmma.cuh) into C at
// (row0 + 64 half, col0), rows below m and columns below n only, each as out(row, column, value,
// index in acc);
// added atomically where `add` (a k split's partial tile into a zeroed C).
template <typename Out = Unscaled>
__device__ inline void store_accumulators(const float (&acc)[64], float* __restrict__ c, int ldc, int m,
                                          int n, int row0, int col0, int half, Out out = {},
                                          bool add = false) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
  const int row = row0 + half * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = row + (e / 2) * 8, col = col0 + 8 * j + 2 * (lane % 4) + e % 2;
      if (r >= m || col >= n) continue;
      const float v = out(r, col, acc[4 * j + e], 4 * j + e);
      if (add)
        atomicAdd(&c[long(r) * ldc + col], v);
      else
        c[long(r) * ldc + col] = v;
    }
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
        mbarrier_wait_cta(&drained[t % kRaw], ((t / kRaw) & 1) ^ 1);
        fence_async_shared();  // the consumers' reads of the raw tile (generic proxy) before TMA's writes
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
    mbarrier_wait_cta(&landed[t % kRaw], (t / kRaw) & 1);
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
  mbarrier_arrive_cta(&written[0]);
  split_a(0, 0);
  split_a(0, 1);
  mbarrier_arrive_cta(&drained[0]);
  for (int t = 0; t < tiles; ++t) {
    const int buffer = t % kOperandBuffers;
    mbarrier_wait_cta(&written[buffer], (t / kOperandBuffers) & 1);
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
      if (t >= 1) mbarrier_wait_cta(&read[(t + 1) % kOperandBuffers], ((t - 1) / kOperandBuffers) & 1);
      split_b(t + 1);
      mbarrier_arrive_cta(&written[(t + 1) % kOperandBuffers]);
    }
    wgmma_wait<1>();
    if (more) split_a(t + 1, 0);
    wgmma_wait<0>();
    mbarrier_arrive_cta(&read[buffer]);
    if (more) {
      split_a(t + 1, 1);
      mbarrier_arrive_cta(&drained[(t + 1) % kRaw]);
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i];
  }
  store_accumulators(acc, c, ldc, m, n, row0, col0, half);
#endif
}

}  // namespace
}  // namespace mmlab
