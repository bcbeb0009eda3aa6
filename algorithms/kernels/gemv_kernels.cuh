// gemv's kernels (algorithms/gemv.cu says how it divides the work and which runs where): rows (m <=
// 2, B's rows in registers), ring_rows (m of 3-16, B's rows through a cp.async ring per warp), cols
// (n = 1, A's rows by 16-byte loads at any k), and the cluster's sum they end with. Included by gemv.cu
// only.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kTileCols = 4 * 32;  // rows: a warp's columns, four per lane
constexpr int kRound = 8;          // rows: rows of B a lane has in flight
constexpr int kRows = 4;           // ring_rows: rows of B in a stage of a warp's ring
constexpr int kStages = 4;         // ring_rows: stages of the ring (kStages - 1 in flight)
constexpr int kColsRound = 4;      // cols: 16-byte loads of A a thread issues together (two rounds alternate)
constexpr int kColsBlocks = 4;     // cols: blocks an SM holds (64 registers a thread at most)

// The cluster's sum of the blocks' partial tiles (`sums`, `count` floats each, complete in every
// block), each block adding its share in rank order and handing each sum to store(e, s).
template <class Store>
__device__ __forceinline__ void cluster_sum(float* sums, int count, Store store) {
  const unsigned split = gridDim.x, rank = blockIdx.x;  // the cluster runs along x: rank = blockIdx.x
  if (split == 1) {
    for (int e = threadIdx.x; e < count; e += kThreads) store(e, sums[e]);
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's partial tile is complete
  const int first = int(rank) * count / int(split), last = int(rank + 1) * count / int(split);
  for (int e = first + threadIdx.x; e < last; e += kThreads) {
    float s = cluster.map_shared_rank(sums, 0u)[e];
    for (unsigned p = 1; p < split; ++p) s += cluster.map_shared_rank(sums, p)[e];
    store(e, s);
  }
  __syncwarp();    // the loop's lanes ran different counts: the cluster barrier is warp-aligned
  cluster.sync();  // no block leaves while a peer still reads its partial tile
}

// The rows kernels' end: each warp's R x 4 sums (lane's column j: column(j) of its 128) into `sums`,
// the interleaved warps' sums added in order (this block's partial tile [R][G x 128] in the first
// slot), then the cluster's sum of the tiles stored to C.
template <int R, int G, class Column>
__device__ __forceinline__ void rows_epilogue(float* sums, const float (&acc)[R][4], int first, int group,
                                              Column column, long col0, int m, int n, float* __restrict__ c) {
  constexpr int kBlockCols = G * kTileCols;
  constexpr int kStep = kWarps / G;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < 4; ++j) sums[(first * R + r) * kBlockCols + kTileCols * group + column(j)] = acc[r][j];
  if (kStep > 1) {
    __syncthreads();
    for (int e = threadIdx.x; e < R * kBlockCols; e += kThreads) {
      float s = sums[e];
      for (int h = 1; h < kStep; ++h) s += sums[h * R * kBlockCols + e];
      sums[e] = s;
    }
  }
  __syncthreads();
  cluster_sum(sums, R * kBlockCols, [&](int e, float s) {
    const int r = e / kBlockCols;
    const long col = col0 + e % kBlockCols;
    if (r < m && col < n) c[long(r) * n + col] = s;
  });
}

// A load of the streamed operand where `in` (else zeros), not kept in L1 (read once; on an H100, timed
// after the L2 flush, the cols kernel's geometric mean over 22 problems went 1.00 -> 1.08x cuBLAS with
// it, up to 25% faster, 2-3% slower at 16384x1x16384 and 70000x1x3000; under ncu, which also empties
// L1, the two ran alike: data/flagship/weak-classes/h100-1c145fa/, h100-91099d5/), or by __ldg where
// kBypass is false. One predicated load,
// no branch: loads in branches that the warp leaves apart broke compute-sanitizer's synccheck at the
// barrier after them (h100-91099d5/).
template <bool kBypass>
__device__ __forceinline__ float4 stream_load4(const float* p, bool in) {
  if (!kBypass) return in ? __ldg(reinterpret_cast<const float4*>(p)) : make_float4(0.f, 0.f, 0.f, 0.f);
  float4 v;
  asm("{\n"
      "  .reg .pred p_in;\n"
      "  setp.ne.b32 p_in, %5, 0;\n"
      "  mov.f32 %0, 0f00000000;\n"
      "  mov.f32 %1, 0f00000000;\n"
      "  mov.f32 %2, 0f00000000;\n"
      "  mov.f32 %3, 0f00000000;\n"
      "  @p_in ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];\n"
      "}"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p), "r"(int(in)));
  return v;
}
template <bool kBypass>
__device__ __forceinline__ float stream_load(const float* p, bool in) {
  if (!kBypass) return in ? __ldg(p) : 0.f;
  float v;
  asm("{\n"
      "  .reg .pred p_in;\n"
      "  setp.ne.b32 p_in, %2, 0;\n"
      "  mov.f32 %0, 0f00000000;\n"
      "  @p_in ld.global.nc.L1::no_allocate.f32 %0, [%1];\n"
      "}"
      : "=f"(v)
      : "l"(p), "r"(int(in)));
  return v;
}

// rows: the sums of A's rows r < m <= R over this block's k range, for its G x 128 columns of B: warp
// w takes the 128 columns of group w % G and interleaved rows w / G, w / G + 8 / G, ... of the range,
// so a block reads G x 512 bytes of a row of B at once; the interleaved warps' sums are added in order.
template <int R, bool kVec, int G, bool kBypass>
__global__ void __launch_bounds__(kThreads)
    rows_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                int k, int per) {
  constexpr int kBlockCols = G * kTileCols;
  constexpr int kStep = kWarps / G;  // rows of B between a warp's consecutive ones
  extern __shared__ __align__(16) float sums[];  // [kStep][R][kBlockCols], then the block's [R][kBlockCols]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = warp % G, first = warp / G;
  const long col0 = long(blockIdx.y) * kBlockCols, cols = col0 + kTileCols * group;
  const int kb = int(blockIdx.x) * per, len = max(0, min(k, kb + per) - kb);
  // The warp's column of this lane's j-th sum: four consecutive ones, or one in each quarter.
  auto column = [&](int j) { return kVec ? 4 * lane + j : lane + 32 * j; };
  // A round: 8 rows of B (four columns each) and A's values for them, all in flight at once.
  auto load_round = [&](int q0, float (&v)[kRound][4], float (&x)[kRound][R]) {
#pragma unroll
    for (int u = 0; u < kRound; ++u) {
      const int q = q0 + u * kStep;
#pragma unroll
      for (int r = 0; r < R; ++r) x[u][r] = q < len && r < m ? __ldg(a + long(r) * k + kb + q) : 0.f;
      const float* row = b + long(kb + q) * n + cols;
      if (kVec) {
        const bool in = q < len && cols + 4 * lane < n;  // n % 4 == 0: all four or none
        const float4 x = stream_load4<kBypass>(row + 4 * lane, in);
        v[u][0] = x.x, v[u][1] = x.y, v[u][2] = x.z, v[u][3] = x.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[u][j] = stream_load<kBypass>(row + column(j), q < len && cols + column(j) < n);
      }
    }
  };
  float acc[R][4] = {};
  float v[kRound][4], next[kRound][4], x[kRound][R], next_x[kRound][R];
  load_round(first, v, x);
  for (int q0 = first; q0 < len; q0 += kStep * kRound) {
    if (q0 + kStep * kRound < len) load_round(q0 + kStep * kRound, next, next_x);  // in flight meanwhile
#pragma unroll
    for (int u = 0; u < kRound; ++u) {
      if (q0 + u * kStep >= len) break;  // the rest of the round is past the range (v is zero there)
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[r][j] = fmaf(x[u][r], v[u][j], acc[r][j]);
    }
#pragma unroll
    for (int u = 0; u < kRound; ++u) {
#pragma unroll
      for (int j = 0; j < 4; ++j) v[u][j] = next[u][j];
#pragma unroll
      for (int r = 0; r < R; ++r) x[u][r] = next_x[u][r];
    }
  }
  rows_epilogue<R, G>(sums, acc, first, group, column, col0, m, n, c);
}

// ring_rows (m <= R, R = 4, 8 or 16): rows' division of the work, but each warp streams its rows
// through its own ring of kStages stages in shared memory (kRows rows of B, four columns a lane, and
// A's values for those rows) by cp.async: kStages - 1 stages in flight hold no registers, where rows'
// rounds in registers beside R x 4 sums do not fit (on an H100, data/flagship/weak-classes/: at
// 8x12544x9451 the flagship ran small at 0.76x cuBLAS, h100-7e77ac9/; at 4x12000x12000 rows took 302
// us, h100-3fd945f/, and ring_rows 219, h100-c793048/, cuBLAS 284-286 in each run; at m = 1 ring_rows
// was no faster than rows, and at 1x10814x16315 312 us against rows' 266-267, h100-c793048/ against
// h100-3fd945f/, cuBLAS 307 in each). A lane multiplies the columns it copied itself; A's values,
// copied by some lanes for all, are read after the warp's barrier. (16-byte pieces from each row's
// boundary at any n and a deeper ring took twice the instructions and ran slower still: h100-0cbb417/.)
template <int R, bool kVec, int G>
__global__ void __launch_bounds__(kThreads)
    ring_rows_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                int k, int per) {
  constexpr int kBlockCols = G * kTileCols;
  constexpr int kStep = kWarps / G;  // rows of B between a warp's consecutive ones
  // [warp][stage][row][lane] float4 of B, then [warp][stage][row][R] floats of A; after the loop, the
  // warps' sums [kStep][R][kBlockCols], the block's [R][kBlockCols] in the first slot.
  extern __shared__ __align__(16) float ring[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = warp % G, first = warp / G;
  const long col0 = long(blockIdx.y) * kBlockCols, cols = col0 + kTileCols * group;
  const int kb = int(blockIdx.x) * per, len = max(0, min(k, kb + per) - kb);
  const int count = len > first ? (len - first + kStep - 1) / kStep : 0;  // this warp's rows of B
  const int stages = (count + kRows - 1) / kRows;
  float4* ring_b = reinterpret_cast<float4*>(ring) + warp * kStages * kRows * 32;
  float* ring_a = ring + kWarps * kStages * kRows * 128 + warp * kStages * kRows * R;
  // The warp's column of this lane's j-th value: four consecutive ones, or one in each quarter.
  auto column = [&](int j) { return kVec ? 4 * lane + j : lane + 32 * j; };
  auto load_stage = [&](int t) {
    const int slot = t % kStages;
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const int q = first + kStep * (t * kRows + u);  // past len: zeros, nothing read
      const float* row = b + long(kb + min(q, len - 1)) * n + cols;
      const unsigned dst = unsigned(__cvta_generic_to_shared(ring_b + (slot * kRows + u) * 32 + lane));
      if (kVec) {
        copy16(dst, row + 4 * lane, q < len && cols + 4 * lane < n);  // n % 4 == 0: all four or none
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) copy4(dst + 4 * j, row + column(j), q < len && cols + column(j) < n);
      }
    }
    for (int e = lane; e < kRows * R; e += 32) {
      const int u = e / R, r = e % R, q = first + kStep * (t * kRows + u);
      const bool in = q < len && r < m;
      copy4(unsigned(__cvta_generic_to_shared(ring_a + slot * kRows * R + e)),
            in ? a + long(r) * k + kb + q : a, in);
    }
  };
  float acc[R][4] = {};
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < stages) load_stage(t);
    commit();  // empty groups too: the count of groups in flight stays the loop's
  }
  for (int t = 0; t < stages; ++t) {
    wait_for<kStages - 2>();  // stage t has landed (this thread's copies)
    __syncwarp();             // ... and every lane's; the slot of stage t - 1 is read by all
    if (t + kStages - 1 < stages) load_stage(t + kStages - 1);
    commit();
    const int slot = t % kStages;
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const float4 v = ring_b[(slot * kRows + u) * 32 + lane];
      const float* x = ring_a + (slot * kRows + u) * R;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float xr = x[r];
        acc[r][0] = fmaf(xr, v.x, acc[r][0]);
        acc[r][1] = fmaf(xr, v.y, acc[r][1]);
        acc[r][2] = fmaf(xr, v.z, acc[r][2]);
        acc[r][3] = fmaf(xr, v.w, acc[r][3]);
      }
    }
  }
  wait_for<0>();
  __syncwarp();     // the warp's lanes together at the block's barrier
  __syncthreads();  // the ring is free: the sums take its place
  float* sums = ring;
  rows_epilogue<R, G>(sums, acc, first, group, column, col0, m, n, c);
}

// B's four values b[q .. q + 3] (n = 1) where A's 16-byte boundary puts q at P past one of B's (B
// 16-byte aligned): one 16-byte load where P = 0, else the two 16-byte pieces around them (L1 hits: B
// is small and every warp reads it), the second one by its needed values alone where it would pass
// B's end (k).
template <int P>
__device__ __forceinline__ float4 vector_at(const float* __restrict__ b, int q, int k) {
  const float4* pieces = reinterpret_cast<const float4*>(b + q - P);
  const float4 lo = __ldg(pieces);
  if (P == 0) return lo;
  float4 hi;
  if (q - P + 8 <= k) {
    hi = __ldg(pieces + 1);
  } else {
    const float* after = b + q - P + 4;
    hi.x = __ldg(after);
    hi.y = P > 1 ? __ldg(after + 1) : 0.f;
    hi.z = P > 2 ? __ldg(after + 2) : 0.f;
    hi.w = 0.f;
  }
  if (P == 1) return make_float4(lo.y, lo.z, lo.w, hi.x);
  if (P == 2) return make_float4(lo.z, lo.w, hi.x, hi.y);
  return make_float4(lo.w, hi.x, hi.y, hi.z);
}

// cols: rows of A times B (a vector) over this block's k range, W warps on each row (8 / W rows a
// block: W x 2 KB of a row contiguous in a round). kVec (A and B 16-byte aligned, any k): a row starts
// at row * k, so its first 16-byte boundary lies P = (4 - row * k % 4) % 4 values in; the row's first
// P threads take the values before it one each, and from it on every load of A is a 16-byte one
// (before, where k % 4 != 0, four 4-byte loads a lane: at 7302x1x5817 on an H100 0.72x cuBLAS). P is
// the same for the whole warp: the loop is compiled for each. Two rounds of loads alternate (one in
// flight while the other is multiplied, no copy between them that would wait for it).
template <bool kVec, int W>
__global__ void __launch_bounds__(kThreads, kColsBlocks)
    cols_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                int /*n = 1*/, int k, int per) {
  constexpr int kBlockRows = kWarps / W, kRowThreads = 32 * W, kStride = 4 * kRowThreads * kColsRound;
  extern __shared__ __align__(16) float sums[];  // the warps' sums, then the block's partial tile
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = (warp % W) * 32 + lane;  // this thread's place on its row
  const long row = long(blockIdx.y) * kBlockRows + warp / W;
  const long read = min(row, long(m) - 1);  // a row past m reads the last and stores nothing
  const int kb = int(blockIdx.x) * per, ke = min(k, kb + per);  // per % 4 == 0
  const float* arow = a + read * k;
  float acc = 0.f;
  auto range = [&](auto shift) {
    constexpr int P = decltype(shift)::value;
    if (t < P && kb + t < ke) acc = __ldg(arow + kb + t) * __ldg(b + kb + t);
    auto load_round = [&](int q0, float4(&v)[kColsRound]) {
#pragma unroll
      for (int u = 0; u < kColsRound; ++u) {
        const int q = q0 + 4 * kRowThreads * u;  // this thread's first of four consecutive k
        const bool whole = kVec && q + 3 < ke;
        v[u] = stream_load4<true>(arow + q, whole);
        if (!whole) {
          v[u].x = q < ke ? __ldg(arow + q) : 0.f;
          v[u].y = q + 1 < ke ? __ldg(arow + q + 1) : 0.f;
          v[u].z = q + 2 < ke ? __ldg(arow + q + 2) : 0.f;
          v[u].w = q + 3 < ke ? __ldg(arow + q + 3) : 0.f;
        }
      }
    };
    auto multiply = [&](int q0, const float4(&v)[kColsRound]) {
#pragma unroll
      for (int u = 0; u < kColsRound; ++u) {
        const int q = q0 + 4 * kRowThreads * u;
        if (kVec && q + 3 < ke) {  // B's four values by 16-byte loads
          const float4 y = vector_at<P>(b, q, k);
          acc = fmaf(v[u].x, y.x, fmaf(v[u].y, y.y, fmaf(v[u].z, y.z, fmaf(v[u].w, y.w, acc))));
          continue;
        }
        const float x[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (q + i < ke) acc = fmaf(x[i], __ldg(b + q + i), acc);  // x is zero past it, and B ends there
      }
    };
    // base: the row's first k of a round (the same for its threads); q = base + 4 t.
    float4 v0[kColsRound], v1[kColsRound];
    int base = kb + P;  // 16-byte aligned in A (kVec)
    load_round(base + 4 * t, v0);
    while (true) {
      if (base + kStride >= ke) { multiply(base + 4 * t, v0); break; }
      load_round(base + kStride + 4 * t, v1);
      multiply(base + 4 * t, v0);
      base += kStride;
      if (base + kStride >= ke) { multiply(base + 4 * t, v1); break; }
      load_round(base + kStride + 4 * t, v0);
      multiply(base + 4 * t, v1);
      base += kStride;
    }
  };
  switch (kVec ? int((4 - read * k % 4) % 4) : 0) {
    case 0: range(std::integral_constant<int, 0>{}); break;
    case 1: range(std::integral_constant<int, 1>{}); break;
    case 2: range(std::integral_constant<int, 2>{}); break;
    default: range(std::integral_constant<int, 3>{}); break;
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) sums[warp] = acc;
  __syncthreads();
  float* tile = sums + kWarps;
  if (W > 1) {
    if (threadIdx.x < kBlockRows) {
      float s = sums[threadIdx.x * W];
#pragma unroll
      for (int h = 1; h < W; ++h) s += sums[threadIdx.x * W + h];
      tile[threadIdx.x] = s;
    }
    __syncthreads();
  } else {
    tile = sums;
  }
  cluster_sum(tile, kBlockRows, [&](int e, float s) {
    const long i = long(blockIdx.y) * kBlockRows + e;
    if (i < m) c[i] = s;
  });
}

}  // namespace
}  // namespace mmlab
