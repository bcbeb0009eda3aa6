// small: the small-problem path, where cuBLAS takes tens of microseconds and a launch more, a pad or
// transpose pass, or a memset before atomic split-k costs as much as the product. One launch, no
// preparation, no workspace, deterministic (a second launch and a workspace only for the 32- and
// 64-way splits of very deep k, below):
//   - small block tiles (128x64, 64x64, 32x64 or 32x32; 8x4 or 4x4 outputs per thread), so a few
//     hundred outputs already make many blocks;
//   - operands copied as stored by cp.async into a 4-stage pipeline (3 for 128-row tiles): 16-byte copies where k and n
//     are multiples of 4, 4-byte copies otherwise (any m, n, k without a padded copy); rows and k
//     past the edge are zero-filled by the copy itself;
//   - k split over the blocks of a thread-block cluster (sm_90): each block multiplies one k range of
//     the same output tile, leaves its partial tile in its shared memory, and after a cluster barrier
//     each block sums 1/split of the tile's rows over the cluster's partials, in rank order, through
//     distributed shared memory (DSMEM). The sum's order is fixed, so C is bit-identical run to run.
// The product: A's tile as stored (rows padded to 20 floats), read four k at a time by 16-byte loads;
// thread rows interleave (row = ty + i BM/4), so a warp's reads of A fall in different banks. The
// same DSMEM reduction as cluster_dns (O'Neil 2013, sec. 2.2, the DNS reduction over the third
// dimension), with tiles sized for problems of a few thousand outputs.
// Axis `split`: blocks per cluster along k; `auto` resolves to the largest of 1, 2, 4, 8, 16 that keeps
// the blocks within two per SM and each block at least two k steps of 16. Where k is deeper still
// (thousands of k per block at 16), 32 and 64 run groups of 8-block clusters along the grid's z, each
// group's sum stored to the workspace and added in group order by a second kernel: deterministic too.
// Example: mmlab run --algorithms small,cublas --shape 64x64x64,202x422x2103,200x107x8855
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "algorithms/kernels/reduce.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/split_k.hpp"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {
namespace cg = cooperative_groups;

constexpr int kDepth = 16;  // k per stage
constexpr int kPitchA = kDepth + 4;  // A's rows in shared memory: 80 bytes, 16-byte aligned

template <int BM, int BN, int TM>
struct Tile {
  static constexpr int kThreads = BM * BN / (4 * TM);  // TM x 4 outputs each
  static constexpr int kCols = BN / 4;                 // threads along n
  static constexpr int kRowStep = BM / TM;             // a thread's rows are ty + i kRowStep
  static constexpr int kStageFloats = BM * kPitchA + kDepth * BN;
  static constexpr int kStages = BM >= 128 ? 3 : 4;  // within the 48 KiB of static shared memory
  static constexpr int kSharedFloats = kStages * kStageFloats;
  static_assert(kSharedFloats >= BM * BN, "the partial tile reuses the pipeline's shared memory");
};

// A thread's share of each stage's copies, fixed for the whole k loop: its copies of A are rows
// r0 + i kARowStep at the same k offset qa, its copies of B k offsets qb + i kBRowStep of the same
// column cb (V = 4 floats per copy, 16 bytes, or 1 float). The row pointers and the bounds of m and n
// are worked out once; a stage adds its k and checks k_end.
template <int BM, int BN, int TM, bool kVec>
struct Loader {
  using T = Tile<BM, BN, TM>;
  static constexpr int V = kVec ? 4 : 1;
  static constexpr int kAPerRow = kDepth / V, kBPerRow = BN / V;  // copies per row of A, of B
  static constexpr int kACopies = BM * kAPerRow / T::kThreads, kBCopies = kDepth * kBPerRow / T::kThreads;
  static constexpr int kARowStep = T::kThreads / kAPerRow, kBRowStep = T::kThreads / kBPerRow;
  static_assert(kACopies >= 1 && kBCopies >= 1 && T::kThreads % kAPerRow == 0 && T::kThreads % kBPerRow == 0,
                "each thread copies whole strided rows");
  const float* a_row;  // A(row0 + r0, k_begin + qa)
  const float* b_col;  // B(k_begin + qb, col0 + cb)
  unsigned a_dst, b_dst;  // shared-window offsets within a stage
  unsigned a_rows;        // bit i: row r0 + i kARowStep is inside A
  bool b_inside;          // column col0 + cb is inside B
  int qa, qb;             // k offsets within a stage

  __device__ Loader(const float* a, const float* b, int m, int n, int k, int row0, int col0, int k_begin) {
    const int t = threadIdx.x, r0 = t / kAPerRow, cb = (t % kBPerRow) * V;
    qa = (t % kAPerRow) * V, qb = t / kBPerRow;
    a_row = a + long(row0 + r0) * k + k_begin + qa;
    b_col = b + long(k_begin + qb) * n + col0 + cb;
    a_dst = 4u * (r0 * kPitchA + qa), b_dst = 4u * (BM * kPitchA + qb * BN + cb);
    a_rows = 0;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) a_rows |= unsigned(row0 + r0 + i * kARowStep < m) << i;
    b_inside = col0 + cb < n;
  }

  // Stage `s` of this block's k range (k0 = k_begin + s kDepth, ks = s kDepth) into `stage`.
  __device__ __forceinline__ void load(unsigned stage, int ks, int k_left, int k, int n) const {
    const bool a_k = qa < k_left;  // k_left = k_end - k0 (a 16-byte copy is all inside or all outside)
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const bool in = a_k && (a_rows >> i & 1u);
      const float* src = a_row + long(i * kARowStep) * k + ks;  // not read where !in (a zero-size copy)
      const unsigned dst = stage + a_dst + 4u * (i * kARowStep * kPitchA);
      if constexpr (kVec) copy16(dst, src, in);
      else copy4(dst, src, in);
    }
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      const bool in = b_inside && qb + i * kBRowStep < k_left;
      const float* src = b_col + long(ks + i * kBRowStep) * n;
      const unsigned dst = stage + b_dst + 4u * (i * kBRowStep * BN);
      if constexpr (kVec) copy16(dst, src, in);
      else copy4(dst, src, in);
    }
  }
};

// Stores four consecutive outputs of row `row` from column `col` (those inside C).
__device__ __forceinline__ void store4(float* __restrict__ c, int m, int n, int row, int col, float4 v,
                                      bool vec) {
  if (row >= m) return;
  float* out = c + long(row) * n + col;
  if (vec && col + 3 < n) {
    *reinterpret_cast<float4*>(out) = v;
  } else {
    const float s[4] = {v.x, v.y, v.z, v.w};
    for (int u = 0; u < 4 && col + u < n; ++u) out[u] = s[u];
  }
}

// Block (x, y): output tile (y, x / split), k range x % split (its rank in the cluster of `split`
// blocks along x), `per` k (whole stages) each.
template <int BM, int BN, int TM, bool kVec>
__global__ void __launch_bounds__(Tile<BM, BN, TM>::kThreads)
    small_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k, int split, int per) {
  using T = Tile<BM, BN, TM>;
  __shared__ __align__(16) float smem[T::kSharedFloats];
  const int rank = blockIdx.x % split, part = blockIdx.z * split + rank;  // rank in the cluster; k part
  const int row0 = blockIdx.y * BM, col0 = (blockIdx.x / split) * BN;
  c += long(blockIdx.z) * m * n;  // with groups: this group's slice of the workspace
  const int k_begin = part * per, k_end = min(k, k_begin + per);
  const int steps = max(0, (k_end - k_begin + kDepth - 1) / kDepth);
  const int tx = threadIdx.x % T::kCols, ty = threadIdx.x / T::kCols;
  float acc[TM][4] = {};
  const Loader<BM, BN, TM, kVec> loader(a, b, m, n, k, row0, col0, k_begin);
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));

#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < steps) loader.load(base + 4u * s * T::kStageFloats, s * kDepth, k_end - k_begin - s * kDepth, k, n);
    commit();
  }
  for (int t = 0; t < steps; ++t) {
    wait_for<T::kStages - 2>();
    __syncthreads();  // stage t is in; every thread is done with the stage that t + T::kStages - 1 reuses
    const int next = t + T::kStages - 1;
    if (next < steps)
      loader.load(base + 4u * (next % T::kStages) * T::kStageFloats, next * kDepth, k_end - k_begin - next * kDepth, k, n);
    commit();
    const float* as = smem + (t % T::kStages) * T::kStageFloats;
    const float* bs = as + BM * kPitchA;
#pragma unroll
    for (int q = 0; q < kDepth; q += 4) {
      float4 av[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        av[i] = *reinterpret_cast<const float4*>(as + (ty + i * T::kRowStep) * kPitchA + q);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float4 bv = *reinterpret_cast<const float4*>(bs + (q + j) * BN + tx * 4);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float x = j == 0 ? av[i].x : j == 1 ? av[i].y : j == 2 ? av[i].z : av[i].w;
          acc[i][0] = fmaf(x, bv.x, acc[i][0]);
          acc[i][1] = fmaf(x, bv.y, acc[i][1]);
          acc[i][2] = fmaf(x, bv.z, acc[i][2]);
          acc[i][3] = fmaf(x, bv.w, acc[i][3]);
        }
      }
    }
  }
  const bool vec = kVec && (reinterpret_cast<std::uintptr_t>(c) % 16 == 0);
  if (split == 1) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
      store4(c, m, n, row0 + ty + i * T::kRowStep, col0 + tx * 4,
             make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), vec);
    return;
  }
  wait_for<0>();
  __syncthreads();  // the stages become this block's partial tile (BM x BN)
#pragma unroll
  for (int i = 0; i < TM; ++i)
    *reinterpret_cast<float4*>(smem + (ty + i * T::kRowStep) * BN + tx * 4) =
        make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every partial of the cluster is complete
  const int first = rank * BM / split, last = (rank + 1) * BM / split;  // this block's rows of the sum
  for (int e = threadIdx.x; e < (last - first) * (BN / 4); e += T::kThreads) {
    const int r = first + e / (BN / 4), q = (e % (BN / 4)) * 4;
    float4 sum = *reinterpret_cast<const float4*>(cluster.map_shared_rank(smem, 0u) + r * BN + q);
    for (int s = 1; s < split; ++s) {
      const float4 v = *reinterpret_cast<const float4*>(cluster.map_shared_rank(smem, unsigned(s)) + r * BN + q);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    store4(c, m, n, row0 + r, col0 + q, sum, vec);
  }
  __syncwarp();    // the loop's lanes ran different counts: the cluster barrier is warp-aligned
  cluster.sync();  // no block leaves while a peer still reads its partial
}

// How k is divided: up to 16 parts over one cluster's blocks; 32 and 64 as groups (grid z) of clusters
// of 8, each group's sum stored to its slice of the workspace and the groups added in group order by a
// second kernel. A group or block past the end of k multiplies nothing (its partial is zero).
struct Division {
  long cluster = 1, groups = 1, per = 0;  // blocks per cluster, clusters along k, k per block
};
Division division(const Problem& p, const Params& q) {
  const long asked = q.integer("split");
  Division d;
  if (asked <= 16) {
    const SplitK s = split_k(p.k, kDepth, asked);
    d.cluster = s.blocks, d.per = s.k_per_block(kDepth);
  } else {
    d.cluster = 8, d.groups = asked / 8;
    d.per = split_k(p.k, kDepth, asked).k_per_block(kDepth);
  }
  return d;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Shape2 tile = q.shape("tile");
  const Division d = division(p, q);
  LaunchConfig lc;
  lc.block = {unsigned(tile.x * tile.y / (4 * q.shape("thread").x)), 1, 1};
  lc.grid = {ceil_div(p.n, tile.y) * unsigned(d.cluster), ceil_div(p.m, tile.x), unsigned(d.groups)};
  lc.cluster = {unsigned(d.cluster), 1, 1};
  lc.shared_bytes = 0;  // static
  return lc;
}

struct SmallKernel {
  void (*launch)(const RunArgs&, const LaunchConfig&, bool vec, int split, int per);
  int (*fit)(const LaunchConfig&, bool vec);
};

template <int BM, int BN, int TM>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc, bool vec, int split, int per) {
  const Problem& p = r.problem;
  auto kernel = vec ? small_kernel<BM, BN, TM, true> : small_kernel<BM, BN, TM, false>;
  if (split > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, r.a, r.b, r.c, int(p.m), int(p.n), int(p.k), split, per);
}
template <int BM, int BN, int TM>
int fit(const LaunchConfig& lc, bool vec) {
  return clusters_that_fit(vec ? small_kernel<BM, BN, TM, true> : small_kernel<BM, BN, TM, false>, lc);
}

// The compiled points: block tile x outputs per thread (one instance per copy width each; the split
// is a launch parameter, any of kSplits).
const std::vector<std::string> kSplits = {"auto", "1", "2", "4", "8", "16", "32", "64"};
#define MMLAB_POINT(BM, BN, TM)                                       \
  {{"default", {{"tile", #BM "x" #BN}, {"thread", #TM "x4"}}}, \
   SmallKernel{launch_kernel<BM, BN, TM>, fit<BM, BN, TM>}},
const KernelTable<SmallKernel> kKernels = {MMLAB_POINT(64, 64, 4) MMLAB_POINT(64, 64, 8) MMLAB_POINT(32, 64, 4)
                                               MMLAB_POINT(32, 64, 8) MMLAB_POINT(32, 32, 4)
                                                   MMLAB_POINT(128, 64, 8)};
#undef MMLAB_POINT

// Whether the 16-byte copies apply: rows of A and B start 16-byte aligned (k and n multiples of 4).
bool vectorized(const Problem& p) { return p.k % 4 == 0 && p.n % 4 == 0; }

// `auto`: the largest split of 1, 2, 4, 8, 16 whose blocks stay within two per SM and give each block
// at least two stages of k (8 where a cluster of 16 does not fit).
Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (q.text("split") != "auto") return q;
  const Shape2 tile = q.shape("tile");
  const long tiles = long(ceil_div(p.m, tile.x)) * long(ceil_div(p.n, tile.y));
  const long sms = d.sm_count > 0 ? d.sm_count : 132, stages = (p.k + kDepth - 1) / kDepth;
  long split = 1;
  while (split < 16 && tiles * (2 * split) <= 2 * sms && stages >= 2 * (2 * split)) split *= 2;
  Params out = q;
  out.set("split", std::to_string(split));
  if (split == 16 && d.present && kKernels.at(out).fit(launch(p, out, d), vectorized(p)) == 0) out.set("split", "8");
  return out;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (q.text("split") == "auto") return std::nullopt;  // resolved before it runs
  if (Reason r = fits_int(p)) return r;
  const Shape2 tile = q.shape("tile");
  if (ceil_div(p.m, tile.x) > 65535) return "m / tile rows must be at most 65535 (the grid's y)";
  const LaunchConfig lc = launch(p, q, d);
  if (double(lc.grid.x) > double(INT_MAX)) return "n / tile columns x split exceeds the grid's x";
  return cluster_supports(p, d, "small", std::to_string(lc.cluster.x) + "-block",
                          [&] { return kKernels.at(q).fit(lc, vectorized(p)); });
}

std::size_t workspace(const Problem& p, const Params& q) {
  if (q.text("split") == "auto") return 0;  // auto resolves to 16 at most: one cluster
  const Division d = division(p, q);
  return d.groups > 1 ? sizeof(float) * std::size_t(d.groups) * std::size_t(p.m * p.n) : 0;
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const Division d = division(p, *r.params);
  const bool vec = vectorized(p) && reinterpret_cast<std::uintptr_t>(r.a) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(r.b) % 16 == 0;
  RunArgs out = r;
  if (d.groups > 1) out.c = static_cast<float*>(r.workspace);
  kKernels.at(*r.params).launch(out, lc, vec, int(d.cluster), int(d.per));
  MMLAB_CHECK_LAUNCH();
  if (d.groups > 1) {
    const long count = p.m * p.n;
    add_slices_kernel<<<unsigned(std::min<long>(ceil_div(count, 256), 4L * r.device->sm_count)), 256, 0,
                        r.stream>>>(out.c, r.c, count, int(d.groups));
    MMLAB_CHECK_LAUNCH();
  }
}

}  // namespace

MMLAB_ALGORITHM(small) {
  a.summary =
      "small problems in one launch: small tiles, cp.async as stored, k split over a cluster and summed "
      "through DSMEM (deterministic)";
  a.variants = {{"default", "4 stages of 16 k, no pad, no memset; a workspace only for split 32 and 64"}};
  a.axes = {{"tile", AxisKind::shape, "block tile: 128x64, 64x64, 32x64 or 32x32", "64x64"},
            {"thread", AxisKind::shape, "outputs per thread, rows x columns: 4x4 or 8x4", "8x4"},
            {"split",
             AxisKind::choice,
             "k parts: up to 16 blocks of a cluster, reduced through DSMEM; 32, 64: groups of 8-block clusters, "
             "the groups added by a second kernel; auto: up to 16, two blocks per SM at most",
             "auto",
             kSplits,
             {}}};
  a.resolve = resolve;
  a.constraints =
      "compute capability 9.0 (clusters); m, n, k below 2^31; any alignment (4-byte copies where k or n "
      "is not a multiple of 4); a split of more blocks than k stages runs one block per stage (up to 16)";
  a.supports = supports;
  a.workspace_bytes = workspace;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
