// small: the small-problem path, where cuBLAS takes tens of microseconds and a launch more, a pad or
// transpose pass, or a memset before atomic split-k costs as much as the product. One launch, no
// preparation, no workspace, deterministic (a second launch and a workspace only for the 32- and
// 64-way splits of very deep k, below):
//   - small block tiles (128x64, 64x64, 32x64 or 32x32; 8x4 or 4x4 outputs per thread), so a few
//     hundred outputs already make many blocks;
//   - operands copied as stored by cp.async into a 4-stage pipeline (3 for 128-row tiles): 16-byte
//     copies where k and n are multiples of 4, 4-byte copies otherwise (any m, n, k without a padded
//     copy); rows and k past the edge are zero-filled by the copy itself;
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
// The kernel: kernels/small_kernel.cuh.
// Example: mmlab run --algorithms small,cublas --small.variant default,tf32x3 --shape 64x64x64,200x107x8855
#include <algorithm>
#include <cstdint>

#include "algorithms/kernels/reduce.cuh"
#include "algorithms/kernels/small_kernel.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/small_model.hpp"
#include "algorithms/models/split_k.hpp"

namespace mmlab {
namespace {

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
  const long sms = planning_sms(d), stages = (p.k + kDepth - 1) / kDepth;
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
  a.arithmetic_by = [](const Params& q) {  // tf32x3: three TF32 mma.sync products
    return q.variant() == "tf32x3" ? Arithmetic{MathUnit::tf32_tensor, 3} : Arithmetic{};
  };
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
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    return small_model(p, q, launch(p, q, d), d);
  });
}

}  // namespace mmlab
