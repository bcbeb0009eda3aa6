// cluster_cannon: Cannon's algorithm on a Hopper thread-block cluster. A q x q cluster is the torus:
// block (i, j) owns a 128 x 128 tile of C, and the operand tiles travel between the blocks through
// distributed shared memory (DSMEM) instead of being re-read from global memory by every block.
//
// Source: Cannon's algorithm as O'Neil (2013) describes it (sec. 2.1: skew, then q multiply-shift
// steps on a q x q torus), with the blocks of a cluster as the processors.
//
// k is cut into panels of q x BK; within a panel, block (i, j) first multiplies the k-slice
// (i + j) mod q of it (the skew), then q - 1 more slices, each arriving from its neighbours: A from
// the right-hand block (i, j + 1), B from the block below (i + 1, j). So each element of A and B is
// read from global memory once per cluster instead of q times. Per k tile (BK deep):
//   - a slice a block reads from global memory (step 0 of a panel) comes in as the flagship loads
//     a tile (A through registers, stored transposed; B by cp.async), STAGES - 1 tiles ahead;
//   - a slice that came from a neighbour waits on the stage's mbarrier, which counts the bytes of
//     both bulk copies (A from the right, B from below);
//   - once the tile is complete here, one thread pushes it on (A to the left, B up) with two
//     `cp.async.bulk.shared::cluster` copies into the neighbours' next stage, while the block
//     multiplies it (the flagship's quads product, algorithms/kernels/register_tiled_quads.cuh).
// Flow control is pairwise, by mbarriers: a block that has finished with a stage which a push will
// refill arrives on its two senders' `free` barrier of that stage (a remote arrive), and a sender
// waits there before it pushes. No cluster-wide barrier inside the k loop. Blocks past the edge of C compute
// on clamped rows and zero columns (they are links of the torus) and store nothing; the grid is rounded up to
// whole clusters. Any m, n, k (rows not 16-byte aligned are padded first, as in register_tiled). The
// `tma` and `specialized` variants run the same torus around tma_tiled's TMA-fed product
// (algorithms/kernels/cannon_torus_tma.cuh). Example:
// mmlab run --algorithms cluster_cannon,register_tiled,cublas --torus 2,4 --size 4096
#include "algorithms/launch/aligned.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/launch/tma_operands.cuh"
#include "algorithms/kernels/cannon_torus_tma.cuh"
#include "algorithms/ptx/dsmem.cuh"

namespace mmlab {
namespace {

constexpr int kTile = 128;  // the flagship's 128 x 128 tiles, BK = 16 or 32 deep

template <int kQ, int kDepth, int kStages, int kQN>
__global__ void __launch_bounds__(Quads<kTile, kTile, kDepth, kQN>::kThreads,
                                  Quads<kTile, kTile, kDepth, kQN>::kMinBlocks)
    cluster_cannon_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                          float* __restrict__ c, int ldc, int m, int n, int k) {
  using S = Quads<kTile, kTile, kDepth, kQN>;
  constexpr unsigned kBytesA = S::kTileA * sizeof(float), kBytesB = S::kTileB * sizeof(float);
  extern __shared__ __align__(128) float smem[];  // kStages x [A (BK, BM + 4) transposed, B], mbarriers
  const unsigned base = shared_address(smem), bars = base + kStages * S::kStage * sizeof(float);
  auto stage = [&](int t) { return smem + (t % kStages) * S::kStage; };
  auto stage_address = [&](int t) { return base + unsigned((t % kStages) * S::kStage * sizeof(float)); };
  auto full = [&](int t) { return bars + unsigned(8 * (t % kStages)); };  // tile t has landed here
  auto free = [&](int t) {
    return bars + unsigned(8 * (kStages + t % kStages));
  };  // receivers freed t's stage

  const int j = blockIdx.x % kQ, i = blockIdx.y % kQ;  // place on the torus; ranks are j + q i
  const unsigned left = i * kQ + (j + kQ - 1) % kQ, up = ((i + kQ - 1) % kQ) * kQ + j;  // receive from here
  const unsigned right = i * kQ + (j + 1) % kQ, down = ((i + 1) % kQ) * kQ + j;         // send to here
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int tiles = (k + kQ * kDepth - 1) / (kQ * kDepth) * kQ;  // whole panels
  // Tile t = step t % q of panel t / q: the k-slice (i + j + t) mod q of the panel.
  auto k0_of = [&](int t) { return (t / kQ) * kQ * kDepth + (i + j + t) % kQ * kDepth; };
  auto pushed = [&](int t) { return t < tiles && t % kQ != 0; };  // arrives from the neighbours

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(full(s), 1), mbarrier_init(free(s), 2);
    mbarrier_init_fence();
  }
  cluster_sync();  // every block's barriers exist before any peer uses them

  typename S::Acc acc = {};
  float4 ra[S::kLoadsA];
  unsigned full_parity = 0, free_parity = 0;  // bit s: the parity of stage s's next phase
  // Prologue: the global tiles among 0 .. STAGES - 2 into their stages, and A of tile STAGES - 1
  // into registers if it is one (the flagship's pipeline, restricted to the tiles read from global).
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < tiles && !pushed(t)) {
      S::issue_b(stage(t) + S::kTileA, b, ldb, col0, k0_of(t), k);
      S::load_a(ra, a, lda, m, row0, k0_of(t), k);
      S::store_a(stage(t), ra);
    }
    commit();  // one group per tile, empty when it is not read from global
  }
  if (kStages - 1 < tiles && !pushed(kStages - 1)) S::load_a(ra, a, lda, m, row0, k0_of(kStages - 1), k);

  for (int t = 0; t < tiles; ++t) {
    if (!pushed(t)) {
      wait_for<kStages - 2>();                  // this thread's copies of B have landed
      if (pushed(t + 1)) fence_async_shared();  // its writes before the push reads them
    } else {
      if (threadIdx.x == 0) mbarrier_expect_bytes(full(t), kBytesA + kBytesB);
      mbarrier_wait_cluster(full(t),
                            (full_parity >> (t % kStages)) & 1);  // both neighbours' copies have landed
      full_parity ^= 1u << (t % kStages);
    }
    if (threadIdx.x == 0) bulk_wait_read();  // the last push has read its stage
    __syncthreads();                         // tile t is complete here; every thread has finished tile t - 1
    if (threadIdx.x == 0) {
      // Tile t - 1's stage is free here; if a push refills it, tell its senders.
      if (t > 0 && pushed(t - 1 + kStages))
        mbarrier_arrive_cluster(peer_address(free(t - 1), right)),
            mbarrier_arrive_cluster(peer_address(free(t - 1), down));
      if (pushed(t + 1)) {
        // Tile t + 1 of the left neighbour is this tile's A; of the upper one, its B. Their stage
        // (t + 1) % STAGES must have been freed by both (it held tile t + 1 - STAGES).
        if (t + 1 >= kStages) {
          mbarrier_wait_cluster(free(t + 1), (free_parity >> ((t + 1) % kStages)) & 1);
          free_parity ^= 1u << ((t + 1) % kStages);
          fence_async_shared_cluster();  // the peers' reads of that stage (generic proxy) before the copies
        }
        bulk_copy_to_peer(peer_address(stage_address(t + 1), left), stage_address(t), kBytesA,
                          peer_address(full(t + 1), left));
        bulk_copy_to_peer(peer_address(stage_address(t + 1) + kBytesA, up), stage_address(t) + kBytesA,
                          kBytesB, peer_address(full(t + 1), up));
        bulk_commit();
      }
    }
    const int next = t + kStages - 1;
    if (next < tiles && !pushed(next)) {  // its stage held tile t - 1 and nobody pushes into it
      S::issue_b(stage(next) + S::kTileA, b, ldb, col0, k0_of(next), k);
      S::store_a(stage(next), ra);  // loaded during an earlier tile's multiply
    }
    commit();
    if (next + 1 < tiles && !pushed(next + 1)) S::load_a(ra, a, lda, m, row0, k0_of(next + 1), k);
    S::product(stage(t), stage(t) + S::kTileA, acc);
  }
  wait_for<0>();
  if (threadIdx.x == 0) bulk_wait_read();
  cluster_sync();  // no block leaves while a peer may still read or write its shared memory

  S::store(acc, c, ldc, row0, col0, m, n);
}

enum class Kind { shifts, tma, specialized };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"default", "128x128 tiles per block, the flagship's quads product, bulk DSMEM shifts"},
    {"tma", "tma_tiled's product (TMA loads from global memory, 128x256 tiles of 8x16), bulk DSMEM shifts"},
    {"specialized", "tma's, with a producer warpgroup for the loads, shifts and flow control (no block barrier)"}};

struct Choice {
  int q, bm, bn, qn, depth, stages;
  bool tma, producer;
};
Choice choice(const Params& p) {
  const Kind kind = variant_kind<Kind>(kVariants, p);
  const bool tma = kind != Kind::shifts;
  const Shape2 tile = tma ? p.shape("tile") : Shape2{128, 128};
  return {int(p.integer("torus")), int(tile.x), int(tile.y), int(p.shape("warp").y / 32), int(p.integer("depth")),
          int(p.integer("stages")), tma, kind == Kind::specialized};
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(32 * (ch.bm / 32) * (ch.bn / (32 * ch.qn)) + (ch.producer ? kProducerThreads : 0)), 1, 1};
  lc.grid = {ceil_div(p.n, long(ch.q) * ch.bn) * ch.q, ceil_div(p.m, long(ch.q) * ch.bm) * ch.q, 1};  // whole tori
  lc.cluster = {unsigned(ch.q), unsigned(ch.q), 1};
  const long pitch_a = ch.tma ? ch.bm : ch.bm + 4;  // A^T's rows as TMA writes them, or padded for the stores
  lc.shared_bytes = std::size_t(ch.stages) * (ch.depth * (pitch_a + ch.bn)) * sizeof(float) +
                    24 * std::size_t(ch.stages);  // and up to three mbarriers per stage
  return lc;
}

// The workspace: A^T (and B padded where needed) for TMA, else the rows padded to 16 bytes where needed.
std::size_t workspace(const Problem& p, const Params& q) {
  return choice(q).tma ? sizeof(float) * tma_operand_floats(p) : aligned_workspace(p, q);
}

struct ClusterKernel {
  void (*launch)(const RunArgs&, const LaunchConfig&);
  int (*fit)(const LaunchConfig&);
};

template <int kQ, int kDepth, int kStages, int kQN>
void launch_shifts(const RunArgs& r, const LaunchConfig& lc) {
  auto kernel = cluster_cannon_kernel<kQ, kDepth, kStages, kQN>;
  allow_clusters(kernel, lc, kQ * kQ);
  const Operands o = aligned_operands(r);
  launch_in_clusters(kernel, lc, r.stream, o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m),
                     int(r.problem.n), o.k);
}
template <int kQ, int kBM, int kBN, int kBK, int kStages, int kQN, bool kProducer>
void launch_tma(const RunArgs& r, const LaunchConfig& lc) {
  auto kernel = cluster_cannon_tma_kernel<kQ, kBM, kBN, kBK, kStages, kQN, kProducer>;
  allow_clusters(kernel, lc, kQ * kQ);
  const Problem& p = r.problem;
  const TmaOperands o = tma_operands(r);
  TensorMaps& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap at = maps.get(o.at, p.k, p.m, pitch_t(p), kBK, kBM);
  const CUtensorMap b = maps.get(o.b, p.k, p.n, o.ldb, kBK, kBN);
  launch_in_clusters(kernel, lc, r.stream, at, b, r.c, int(p.n), int(p.m), int(p.n), int(p.k));
}

// The compiled points. default: torus 2 and 4 (16 blocks: a non-portable cluster size), 128x128 tiles,
// warp tiles 32x64 (8x8 per thread, two blocks per SM) and 32x128 (8x16, one); 16 deep with 3 and 4
// stages, 32 deep (half the steps, so half the barriers) with 3. tma: the flagship's 4096 kernel (128x256
// tiles of 8x16, 32 deep, 3 stages) on tori of 2 and 4, and on a torus of 2 16 deep with 4 stages, 128x128
// tiles with 32x64 (two blocks an SM) and 32x128 warps.
#define MMLAB_POINT(Q, WN, BK, S)                                                                            \
  {{"default",                                                                                               \
    {{"torus", #Q}, {"warp", shape_text(32, WN)}, {"depth", #BK}, {"stages", #S}}},                        \
   ClusterKernel{launch_shifts<Q, BK, S, WN / 32>,                                                           \
                 [](const LaunchConfig& lc) { return clusters_that_fit(cluster_cannon_kernel<Q, BK, S, WN / 32>, lc); }}},
#define MMLAB_WARP(Q, WN) MMLAB_POINT(Q, WN, 16, 3) MMLAB_POINT(Q, WN, 16, 4) MMLAB_POINT(Q, WN, 32, 3)
#define MMLAB_TMA(V, P, Q, BM, BN, WN, BK, S)                                                                \
  {{V,                                                                                                        \
    {{"torus", #Q}, {"tile", shape_text(BM, BN)}, {"warp", shape_text(32, WN)}, {"depth", #BK}, {"stages", #S}}}, \
   ClusterKernel{launch_tma<Q, BM, BN, BK, S, WN / 32, P>, [](const LaunchConfig& lc) {                        \
                   return clusters_that_fit(cluster_cannon_tma_kernel<Q, BM, BN, BK, S, WN / 32, P>, lc);                \
                 }}},
const KernelTable<ClusterKernel> kKernels = {
    MMLAB_WARP(2, 64) MMLAB_WARP(2, 128) MMLAB_WARP(4, 64) MMLAB_WARP(4, 128)
    MMLAB_TMA("tma", false, 2, 128, 256, 128, 32, 3) MMLAB_TMA("tma", false, 2, 128, 256, 128, 16, 4)
    MMLAB_TMA("tma", false, 4, 128, 256, 128, 32, 3) MMLAB_TMA("tma", false, 2, 128, 128, 64, 32, 3)
    MMLAB_TMA("tma", false, 2, 128, 128, 128, 32, 3)
    MMLAB_TMA("specialized", true, 2, 128, 256, 128, 32, 3) MMLAB_TMA("specialized", true, 2, 128, 256, 128, 32, 4)
    MMLAB_TMA("specialized", true, 4, 128, 256, 128, 32, 3)};
#undef MMLAB_TMA
#undef MMLAB_WARP
#undef MMLAB_POINT

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (choice(q).tma)
    if (Reason r = tma_operands_fit(p, d, "cluster_cannon tma")) return r;
  return cluster_supports(p, d, "cluster_cannon", q.text("torus") + "x" + q.text("torus"),
                          [&] { return kKernels.at(q).fit(launch(p, q, d)); });
}

void run(const RunArgs& r) {
  kKernels.at(*r.params).launch(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(cluster_cannon) {
  a.summary = "Cannon's torus as a q x q thread-block cluster: operand tiles shifted through DSMEM (sm_90)";
  a.variants = kVariants;
  a.axes = {{"torus", AxisKind::integer, "q: the cluster is a q x q torus of blocks", "2"},
            {"tile", AxisKind::shape, "block tile BMxBN (default's: 128x128)", "128x256", {}, {"tma", "specialized"}},
            {"warp", AxisKind::shape, "warp tile: 32x64 (8x8 per thread) or 32x128 (8x16)", "32x128"},
            {"depth", AxisKind::integer, "k depth BK of a tile (one shift per tile)", "32"},
            {"stages", AxisKind::integer, "shared-memory stages", "3"}};
  a.constraints = kClusterConstraints;
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
