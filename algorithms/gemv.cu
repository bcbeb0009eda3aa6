// gemv: C = A B where m is at most 16 or n is 1 (a row vector or a few rows times B; A times a
// vector), where the time is the large operand's bytes read from DRAM once and
// nothing else (before it, at m = 1 on an H100, skinny's rows kernel ran at 0.43-0.48x cuBLAS and the
// flagship, running small, at 0.59-0.83x: data/flagship/weak-classes/weak-baseline.csv).
//
// rows (m <= 2, B streamed): a lane keeps four columns of B (one 16-byte load per row where n % 4 ==
// 0, else four coalesced 4-byte loads) and the m x 4 sums of them, a round of 8 rows of B in flight
// while the round before is multiplied, A's values for those rows loaded with them (a warp reads one
// address: a broadcast). A block of 256 threads (8 warps) takes `width` columns (128 G) and a range
// of k: G warps side by side on a row of B (G x 512 contiguous bytes at once: at 1x8192x8192 on an
// H100, 79% of the DRAM peak at G = 8 against 60% at G = 1, ncu), the other 8 / G on interleaved
// rows, their sums added in shared memory in order.
// ring_rows (m of 3-16): the same division, each warp's rows of B and A's values for them streamed
// through its own ring in shared memory by cp.async (3 stages of 4 rows in flight a warp), where 4 to
// 16 rows' sums leave too few registers for rounds in flight.
// cols (n = 1, m larger; A streamed; `width` plays no part): a warp takes a row of A and a range of k,
// a lane four consecutive k at a time (one 16-byte load from the row's first 16-byte boundary on, at
// any k), 4 loads in flight while the 4 before are multiplied by B's values (16-byte loads, L1 and L2
// hits: B is small), and a shuffle tree adds the lanes' sums. A few columns (n of 2-4) are skinny's: B's
// rows read where used made this kernel 5x slower than skinny at 12000x4x12000 (h100-a50aa38/).
// The k ranges of one output tile are the blocks of a thread-block cluster (up to 16): each block
// sums its share of the tile over the cluster in rank order through distributed shared memory: one
// launch, no workspace, the same sum on every run. The cluster's size is chosen so that about three
// blocks per SM stream at once (rows), or the device's block slots are filled once (cols). Wider
// small sides are skinny's and small's.
// Accepts any k; m <= 16 (capacity 1, 2, 4, 8 or 16 rows) or n = 1.
// Example: mmlab run --algorithms gemv,skinny,cublas --gemv.width all --shape 1x8192x8192,8192x1x8192,12x3001x7000 --l2-flush on
#include <atomic>
#include <map>
#include <mutex>
#include <type_traits>

#include <cooperative_groups.h>

#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/gemv_model.hpp"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kTileCols = 4 * 32;  // rows: a warp's columns, four per lane
constexpr int kRound = 8;          // rows: rows of B a lane has in flight
constexpr int kRows = 4;           // ring_rows: rows of B in a stage of a warp's ring
constexpr int kStages = 4;         // ring_rows: stages of the ring (kStages - 1 in flight)
constexpr int kColsRound = 4;      // cols: 16-byte loads of A a lane has in flight
constexpr long kMaxRows = 16;      // rows and ring_rows: m at most
constexpr long kMaxCols = 1;       // cols: n at most
constexpr int kRingFrom = 4;       // the capacity from which ring_rows takes the rows
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

// rows: the sums of A's rows r < m <= R over this block's k range, for its G x 128 columns of B: warp
// w takes the 128 columns of group w % G and interleaved rows w / G, w / G + 8 / G, ... of the range,
// so a block reads G x 512 bytes of a row of B at once; the interleaved warps' sums are added in order.
template <int R, bool kVec, int G>
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
        const float4 x = in ? __ldg(reinterpret_cast<const float4*>(row) + lane) : make_float4(0.f, 0.f, 0.f, 0.f);
        v[u][0] = x.x, v[u][1] = x.y, v[u][2] = x.z, v[u][3] = x.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[u][j] = q < len && cols + column(j) < n ? __ldg(row + column(j)) : 0.f;
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
// 8x12544x9451 the flagship ran small at 0.76x cuBLAS, h100-7e77ac9/; rows took 302 us at 4x12000x12000
// and ring_rows 219, h100-3fd945f/ and h100-c793048/; at m = 1 ring_rows was no faster than rows, 17%
// slower at 1x10814x16315). A lane multiplies the columns it copied itself; A's values, copied by some
// lanes for all, are read after the warp's barrier. (16-byte pieces from each row's boundary at any n
// and a deeper ring took twice the instructions and ran slower still: h100-0cbb417/.)
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

// cols: row (blockIdx.y * 8 + warp) of A times B (a vector) over this block's k range. kVec (A and B
// 16-byte aligned, any k): a row starts at row * k, so its first 16-byte boundary lies P = (4 - row *
// k % 4) % 4 values in; lanes 0 .. P - 1 take the values before it one each, and from it on every load
// of A is a 16-byte one (before, where k % 4 != 0, four 4-byte loads a lane: at 7302x1x5817 on an
// H100 0.72x cuBLAS). P is the same for the whole warp: the loop is compiled for each.
template <bool kVec>
__global__ void __launch_bounds__(kThreads, kColsBlocks)
    cols_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                int /*n = 1*/, int k, int per) {
  extern __shared__ __align__(16) float sums[];  // the block's partial tile: its 8 rows
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long row = long(blockIdx.y) * kWarps + warp;
  const long read = min(row, long(m) - 1);  // a row past m reads the last and stores nothing
  const int kb = int(blockIdx.x) * per, ke = min(k, kb + per);  // per % 4 == 0
  const float* arow = a + read * k;
  float acc = 0.f;
  auto range = [&](auto shift) {
    constexpr int P = decltype(shift)::value;
    if (lane < P && kb + lane < ke) acc = __ldg(arow + kb + lane) * __ldg(b + kb + lane);
    const int first = kb + P;  // 16-byte aligned in A (kVec)
    auto load_round = [&](int q0, float4(&v)[kColsRound]) {
#pragma unroll
      for (int u = 0; u < kColsRound; ++u) {
        const int q = q0 + 128 * u;  // this lane's first of four consecutive k
        if (kVec && q + 3 < ke) {
          v[u] = __ldg(reinterpret_cast<const float4*>(arow + q));
        } else {
          v[u].x = q < ke ? __ldg(arow + q) : 0.f;
          v[u].y = q + 1 < ke ? __ldg(arow + q + 1) : 0.f;
          v[u].z = q + 2 < ke ? __ldg(arow + q + 2) : 0.f;
          v[u].w = q + 3 < ke ? __ldg(arow + q + 3) : 0.f;
        }
      }
    };
    float4 v[kColsRound], next[kColsRound];
    load_round(first + 4 * lane, v);
    for (int q0 = first + 4 * lane; q0 - 4 * lane < ke; q0 += 128 * kColsRound) {
      if (q0 - 4 * lane + 128 * kColsRound < ke) load_round(q0 + 128 * kColsRound, next);  // in flight meanwhile
#pragma unroll
      for (int u = 0; u < kColsRound; ++u) {
        const int q = q0 + 128 * u;
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
#pragma unroll
      for (int u = 0; u < kColsRound; ++u) v[u] = next[u];
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
  cluster_sum(sums, kWarps, [&](int e, float s) {
    const long i = long(blockIdx.y) * kWarps + e;
    if (i < m) c[i] = s;
  });
}

// The small side rounded up to the kernels' capacity: 1, 2, 4, 8 or 16 (cols: 1).
int capacity(long side) {
  int r = 1;
  while (r < side) r *= 2;
  return r;
}

// How the problem is cut: rows (m small) or cols, the columns of B a block takes (rows: its axis
// `width`, 128 x G), its output tiles (grid y), the blocks of a cluster along k (grid x) and the k of
// each, at most `most` per cluster. rows: enough blocks for about three per SM, each with at least 64
// k; cols: as many as the device's block slots (`slots`) hold at once, each with at least 512 k (at
// 1575x1x1241 on an H100 3 blocks a cluster, 1.1 waves, took 14.5 us and 2, one wave, 12.0).
struct Division {
  bool rows;
  int side;    // capacity of the small side
  int groups;  // rows: G, the 128-column groups of a block
  long tiles;  // rows: 128 G columns of B each; cols: 8 rows of A each
  int split, per;
};
Division division(const Problem& p, const Params& q, double sms, long slots, int most) {
  Division d;
  d.rows = p.m <= kMaxRows && (p.n > kMaxCols || p.m <= p.n);
  d.side = capacity(d.rows ? p.m : p.n);
  d.groups = d.rows ? int(q.integer("width") / kTileCols) : 1;
  d.tiles = d.rows ? ceil_div(p.n, long(d.groups) * kTileCols) : ceil_div(p.m, kWarps);
  const long least = d.rows ? 64 : 128 * kColsRound;  // k of a block at the least
  const long wanted = d.rows ? (long(3 * sms) + d.tiles - 1) / d.tiles : slots / d.tiles;
  d.split = int(std::max(1L, std::min({wanted, (p.k + least - 1) / least, long(most)})));
  d.per = int((p.k + d.split - 1) / d.split);
  if (!d.rows) d.per = (d.per + 127) / 128 * 128;  // each block's k a multiple of 4: rows' 16-byte boundaries
  d.split = int((p.k + d.per - 1) / d.per);        // no block without k
  return d;
}

// rows: the warps' sums; ring_rows: the warps' rings (B's rows and A's values; the sums fit in them);
// cols: the block's partial tile.
std::size_t shared_bytes(const Division& d) {
  if (!d.rows) return sizeof(float) * kWarps * d.side;
  if (d.side < kRingFrom) return sizeof(float) * kWarps * d.side * kTileCols;  // any G
  return sizeof(float) * kWarps * kStages * kRows * (kTileCols + d.side);
}

using Kernel = void (*)(const float*, const float*, float*, int, int, int, int);

// The compiled kernel of a cut, A and B 16-byte aligned or not.
template <int R, bool kVec>
Kernel kernel_of(const Division& d) {
  if constexpr (R == 1) {
    if (!d.rows) return cols_kernel<kVec>;
  }
  if constexpr (R < kRingFrom) {
    switch (d.groups) {
      case 1: return rows_kernel<R, kVec, 1>;
      case 2: return rows_kernel<R, kVec, 2>;
      case 4: return rows_kernel<R, kVec, 4>;
      default: return rows_kernel<R, kVec, 8>;
    }
  } else {
    switch (d.groups) {
      case 1: return ring_rows_kernel<R, kVec, 1>;
      case 2: return ring_rows_kernel<R, kVec, 2>;
      case 4: return ring_rows_kernel<R, kVec, 4>;
      default: return ring_rows_kernel<R, kVec, 8>;
    }
  }
}
Kernel kernel_for(const Division& d, bool vec) {
  switch (d.side) {
    case 1: return vec ? kernel_of<1, true>(d) : kernel_of<1, false>(d);
    case 2: return vec ? kernel_of<2, true>(d) : kernel_of<2, false>(d);
    case 4: return vec ? kernel_of<4, true>(d) : kernel_of<4, false>(d);
    case 8: return vec ? kernel_of<8, true>(d) : kernel_of<8, false>(d);
    default: return vec ? kernel_of<16, true>(d) : kernel_of<16, false>(d);
  }
}

// Whether the large operand's rows start 16-byte aligned (the pointers themselves are checked at run
// time); the cols kernel finds each row's first 16-byte boundary itself.
bool vectorizable(const Problem& p, const Division& d) { return !d.rows || p.n % 4 == 0; }

LaunchConfig launch_of(const Division& d) {
  LaunchConfig lc;
  lc.block = {unsigned(kThreads), 1, 1};
  lc.grid = {unsigned(d.split), unsigned(d.tiles), 1};
  lc.cluster = {unsigned(d.split), 1, 1};
  lc.shared_bytes = shared_bytes(d);
  return lc;
}

// cols: the block slots of the device, SMs x the kernel's occupancy, asked of the device once per
// kernel (without a GPU, an H100's 132 SMs and the launch bounds' blocks).
long block_slots(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Division cut = division(p, q, 1, 1, 1);  // the kernel and its shared memory: any split's
  long per_sm = kColsBlocks;
  if (d.present && !cut.rows) {
    static std::mutex lock;
    static std::map<Kernel, int> known;
    const Kernel kernel = kernel_for(cut, true);
    std::lock_guard<std::mutex> hold(lock);
    auto it = known.find(kernel);
    if (it == known.end()) it = known.emplace(kernel, resident_blocks(kernel, kThreads, shared_bytes(cut))).first;
    per_sm = it->second;
  }
  return long(model_sms(d)) * std::max(1L, per_sm);
}

// Clusters of up to 16 blocks where one fits on the device (it holds non-portable clusters of 16),
// else of up to 8; asked of the device once per kernel and cluster size.
Division division(const Problem& p, const Params& q, const DeviceInfo& d) {
  const long slots = block_slots(p, q, d);
  const Division most = division(p, q, model_sms(d), slots, 16);
  if (!d.present || most.split <= 8) return most;
  static std::atomic<signed char> fits[9][5][2][17];  // kernel (cols; rows by G), log2 capacity, vec, split
  static std::once_flag unknown;
  std::call_once(unknown, [] {
    for (auto& a : fits)
      for (auto& b : a)
        for (auto& c : b)
          for (auto& f : c) f = -1;  // unknown
  });
  const bool vec = vectorizable(p, most);
  int log2_side = 0;
  while ((1 << log2_side) < most.side) ++log2_side;
  std::atomic<signed char>& known = fits[most.rows * most.groups][log2_side][vec][most.split];
  if (known < 0) known = clusters_that_fit(kernel_for(most, vec), launch_of(most)) > 0 ? 1 : 0;
  return known ? most : division(p, q, model_sms(d), slots, 8);
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo& d) { return launch_of(division(p, q, d)); }

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (p.m > kMaxRows && p.n > kMaxCols)
    return "gemv needs m at most 16 or n = 1 (a GEMV-like shape; wider: skinny, small)";
  if (Reason r = fits_int(p)) return r;
  const long width = q.integer("width");
  if (width != 128 && width != 256 && width != 512 && width != 1024)
    return "width must be 128, 256, 512 or 1024 (128 columns per warp, 1, 2, 4 or 8 warps side by side)";
  const Division s = division(p, q, model_sms(d), block_slots(p, q, d), 16);
  if (s.tiles > 65535)
    return std::string(s.rows ? "n / width" : "m / 8") + " output tiles must be at most 65535 (the grid's y)";
  if (d.present && d.cc_major < 9) return "thread-block clusters need compute capability 9.0 or newer";
  return std::nullopt;
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Division d = division(p, *r.params, *r.device);
  const LaunchConfig lc = launch_of(d);
  auto aligned = [](const float* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0; };
  const Kernel kernel = kernel_for(d, vectorizable(p, d) && aligned(r.a) && aligned(r.b));
  allow_shared_bytes(kernel, lc.shared_bytes);
  if (lc.cluster.x > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, r.a, r.b, r.c, int(p.m), int(p.n), int(p.k), d.per);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(gemv) {
  a.summary =
      "m <= 16 or n = 1 (GEMV-like): the large operand streamed once with 16-byte loads, k split over a "
      "cluster and summed through DSMEM (one launch, deterministic)";
  a.variants = {{"default", "rows (m <= 16): a block per `width` columns of B and a k range, a warp per 128 of "
                            "them and every 8 / G-th row (m >= 3: streamed through a cp.async ring); cols (n = 1, "
                            "m larger): a warp per row of A"}};
  a.axes = {{"width",
             AxisKind::integer,
             "columns of B a block of the rows kernel takes (128 G: G warps side by side on a row of B, 8 / G on "
             "interleaved rows); the cols kernel has none",
             "1024",
             {"128", "256", "512", "1024"},
             {"default"}}};
  a.constraints =
      "m <= 16 or n = 1; any k; at most 65535 output tiles (n / width or m / 8); compute capability 9.0";
  a.supports = supports;
  a.launch_config = launch;
  a.run = run;
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const Division s = division(p, q, d);
    return gemv_model(p, q, {s.rows, s.side, long(s.split) * s.tiles});
  });
}

}  // namespace mmlab
