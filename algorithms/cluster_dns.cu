// cluster_dns: the DNS 3D algorithm on a Hopper thread-block cluster. A px x py x pz cluster is
// DNS's processor grid: block (i, j, z) multiplies the k-slice z of its (i, j) tile pair, and the pz
// partial C tiles of an (i, j) column are reduced through distributed shared memory (DSMEM) inside
// the cluster: deterministic, no atomics, no workspace, no second kernel.
//
// Source: the Dekel-Nassimi-Sahni algorithm as O'Neil (2013) describes it (sec. 2.2: a 3D grid of
// processors, one product term each, then a reduction over the third dimension), with the blocks
// of a cluster as the processors and 128 x 128 x (k / pz) sub-products as the terms.
//
// Each block runs the flagship's k loop over its slice (algorithms/kernels/register_tiled_quads.cuh: the
// same pipeline and quads product), writes its partial tile into its own shared memory, and after a
// cluster barrier the partials are summed in the fixed order z = 0 .. pz - 1 by 16-byte DSMEM loads:
//   reduce=scatter  each of the pz blocks of a column sums and stores 1/pz of the tile's rows;
//   reduce=root     the block z = 0 sums and stores the whole tile (DNS's single receiver).
// Operands come from global memory (through L2) for every block: the broadcasts of A along j and
// of B along i are L2 hits, not DSMEM traffic. Blocks past the edge of C run on clamped rows and
// store nothing; the grid is rounded up to whole clusters. Any m, n, k (rows not 16-byte aligned are
// padded first, as in register_tiled).
// Example: mmlab run --algorithms cluster_dns,register_tiled,cublas --cluster 2x2x2,1x1x8 --size 4096
#include <cooperative_groups.h>

#include "algorithms/launch/aligned.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/ptx/dsmem.cuh"
#include "core/grid.hpp"

namespace mmlab {
namespace {

namespace cg = cooperative_groups;

constexpr int kTile = 128, kDepth = 16, kPitchC = kTile + 4;  // the flagship's tiles; partial C pitch

template <int kPX, int kPY, int kPZ, int kStages, int kQN>
__global__ void __launch_bounds__(Quads<kTile, kTile, kDepth, kQN>::kThreads,
                                  Quads<kTile, kTile, kDepth, kQN>::kMinBlocks)
    cluster_dns_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                       float* __restrict__ c, int ldc, int m, int n, int k, int k_per_slice, bool scatter) {
  using S = Quads<kTile, kTile, kDepth, kQN>;
  extern __shared__ __align__(128) float smem[];  // the pipeline's stages, then the partial tile
  const int z = blockIdx.z, row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int k_begin = z * k_per_slice, k_end = min(k, k_begin + k_per_slice);
  typename S::Acc acc = {};
  S::template mainloop<kStages>(smem, a, lda, b, ldb, m, row0, col0, k_begin, k_end, acc);

  __syncthreads();        // every thread has finished with the stages: they become the partial tile
  float* partial = smem;  // (kTile, kPitchC)
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int q = 0; q < 4 * kQN; ++q) partial[S::row_of(r) * kPitchC + S::col_of(q)] = acc[r][q];
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every partial of the cluster is complete

  // This block's rows of the sum, then each partial of its (i, j) column, in the order of z.
  const int rows = scatter ? kTile / kPZ : (z == 0 ? kTile : 0), first = scatter ? z * rows : 0;
  const unsigned column = (blockIdx.x % kPY) + (blockIdx.y % kPX) * kPY;  // rank of z = 0
  const float* peers[kPZ];
#pragma unroll
  for (int p = 0; p < kPZ; ++p) peers[p] = cluster.map_shared_rank(partial, column + p * kPX * kPY);
  const bool whole = n % 4 == 0;  // a row of C starts 16-byte aligned
  for (int e = threadIdx.x; e < rows * (kTile / 4); e += S::kThreads) {
    const int r = first + e / (kTile / 4), q = (e % (kTile / 4)) * 4;
    const int row = row0 + r, col = col0 + q;
    float4 sum = *reinterpret_cast<const float4*>(peers[0] + r * kPitchC + q);
#pragma unroll
    for (int p = 1; p < kPZ; ++p) {
      const float4 v = *reinterpret_cast<const float4*>(peers[p] + r * kPitchC + q);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    if (row >= m) continue;
    float* out = c + long(row) * ldc + col;
    if (whole && col + 3 < n) {
      *reinterpret_cast<float4*>(out) = sum;
    } else {
      const float s[4] = {sum.x, sum.y, sum.z, sum.w};
      for (int u = 0; u < 4 && col + u < n; ++u) out[u] = s[u];
    }
  }
  cluster.sync();  // no block leaves while a peer still reads its partial
}

struct Choice {
  Grid cluster;
  int qn, stages;
  bool scatter;
};
Choice choice(const Params& p) {
  return {parse_grid(p.text("cluster")), int(p.shape("warp").y / 32), int(p.integer("stages")),
          p.text("reduce") == "scatter"};
}

long k_per_slice(long k, int pz) {
  const long per = (k + pz - 1) / pz;
  return (per + kDepth - 1) / kDepth * kDepth;  // whole k tiles per slice
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  const Grid& g = ch.cluster;
  LaunchConfig lc;
  lc.block = {unsigned(32 * (kTile / 32) * (kTile / (32 * ch.qn))), 1, 1};
  lc.grid = {ceil_div(p.n, long(g.cols) * kTile) * g.cols, ceil_div(p.m, long(g.rows) * kTile) * g.rows,
             unsigned(g.layers)};
  lc.cluster = {unsigned(g.cols), unsigned(g.rows), unsigned(g.layers)};
  const std::size_t pipeline = std::size_t(ch.stages) * (kDepth * (kTile + 4) + kDepth * kTile);
  lc.shared_bytes = sizeof(float) * std::max<std::size_t>(pipeline, std::size_t(kTile) * kPitchC);
  return lc;
}

struct ClusterKernel {
  void (*launch)(const RunArgs&, const Operands&, const LaunchConfig&, int per, bool scatter);
  int (*fit)(const LaunchConfig&);
};

template <int kPX, int kPY, int kPZ, int kStages, int kQN>
void launch_kernel(const RunArgs& r, const Operands& o, const LaunchConfig& lc, int per, bool scatter) {
  auto kernel = cluster_dns_kernel<kPX, kPY, kPZ, kStages, kQN>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  if (kPX * kPY * kPZ > 8)
    MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m),
                     int(r.problem.n), o.k, per, scatter);
}
template <int kPX, int kPY, int kPZ, int kStages, int kQN>
int fit(const LaunchConfig& lc) {
  return clusters_that_fit(cluster_dns_kernel<kPX, kPY, kPZ, kStages, kQN>, lc);
}

// The compiled points: clusters 2x2x2 (DNS proper), 1x1x8 and 1x1x4 (pure k splits), 2x2x4 (16
// blocks: non-portable); warp tiles 32x64 (8x8 per thread) and 32x128 (8x16); 2 and 3 stages.
#define MMLAB_POINT(X, Y, Z, WN, S)                                                            \
  {{"default", {{"cluster", #X "x" #Y "x" #Z}, {"warp", shape_text(32, WN)}, {"stages", #S}}}, \
   ClusterKernel{launch_kernel<X, Y, Z, S, WN / 32>, fit<X, Y, Z, S, WN / 32>}},
#define MMLAB_GRID(X, Y, Z)   \
  MMLAB_POINT(X, Y, Z, 64, 2) \
  MMLAB_POINT(X, Y, Z, 64, 3) MMLAB_POINT(X, Y, Z, 128, 2) MMLAB_POINT(X, Y, Z, 128, 3)
const KernelTable<ClusterKernel> kKernels = {MMLAB_GRID(2, 2, 2) MMLAB_GRID(1, 1, 8) MMLAB_GRID(2, 2, 4)
                                                 MMLAB_GRID(1, 1, 4)};
#undef MMLAB_GRID
#undef MMLAB_POINT

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  return cluster_supports(p, d, "cluster_dns", q.text("cluster"),
                          [&] { return kKernels.at(q).fit(launch(p, q, d)); });
}

void run(const RunArgs& r) {
  const LaunchConfig lc = launch(r.problem, *r.params, *r.device);
  const Choice ch = choice(*r.params);
  const Operands o = aligned_operands(r);
  kKernels.at(*r.params).launch(r, o, lc, int(k_per_slice(r.problem.k, ch.cluster.layers)), ch.scatter);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(cluster_dns) {
  a.summary =
      "DNS's 3D grid as a px x py x pz thread-block cluster: k-slices, partial tiles summed through DSMEM";
  a.variants = {{"default", "128x128 tiles, the flagship's k loop per slice, deterministic DSMEM reduction"}};
  a.axes = {{"cluster", AxisKind::grid, "cluster px x py x pz: tile rows x tile columns x k-slices", "2x2x2"},
            {"warp", AxisKind::shape, "warp tile: 32x64 (8x8 per thread) or 32x128 (8x16)", "32x128"},
            {"stages", AxisKind::integer, "shared-memory pipeline stages", "2"},
            {"reduce",
             AxisKind::choice,
             "who sums a column's partial tiles: scatter (each block 1/pz of the rows) or root (z = 0, all)",
             "scatter",
             {"scatter", "root"}}};
  a.constraints = kClusterConstraints;
  a.supports = supports;
  a.workspace_bytes = aligned_workspace;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
