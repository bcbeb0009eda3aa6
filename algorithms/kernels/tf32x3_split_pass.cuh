// tf32x3's presplit pass (variants presplit3, presplit2, half3, half2; the product that reads its
// parts: tf32x3_presplit.cuh): A's rows and B's transposed tiles into big and small parts, TF32 or,
// after scaling each row and column by a power of two, FP16; the column maxima behind B's scales; the
// values FP16 parts cannot hold, listed for the product's epilogue, or the TF32 fallback.
#pragma once

#include <cstdint>

#include "algorithms/kernels/tf32x3_wgmma.cuh"

namespace mmlab {
namespace {

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

// The values the FP16 parts cannot hold (tf32_split.cuh's half_parts): the split pass writes zero parts
// for them and lists each (its k and value) under its row of A or column of B, at most kLossyPerLine a
// line; split_fallback sorts each list by k, and the product's epilogue adds their terms in FP32
// (add_lossy_terms). A line with more sets `fallback`: the product then runs on TF32 parts of the whole
// of A and B instead (presplit3's, written by split_fallback in the same bytes), and every kernel of the
// FP16 path returns at once. The counts, the per-tile marks and the flag are zeroed before each run.
// Eight a line: each listed value costs every thread of its row or column a load in the epilogue (at
// 16, exp_spread:2 inputs at k = 128 ran 8x slower than with none listed).
struct Lossy {
  int p;    // k
  float x;  // the value, as given
};
constexpr int kLossyPerLine = 8;
struct HalfLossy {
  const float* a;  // A (m x k) and B (k x n) as given
  const float* b;
  int k, n;
  int* a_count;  // per row of A, per column of B: values listed (more than kLossyPerLine: fallback set)
  int* b_count;
  Lossy* a_list;  // kLossyPerLine slots per row / column, filled in no order, then sorted by k
  Lossy* b_list;
  int* a_any;  // per kWgTile rows of A, columns of B: any value listed there
  int* b_any;
  int* fallback;
};

// Lists x at k = p, or sets the fallback flag. Once it is set nothing more is listed: on inputs whose
// exponents spread, half of all values fail, and their atomics on a few counters made the pass 3-5x
// slower (data/flagship/held-out, first runs).
__device__ inline void note_lossy(int* count, Lossy* list, int* any, int* fallback, int p, float x) {
  if (*static_cast<volatile int*>(fallback)) return;
  const int slot = atomicAdd(count, 1);
  if (slot < kLossyPerLine)
    list[slot] = {p, x}, *any = 1;
  else
    *fallback = 1;
}

// Row r of A (k floats) into its parts (row r of big and small, kp wide, zeros past k): the block's
// threads take 4 k each and step, 16-byte loads where the rows are 16-byte aligned. FP16 parts first
// need the row's largest |x|: the block finds it (written to bits[r] for the epilogue), then reads the
// row again, from L1 or L2, and lists what its parts cannot hold (`lossy`).
template <typename T>
__device__ inline void split_row(const float* __restrict__ a, long r, long k, long kp, unsigned* __restrict__ bits,
                                 T* __restrict__ big, T* __restrict__ small, const HalfLossy* lossy) {
  __shared__ unsigned warp_most[32];
  const long chunks = kp / 4;
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
  for (long q = threadIdx.x; q < chunks; q += blockDim.x) {
    const float4 v = chunk_at(q);
    if (const unsigned lost = split_chunk(v, e, big + r * kp + 4 * q, small + r * kp + 4 * q); lost && lossy) {
      const float x[4] = {v.x, v.y, v.z, v.w};
      for (int i = 0; i < 4; ++i)
        if (lost >> i & 1)
          note_lossy(lossy->a_count + r, lossy->a_list + r * kLossyPerLine, lossy->a_any + r / kWgTile,
                     lossy->fallback, int(4 * q + i), x[i]);
    }
  }
}
// A block per row, rows strided over the grid.
template <typename T>
__global__ void split_rows(const float* __restrict__ a, long rows, long k, long kp, unsigned* __restrict__ bits,
                           T* __restrict__ big, T* __restrict__ small, const __grid_constant__ HalfLossy lossy) {
  for (long r = blockIdx.x; r < rows; r += gridDim.x)
    split_row(a, r, k, kp, bits, big, small, sizeof(T) == 2 ? &lossy : nullptr);
}

// The 32 x 32 tile (tx, ty) of b (k x cols) into big^T, small^T (cols x kp) through shared memory, 256
// threads (x = thread % 32, y = thread / 32), both sides coalesced; small may be null (not kept). (Tiles
// of 64 k for FP16, 128-byte rows of parts as the product reads them, measured slower: 70 against 63 us
// at 4096.)
template <typename T>
__device__ inline void split_tile(const float* __restrict__ b, int tx, int ty, int k, int cols, int kp,
                                  const unsigned* bits, T* __restrict__ big, T* __restrict__ small,
                                  const HalfLossy* lossy) {
  __shared__ float tile[32][33];
  const int x = threadIdx.x % 32, y = threadIdx.x / 32;
  const int k0 = ty * 32, c0 = tx * 32;
  for (int i = y; i < 32; i += 8) {
    const int kk = k0 + i, c = c0 + x;
    tile[i][x] = kk < k && c < cols ? b[long(kk) * cols + c] : 0.f;
  }
  __syncthreads();
  // 256 threads write 32 rows of B^T, 8 chunks of 4 k each.
  const int local = threadIdx.x / 8, chunk = threadIdx.x % 8;
  const int c = c0 + local, kk = k0 + 4 * chunk;
  if (c < cols && kk < kp) {  // kp and kk are multiples of 4
    const float4 v = make_float4(tile[4 * chunk][local], tile[4 * chunk + 1][local], tile[4 * chunk + 2][local],
                                 tile[4 * chunk + 3][local]);
    const unsigned lost = split_chunk(v, scale_of(bits, c), big + long(c) * kp + kk,
                                      small ? small + long(c) * kp + kk : nullptr);
    if (lost && lossy) {
      const float xs[4] = {v.x, v.y, v.z, v.w};
      for (int i = 0; i < 4; ++i)
        if (lost >> i & 1)
          note_lossy(lossy->b_count + c, lossy->b_list + long(c) * kLossyPerLine, lossy->b_any + c / kWgTile,
                     lossy->fallback, kk + i, xs[i]);
    }
  }
  __syncthreads();  // the tile is free for the block's next one
}
// One 256-thread block per tile, tiles strided over the grid (x fastest).
template <typename T>
__global__ void split_transposed(const float* __restrict__ b, int k, int cols, int kp, const unsigned* bits,
                                 T* __restrict__ big, T* __restrict__ small, const __grid_constant__ HalfLossy lossy) {
  const int tiles_x = (cols + 31) / 32;
  const long tiles = long(tiles_x) * ((kp + 31) / 32);
  for (long t = blockIdx.x; t < tiles; t += gridDim.x)
    split_tile(b, int(t % tiles_x), int(t / tiles_x), k, cols, kp, bits, big, small,
               sizeof(T) == 2 ? &lossy : nullptr);
}

// After the FP16 split: the TF32 parts of A and B^T (presplit3's, kp = k rounded up to 4) where it set
// `fallback` (split_rows' and split_transposed's work, strided over the blocks), else each lossy list
// sorted by k (a thread a line), so that the epilogue adds their terms in an order of their own and C
// stays bit-identical from run to run. small_b may be null (half2).
__global__ void split_fallback(const float* __restrict__ a, const float* __restrict__ b, long m, long n, long k,
                               long kp, float* a_big, float* a_small, float* b_big, float* b_small,
                               const __grid_constant__ HalfLossy lossy) {
  if (!*lossy.fallback) {
    for (long line = blockIdx.x * long(blockDim.x) + threadIdx.x; line < m + n; line += long(gridDim.x) * blockDim.x) {
      const bool row = line < m;
      const int count = min(row ? lossy.a_count[line] : lossy.b_count[line - m], kLossyPerLine);
      if (count < 2) continue;
      Lossy* list = row ? lossy.a_list + line * kLossyPerLine : lossy.b_list + (line - m) * kLossyPerLine;
      Lossy e[kLossyPerLine];
      for (int i = 0; i < count; ++i) e[i] = list[i];
      for (int i = 1; i < count; ++i)  // insertion sort by k (each k is listed once)
        for (int j = i; j > 0 && e[j - 1].p > e[j].p; --j) {
          const Lossy t = e[j];
          e[j] = e[j - 1], e[j - 1] = t;
        }
      for (int i = 0; i < count; ++i) list[i] = e[i];
    }
    return;
  }
  for (long r = blockIdx.x; r < m; r += gridDim.x) split_row<float>(a, r, k, kp, nullptr, a_big, a_small, nullptr);
  const int tiles_x = int((n + 31) / 32);
  const long tiles = long(tiles_x) * ((kp + 31) / 32);
  for (long t = blockIdx.x; t < tiles; t += gridDim.x)
    split_tile<float>(b, int(t % tiles_x), int(t / tiles_x), int(k), int(n), int(kp), nullptr, b_big, b_small,
                      nullptr);
}

}  // namespace
}  // namespace mmlab
