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
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/launch/tma_operands.cuh"
#include "algorithms/ptx/dsmem.cuh"
#include "algorithms/ptx/tma.cuh"
#include "core/grid.hpp"

namespace mmlab {
namespace {

namespace cg = cooperative_groups;

constexpr int kTile = 128, kDepth = 16;  // the default variant's tiles

// The end of both kernels: this block's partial tile `acc` into its own shared memory at `partial`
// (kBM rows of pitch kBN + 4), a cluster barrier, then the sum over z of its (i, j) column's partials in
// the order of z by 16-byte DSMEM loads: this block's 1/pz of the rows (scatter) or, at z = 0, all of
// them (root), stored to C; a last cluster barrier keeps every partial alive while a peer reads it.
template <int kPX, int kPY, int kPZ, class S, int kBM, int kBN>
__device__ __forceinline__ void reduce_in_cluster(const typename S::Acc& acc, float* partial, float* __restrict__ c,
                                                  int ldc, int m, int n, int row0, int col0, bool scatter) {
  constexpr int kPitch = kBN + 4;
  const int z = blockIdx.z;
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int q = 0; q < int(sizeof(acc[0]) / sizeof(float)); ++q) partial[S::row_of(r) * kPitch + S::col_of(q)] = acc[r][q];
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every partial of the cluster is complete

  const int rows = scatter ? kBM / kPZ : (z == 0 ? kBM : 0), first = scatter ? z * rows : 0;
  const unsigned column = (blockIdx.x % kPY) + (blockIdx.y % kPX) * kPY;  // rank of z = 0
  const float* peers[kPZ];
#pragma unroll
  for (int p = 0; p < kPZ; ++p) peers[p] = cluster.map_shared_rank(partial, column + p * kPX * kPY);
  const bool whole = n % 4 == 0;  // a row of C starts 16-byte aligned
  for (int e = threadIdx.x; e < rows * (kBN / 4); e += S::kThreads) {
    const int r = first + e / (kBN / 4), q = (e % (kBN / 4)) * 4;
    const int row = row0 + r, col = col0 + q;
    float4 sum = *reinterpret_cast<const float4*>(peers[0] + r * kPitch + q);
#pragma unroll
    for (int p = 1; p < kPZ; ++p) {
      const float4 v = *reinterpret_cast<const float4*>(peers[p] + r * kPitch + q);
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

  __syncthreads();  // every thread has finished with the stages: they become the partial tile
  reduce_in_cluster<kPX, kPY, kPZ, S, kTile, kTile>(acc, smem, c, ldc, m, n, row0, col0, scatter);
}

// The `tma` variant: the same 3D grid and reduction around tma_tiled's product (A^T and B tiles by
// `cp.async.bulk.tensor`, one thread issuing them, an mbarrier per stage; 128 x 256 tiles of 8 x 16
// per thread at one block an SM; algorithms/tma_tiled.cu). A slice is whole k tiles, so no tile
// crosses into the next slice; TMA zero-fills past m, n and k. The mbarriers sit past both the stages
// and the partial tile, which reuses the stages' memory.
template <int kPX, int kPY, int kPZ, int kBM, int kBN, int kBK, int kStages, int kQN>
__global__ void __launch_bounds__(Quads<kBM, kBN, kBK, kQN, 0>::kThreads, Quads<kBM, kBN, kBK, kQN, 0>::kMinBlocks)
    cluster_dns_tma_kernel(const __grid_constant__ CUtensorMap at_map, const __grid_constant__ CUtensorMap b_map,
                           float* __restrict__ c, int ldc, int m, int n, int k, int k_per_slice, bool scatter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Quads<kBM, kBN, kBK, kQN, 0>;
  constexpr int kBarriers = kStages * S::kStage > kBM * (kBN + 4) ? kStages * S::kStage : kBM * (kBN + 4);
  extern __shared__ __align__(128) float smem[];  // the stages (later the partial tile), then the mbarriers
  std::uint64_t* const landed = reinterpret_cast<std::uint64_t*>(smem + kBarriers);
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_slice, k_end = min(k, k_begin + k_per_slice);
  const int tiles = k_end > k_begin ? (k_end - k_begin + kBK - 1) / kBK : 0;
  auto stage = [&](int t) { return smem + (t % kStages) * S::kStage; };
  auto issue = [&](int t) {  // thread 0: tile t (its stage's last readers are done)
    fence_async_shared();
    std::uint64_t* bar = &landed[t % kStages];
    mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
    tma_load_2d(stage(t), at_map, row0, k_begin + t * kBK, bar);
    tma_load_2d(stage(t) + S::kTileA, b_map, col0, k_begin + t * kBK, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(&landed[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int t = 0; t < kStages - 1 && t < tiles; ++t) issue(t);
  typename S::Acc acc = {};
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait_cta(&landed[t % kStages], unsigned(t / kStages) & 1u);  // tile t has landed
    __syncthreads();  // every thread is done with tile t - 1: its stage may be overwritten
    if (threadIdx.x == 0 && t + kStages - 1 < tiles) issue(t + kStages - 1);
    S::product(stage(t), stage(t) + S::kTileA, acc);
  }
  __syncthreads();  // every thread has finished with the stages: they become the partial tile
  reduce_in_cluster<kPX, kPY, kPZ, S, kBM, kBN>(acc, smem, c, ldc, m, n, row0, col0, scatter);
#endif
}

enum class Kind { loads, tma };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"default", "128x128 tiles, the flagship's k loop per slice, deterministic DSMEM reduction"},
    {"tma", "tma_tiled's product per slice (TMA loads, 128x256 tiles of 8x16, 32 deep), the same reduction"}};
constexpr int kTmaDepth = 32;  // the tma variant's k tile

struct Choice {
  Grid cluster;
  int bm, bn, qn, depth, stages;
  bool scatter, tma;
};
Choice choice(const Params& p) {
  const bool tma = variant_kind<Kind>(kVariants, p) == Kind::tma;
  const Shape2 tile = tma ? p.shape("tile") : Shape2{kTile, kTile};
  return {parse_grid(p.text("cluster")), int(tile.x), int(tile.y), int(p.shape("warp").y / 32),
          tma ? kTmaDepth : kDepth, int(p.integer("stages")), p.text("reduce") == "scatter", tma};
}

long k_per_slice(long k, int pz, int depth) {
  const long per = (k + pz - 1) / pz;
  return (per + depth - 1) / depth * depth;  // whole k tiles per slice
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  const Grid& g = ch.cluster;
  LaunchConfig lc;
  lc.block = {unsigned(32 * (ch.bm / 32) * (ch.bn / (32 * ch.qn))), 1, 1};
  lc.grid = {ceil_div(p.n, long(g.cols) * ch.bn) * g.cols, ceil_div(p.m, long(g.rows) * ch.bm) * g.rows,
             unsigned(g.layers)};
  lc.cluster = {unsigned(g.cols), unsigned(g.rows), unsigned(g.layers)};
  const long pitch_a = ch.tma ? ch.bm : ch.bm + 4;  // A^T's rows as TMA writes them, or padded for the stores
  const std::size_t pipeline = std::size_t(ch.stages) * ch.depth * (pitch_a + ch.bn);
  lc.shared_bytes = sizeof(float) * std::max<std::size_t>(pipeline, std::size_t(ch.bm) * (ch.bn + 4)) +
                    (ch.tma ? 8 * std::size_t(ch.stages) : 0);  // and the tma variant's mbarriers
  return lc;
}

// The workspace: A^T (and B padded where needed) for TMA, else the rows padded to 16 bytes where needed.
std::size_t workspace(const Problem& p, const Params& q) {
  return choice(q).tma ? sizeof(float) * tma_operand_floats(p) : aligned_workspace(p, q);
}

struct ClusterKernel {
  void (*launch)(const RunArgs&, const LaunchConfig&, const Choice&);
  int (*fit)(const LaunchConfig&);
};

template <int kPX, int kPY, int kPZ, int kStages, int kQN>
void launch_loads(const RunArgs& r, const LaunchConfig& lc, const Choice& ch) {
  auto kernel = cluster_dns_kernel<kPX, kPY, kPZ, kStages, kQN>;
  allow_clusters(kernel, lc, kPX * kPY * kPZ);
  const Operands o = aligned_operands(r);
  launch_in_clusters(kernel, lc, r.stream, o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m),
                     int(r.problem.n), o.k, int(k_per_slice(o.k, kPZ, kDepth)), ch.scatter);
}
template <int kPX, int kPY, int kPZ, int kBM, int kBN, int kStages, int kQN>
void launch_tma(const RunArgs& r, const LaunchConfig& lc, const Choice& ch) {
  auto kernel = cluster_dns_tma_kernel<kPX, kPY, kPZ, kBM, kBN, kTmaDepth, kStages, kQN>;
  allow_clusters(kernel, lc, kPX * kPY * kPZ);
  const Problem& p = r.problem;
  const TmaOperands o = tma_operands(r);
  TensorMaps& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap at = maps.get(o.at, p.k, p.m, pitch_t(p), kTmaDepth, kBM);
  const CUtensorMap b = maps.get(o.b, p.k, p.n, o.ldb, kTmaDepth, kBN);
  launch_in_clusters(kernel, lc, r.stream, at, b, r.c, int(p.n), int(p.m), int(p.n), int(p.k),
                     int(k_per_slice(p.k, kPZ, kTmaDepth)), ch.scatter);
}

// The compiled points. default: clusters 2x2x2 (DNS proper), 1x1x8 and 1x1x4 (pure k splits), 2x2x4 (16
// blocks: non-portable); warp tiles 32x64 (8x8 per thread) and 32x128 (8x16); 2 and 3 stages. tma: 2x2x2
// and 1x1x4 with the flagship's 4096 kernel (128x256 tiles of 8x16, 3 stages), 2x2x2 with 128x128 tiles
// of 8x8 (two blocks an SM).
#define MMLAB_POINT(X, Y, Z, WN, S)                                                            \
  {{"default", {{"cluster", #X "x" #Y "x" #Z}, {"warp", shape_text(32, WN)}, {"stages", #S}}}, \
   ClusterKernel{launch_loads<X, Y, Z, S, WN / 32>,                                            \
                 [](const LaunchConfig& lc) { return clusters_that_fit(cluster_dns_kernel<X, Y, Z, S, WN / 32>, lc); }}},
#define MMLAB_GRID(X, Y, Z)   \
  MMLAB_POINT(X, Y, Z, 64, 2) \
  MMLAB_POINT(X, Y, Z, 64, 3) MMLAB_POINT(X, Y, Z, 128, 2) MMLAB_POINT(X, Y, Z, 128, 3)
#define MMLAB_TMA(X, Y, Z, BM, BN, WN, S)                                                                   \
  {{"tma",                                                                                                 \
    {{"cluster", #X "x" #Y "x" #Z}, {"tile", shape_text(BM, BN)}, {"warp", shape_text(32, WN)}, {"stages", #S}}}, \
   ClusterKernel{launch_tma<X, Y, Z, BM, BN, S, WN / 32>, [](const LaunchConfig& lc) {                      \
                   return clusters_that_fit(cluster_dns_tma_kernel<X, Y, Z, BM, BN, kTmaDepth, S, WN / 32>, lc);       \
                 }}},
const KernelTable<ClusterKernel> kKernels = {
    MMLAB_GRID(2, 2, 2) MMLAB_GRID(1, 1, 8) MMLAB_GRID(2, 2, 4) MMLAB_GRID(1, 1, 4)
    MMLAB_TMA(2, 2, 2, 128, 256, 128, 3) MMLAB_TMA(1, 1, 4, 128, 256, 128, 3) MMLAB_TMA(2, 2, 2, 128, 128, 64, 3)};
#undef MMLAB_TMA
#undef MMLAB_GRID
#undef MMLAB_POINT

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (choice(q).tma)
    if (Reason r = tma_operands_fit(p, d, "cluster_dns tma")) return r;
  return cluster_supports(p, d, "cluster_dns", q.text("cluster"),
                          [&] { return kKernels.at(q).fit(launch(p, q, d)); });
}

void run(const RunArgs& r) {
  kKernels.at(*r.params).launch(r, launch(r.problem, *r.params, *r.device), choice(*r.params));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(cluster_dns) {
  a.summary =
      "DNS's 3D grid as a px x py x pz thread-block cluster: k-slices, partial tiles summed through DSMEM";
  a.variants = kVariants;
  a.axes = {{"cluster", AxisKind::grid, "cluster px x py x pz: tile rows x tile columns x k-slices", "2x2x2"},
            {"tile", AxisKind::shape, "block tile BMxBN (default's: 128x128)", "128x256", {}, {"tma"}},
            {"warp", AxisKind::shape, "warp tile: 32x64 (8x8 per thread) or 32x128 (8x16)", "32x128"},
            {"stages", AxisKind::integer, "shared-memory pipeline stages", "3"},
            {"reduce",
             AxisKind::choice,
             "who sums a column's partial tiles: scatter (each block 1/pz of the rows) or root (z = 0, all)",
             "scatter",
             {"scatter", "root"}}};
  a.constraints = kClusterConstraints;
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
