// tf32x3's presplit path (sm_90a; variants presplit3, presplit2 with TF32 parts, half3, half2 with FP16
// parts): the pass that splits A and B once, and the wgmma product that reads the parts by TMA;
// algorithms/tf32x3.cu says how they split the work.
#pragma once

#include <climits>

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
