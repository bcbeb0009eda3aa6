// tf32x3's presplit path (sm_90a; variants presplit3, presplit2 with TF32 parts, half3, half2 with FP16
// parts): the pass that splits A and B once, and the wgmma product that reads the parts by TMA;
// algorithms/tf32x3.cu says how they split the work.
#pragma once

#include "algorithms/kernels/tf32x3_wgmma.cuh"

namespace mmlab {
namespace {

// The presplit path: a pass over A and B writes their big and small parts as four K-major arrays
// (A's as m x kp, B's transposed as n x kp, kp = k rounded up to 16 bytes' worth, zeros past k), then a
// plain wgmma product reads all four by TMA in wgmma's 128-byte swizzle: no splitting, no transposing
// in the k loop. Shared memory: STAGES x {big A, small A, big B^T, small B^T}, 16 KiB tiles of 128
// rows x 128 bytes. T is the parts' type: float (TF32 parts) or __half (FP16 parts of the scaled
// values; tf32_split.cuh), whose tiles hold 64 k where TF32's hold 32, at twice the tensor-core rate.

// The largest |x| of each column of b (k x cols) as float bits, by atomicMax into bits zeroed first
// (non-negative floats order as their bits do; a NaN above an Inf): the FP16 split's column scales.
constexpr int kMaxRows = 64;  // rows of b per block
__global__ void column_abs_max(const float* __restrict__ b, long k, long cols, unsigned* __restrict__ bits) {
  const long c = blockIdx.x * long(blockDim.x) + threadIdx.x, r0 = long(blockIdx.y) * kMaxRows;
  if (c >= cols) return;
  unsigned most = 0;
  for (long r = r0; r < k && r < r0 + kMaxRows; ++r)
    most = max(most, __float_as_uint(fabsf(b[r * cols + c])));
  if (most) atomicMax(&bits[c], most);
}
// The scale exponent of output row r of a split (0 for TF32's parts, which take no scale).
__device__ inline int scale_of(const unsigned* bits, long r) { return bits ? half_scale(bits[r]) : 0; }

// A block per row (rows strided over the grid), 4 k per thread and step (kp is a multiple of 4): 16-byte
// loads where k is a multiple of 4, 16-byte (TF32) or 8-byte (FP16) stores of both parts. FP16 parts first
// need the row's largest |x|: the block finds it (written to bits[r] for the epilogue), then reads the row
// again, from L1 or L2.
template <typename T>
__global__ void split_rows(const float* __restrict__ a, long rows, long k, long kp,
                           unsigned* __restrict__ bits, T* __restrict__ big, T* __restrict__ small) {
  __shared__ unsigned warp_most[32];
  const long chunks = kp / 4;
  for (long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = a + r * k;
    const bool vectors = k % 4 == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0;  // rows 16-byte aligned
    // Chunk q of the row: k 4 q ... 4 q + 3, zeros past k.
    auto chunk_at = [&](long q) {
      if (vectors && 4 * q < k) return *reinterpret_cast<const float4*>(row + 4 * q);
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = 4 * q + i < k ? row[4 * q + i] : 0.f;
      return make_float4(v[0], v[1], v[2], v[3]);
    };
    int e = 0;
    if (sizeof(T) == 2) {
      unsigned most = 0;
      for (long q = threadIdx.x; q < chunks; q += blockDim.x) {
        const float4 v = chunk_at(q);
        most = max(max(most, max(__float_as_uint(fabsf(v.x)), __float_as_uint(fabsf(v.y)))),
                   max(__float_as_uint(fabsf(v.z)), __float_as_uint(fabsf(v.w))));
      }
      most = __reduce_max_sync(0xffffffffu, most);
      if (threadIdx.x % 32 == 0) warp_most[threadIdx.x / 32] = most;
      __syncthreads();
      most = 0;
      for (unsigned w = 0; w < blockDim.x / 32; ++w) most = max(most, warp_most[w]);
      __syncthreads();  // warp_most is free for the next row
      if (threadIdx.x == 0) bits[r] = most;
      e = half_scale(most);
    }
    for (long q = threadIdx.x; q < chunks; q += blockDim.x)
      split_chunk(chunk_at(q), e, big + r * kp + 4 * q, small + r * kp + 4 * q);
  }
}
// big^T, small^T (cols x kp) of b (k x cols), 32 x 32 tiles through shared memory (32 x 8 threads),
// both sides coalesced; small may be null (not kept). (Tiles of 64 k for FP16, 128-byte rows of parts
// as the product reads them, measured slower: 70 against 63 us at 4096.)
template <typename T>
__global__ void split_transposed(const float* __restrict__ b, int k, int cols, int kp, const unsigned* bits,
                                 T* __restrict__ big, T* __restrict__ small) {
  __shared__ float tile[32][33];
  const int k0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int kk = k0 + i, c = c0 + threadIdx.x;
    tile[i][threadIdx.x] = kk < k && c < cols ? b[long(kk) * cols + c] : 0.f;
  }
  __syncthreads();
  // 256 threads write 32 rows of B^T, 8 chunks of 4 k each.
  const int tid = threadIdx.y * 32 + threadIdx.x, local = tid / 8, chunk = tid % 8;
  const int c = c0 + local, kk = k0 + 4 * chunk;
  if (c < cols && kk < kp)  // kp and kk are multiples of 4
    split_chunk(make_float4(tile[4 * chunk][local], tile[4 * chunk + 1][local], tile[4 * chunk + 2][local],
                            tile[4 * chunk + 3][local]),
                scale_of(bits, c), big + long(c) * kp + kk, small ? small + long(c) * kp + kk : nullptr);
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
// exponents, undone in the epilogue: c = acc 2^-(e_row + e_column), exact short of FP32's underflow.
// Block z of the grid multiplies k tiles z per ... (z + 1) per - 1 and, with more than one block in z,
// adds its partial tile into C (zeroed first) atomically.
template <typename T, int kStages, int kProducts>
__global__ void __launch_bounds__(kWgThreads, 1)
    tf32x3_presplit_kernel(const __grid_constant__ CUtensorMap a_big_map,
                           const __grid_constant__ CUtensorMap a_small_map,
                           const __grid_constant__ CUtensorMap b_big_map,
                           const __grid_constant__ CUtensorMap b_small_map, float* __restrict__ c, int ldc,
                           int m, int n, int k, const unsigned* __restrict__ a_bits,
                           const unsigned* __restrict__ b_bits, int per) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
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
  if (a_bits)
    store_accumulators(
        acc, c, ldc, m, n, row0, col0, half,
        [&](int r, int col, float v) {
          return ldexpf(v, -(half_scale(a_bits[r]) + half_scale(b_bits[col])));
        },
        add);
  else
    store_accumulators(acc, c, ldc, m, n, row0, col0, half, Unscaled{}, add);
#endif
}

}  // namespace
}  // namespace mmlab
