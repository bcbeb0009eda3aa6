// small: the small-problem path, where cuBLAS takes tens of microseconds and a launch more, a pad or
// transpose pass, or a memset before atomic split-k costs as much as the product. One launch, no
// preparation, no workspace, deterministic (a second launch and a workspace only for the 32- and
// 64-way splits of very deep k, below):
//   - small block tiles (128x64, 64x64, 32x64 or 32x32; 8x4 or 4x4 outputs per thread), so a few
//     hundred outputs already make many blocks;
//   - operands copied as stored by cp.async into a 4-stage pipeline (3 for 128-row tiles): 16-byte
//     copies where k and n are multiples of 4, 4-byte copies otherwise (any m, n, k without a padded copy); rows and k
//     past the edge are zero-filled by the copy itself;
//   - k split over the blocks of a thread-block cluster (sm_90): each block multiplies one k range of
//     the same output tile, leaves its partial tile in its shared memory, and after a cluster barrier
//     each block sums 1/split of the tile's rows over the cluster's partials, in rank order, through
//     distributed shared memory (DSMEM). The sum's order is fixed, so C is bit-identical run to run.
// Variants, the product of each stage: `default`, FP32 FFMA (A's tile as stored, rows padded to 20
// floats, read four k at a time by 16-byte loads); `tf32x3`, FP32-accurate, the stage's values split
// into TF32 big + small parts in registers and multiplied by three mma.sync products (the split of
// tf32x3.cu's split3, fused: no split pass, no padding, so the FP32-accurate class has a one-launch
// path for small work). The k reduction is cluster_dns's DSMEM sum (O'Neil 2013, sec. 2.2, the DNS
// reduction over the third dimension), with tiles sized for problems of a few thousand outputs.
// Axis `split`: blocks per cluster along k; `auto` resolves to the largest of 1, 2, 4, 8, 16 that keeps
// the blocks within two per SM and each block at least two k steps of 16. Where k is deeper still
// (thousands of k per block at 16), 32 and 64 run groups of 8-block clusters along the grid's z, each
// group's sum stored to the workspace and added in group order by a second kernel: deterministic too.
// Example: mmlab run --algorithms small,cublas --small.variant default,tf32x3 --shape 64x64x64,200x107x8855
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "algorithms/kernels/reduce.cuh"
#include "algorithms/kernels/tf32_split.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/split_k.hpp"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {
namespace cg = cooperative_groups;

constexpr int kDepth = 16;  // k per stage
constexpr int kPitchA = kDepth + 4;  // A's rows in shared memory: 80 bytes, 16-byte aligned

// The product of the staged tiles: FP32 FFMA, or FP32-accurate three TF32 products (tf32x3).
enum class Product { ffma, tf32x3 };

template <int BM, int BN, int TM, Product P = Product::ffma>
struct Tile {
  static constexpr int kThreads = BM * BN / (4 * TM);  // TM x 4 outputs each
  // B's rows in shared memory: as copied for FFMA's 16-byte reads along n; 8 floats more for the
  // mma fragments, whose 4 k rows x 8 columns then fall in 32 different banks.
  static constexpr int kPitchB = P == Product::ffma ? BN : BN + 8;
  static constexpr int kStageFloats = BM * kPitchA + kDepth * kPitchB;
  static constexpr int kStages = BM >= 128 ? 3 : 4;  // within the 48 KiB of static shared memory
  static constexpr int kSharedFloats = kStages * kStageFloats;
  static_assert(kSharedFloats >= BM * BN, "the partial tile reuses the pipeline's shared memory");
};

// A thread's share of each stage's copies, fixed for the whole k loop: its copies of A are rows
// r0 + i kARowStep at the same k offset qa, its copies of B k offsets qb + i kBRowStep of the same
// column cb (V = 4 floats per copy, 16 bytes, or 1 float). The row pointers and the bounds of m and n
// are worked out once; a stage adds its k and checks k_end.
template <int BM, int BN, int TM, Product P, bool kVec>
struct Loader {
  using T = Tile<BM, BN, TM, P>;
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
    a_dst = 4u * (r0 * kPitchA + qa), b_dst = 4u * (BM * kPitchA + qb * T::kPitchB + cb);
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
      const unsigned dst = stage + b_dst + 4u * (i * kBRowStep * T::kPitchB);
      if constexpr (kVec) copy16(dst, src, in);
      else copy4(dst, src, in);
    }
  }
};

// Stores W consecutive outputs of row `row` from column `col` (those inside C); `vec`: one W-wide
// store where the run is whole (n a multiple of 4 and C 16-byte aligned).
template <int W>
__device__ __forceinline__ void store(float* __restrict__ c, int m, int n, int row, int col, const float (&v)[W],
                                      bool vec) {
  if (row >= m) return;
  float* out = c + long(row) * n + col;
  if (vec && col + W - 1 < n) {
    if constexpr (W == 4) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<float2*>(out) = make_float2(v[0], v[1]);
  } else {
    for (int u = 0; u < W && col + u < n; ++u) out[u] = v[u];
  }
}

// The FFMA product: TM x 4 outputs per thread, rows ty + i kRowStep (interleaved, so a warp's reads
// of A fall in different banks), columns 4 tx .. 4 tx + 3.
template <int BM, int BN, int TM>
struct Ffma {
  static constexpr int kCols = BN / 4;      // threads along n
  static constexpr int kRowStep = BM / TM;  // a thread's rows are ty + i kRowStep
  static constexpr int W = 4;               // consecutive outputs per run
  float acc[TM][4] = {};
  int tx = int(threadIdx.x) % kCols, ty = int(threadIdx.x) / kCols;

  __device__ __forceinline__ void stage(const float* as, const float* bs) {
#pragma unroll
    for (int q = 0; q < kDepth; q += 4) {
      float4 av[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        av[i] = *reinterpret_cast<const float4*>(as + (ty + i * kRowStep) * kPitchA + q);
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
  // f(row, col, outputs): each run of W consecutive outputs of the thread, tile coordinates.
  template <typename F>
  __device__ __forceinline__ void each(F f) const {
#pragma unroll
    for (int i = 0; i < TM; ++i) f(ty + i * kRowStep, tx * 4, acc[i]);
  }
};

// The FP32-accurate product (tf32x3.cu's split3 recipe, fused into the k loop): each warp a
// 4TM x 32 tile of m16n8k8 TF32 mma.sync fragments; every value read from the stage is split into
// big + small (kernels/tf32_split.cuh) and small*big + big*small + big*big accumulate the stage's
// part, which is added into the FP32 sums by an ordinary add (the error grows with the stages, not
// with k inside one mma chain).
template <int BM, int BN, int TM>
struct Tf32x3 {
  using T = Tile<BM, BN, TM, Product::tf32x3>;
  static constexpr int W = 2;
  static constexpr int kWM = 4 * TM, kMi = TM / 4, kNj = 4;  // warp tile kWM x 32: kMi x kNj fragments
  static_assert(TM % 4 == 0 && BM % kWM == 0 && BN % 32 == 0, "whole warp tiles");
  float acc[kMi][kNj][4] = {};
  int wm, wn, g, t;  // the warp tile's origin; the lane's group and thread in group

  __device__ Tf32x3() {
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    wm = (warp % (BM / kWM)) * kWM, wn = (warp / (BM / kWM)) * 32, g = lane / 4, t = lane % 4;
  }
  __device__ __forceinline__ void stage(const float* as, const float* bs) {
    float part[kMi][kNj][4] = {};
#pragma unroll
    for (int kk = 0; kk < kDepth; kk += 8) {
      unsigned a_big[kMi][4], a_small[kMi][4], b_big[kNj][2], b_small[kNj][2];
#pragma unroll
      for (int i = 0; i < kMi; ++i)
        split_a_fragment(as + (wm + 16 * i + g) * kPitchA + kk + t, kPitchA, a_big[i], a_small[i]);
#pragma unroll
      for (int j = 0; j < kNj; ++j)
        split_b_fragment(bs + (kk + t) * T::kPitchB + wn + 8 * j + g, T::kPitchB, b_big[j], b_small[j]);
#pragma unroll
      for (int i = 0; i < kMi; ++i)
#pragma unroll
        for (int j = 0; j < kNj; ++j) {
          mma(part[i][j], a_small[i], b_big[j]);
          mma(part[i][j], a_big[i], b_small[j]);
          mma(part[i][j], a_big[i], b_big[j]);
        }
    }
#pragma unroll
    for (int i = 0; i < kMi; ++i)
#pragma unroll
      for (int j = 0; j < kNj; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
  }
  // A fragment's elements e = 0, 1 (row g) and 2, 3 (row g + 8) are column pairs 2t, 2t + 1.
  template <typename F>
  __device__ __forceinline__ void each(F f) const {
#pragma unroll
    for (int i = 0; i < kMi; ++i)
#pragma unroll
      for (int j = 0; j < kNj; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
          f(wm + 16 * i + g + 8 * h, wn + 8 * j + 2 * t, v);
        }
  }
};

template <int BM, int BN, int TM, Product P>
using ProductOf = std::conditional_t<P == Product::ffma, Ffma<BM, BN, TM>, Tf32x3<BM, BN, TM>>;

// Block (x, y): output tile (y, x / split), k range x % split (its rank in the cluster of `split`
// blocks along x), `per` k (whole stages) each.
template <int BM, int BN, int TM, Product P, bool kVec>
__global__ void __launch_bounds__(Tile<BM, BN, TM, P>::kThreads)
    small_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k, int split, int per) {
  using T = Tile<BM, BN, TM, P>;
  __shared__ __align__(16) float smem[T::kSharedFloats];
  const int rank = blockIdx.x % split, part = blockIdx.z * split + rank;  // rank in the cluster; k part
  const int row0 = blockIdx.y * BM, col0 = (blockIdx.x / split) * BN;
  c += long(blockIdx.z) * m * n;  // with groups: this group's slice of the workspace
  const int k_begin = part * per, k_end = min(k, k_begin + per);
  const int steps = max(0, (k_end - k_begin + kDepth - 1) / kDepth);
  ProductOf<BM, BN, TM, P> product;
  const Loader<BM, BN, TM, P, kVec> loader(a, b, m, n, k, row0, col0, k_begin);
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
    product.stage(as, as + BM * kPitchA);
  }
  constexpr int W = decltype(product)::W;
  const bool vec = kVec && (reinterpret_cast<std::uintptr_t>(c) % 16 == 0);
  if (split == 1) {
    product.each([&](int r, int q, const float(&v)[W]) { store<W>(c, m, n, row0 + r, col0 + q, v, vec); });
    return;
  }
  wait_for<0>();
  __syncthreads();  // the stages become this block's partial tile (BM x BN)
  product.each([&](int r, int q, const float(&v)[W]) {
    if constexpr (W == 4) *reinterpret_cast<float4*>(smem + r * BN + q) = make_float4(v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<float2*>(smem + r * BN + q) = make_float2(v[0], v[1]);
  });
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
    const float out[4] = {sum.x, sum.y, sum.z, sum.w};
    store<4>(c, m, n, row0 + r, col0 + q, out, vec);
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

template <int BM, int BN, int TM, Product P>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc, bool vec, int split, int per) {
  const Problem& p = r.problem;
  auto kernel = vec ? small_kernel<BM, BN, TM, P, true> : small_kernel<BM, BN, TM, P, false>;
  if (split > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, r.a, r.b, r.c, int(p.m), int(p.n), int(p.k), split, per);
}
template <int BM, int BN, int TM, Product P>
int fit(const LaunchConfig& lc, bool vec) {
  return clusters_that_fit(vec ? small_kernel<BM, BN, TM, P, true> : small_kernel<BM, BN, TM, P, false>, lc);
}

// The compiled points: product (variant) x block tile x outputs per thread, one instance per copy
// width each; the split is a launch parameter, any of kSplits.
const std::vector<std::string> kSplits = {"auto", "1", "2", "4", "8", "16", "32", "64"};
#define MMLAB_POINT(V, P, BM, BN, TM)                      \
  {{#V, {{"tile", #BM "x" #BN}, {"thread", #TM "x4"}}},    \
   SmallKernel{launch_kernel<BM, BN, TM, Product::P>, fit<BM, BN, TM, Product::P>}},
#define MMLAB_POINTS(V, P)                                                                                    \
  MMLAB_POINT(V, P, 64, 64, 4) MMLAB_POINT(V, P, 64, 64, 8) MMLAB_POINT(V, P, 32, 64, 4)                     \
  MMLAB_POINT(V, P, 32, 64, 8) MMLAB_POINT(V, P, 32, 32, 4) MMLAB_POINT(V, P, 128, 64, 8)
const KernelTable<SmallKernel> kKernels = {MMLAB_POINTS(default, ffma) MMLAB_POINTS(tf32x3, tf32x3)};
#undef MMLAB_POINTS
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
  a.variants = {{"default", "FP32 FFMA; 4 stages of 16 k, no pad, no memset; a workspace only for split 32 and 64"},
                {"tf32x3",
                 "FP32-accurate: each stage's values split big + small in registers, three TF32 mma.sync products "
                 "(no split pass, no padding: one launch)"}};
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
