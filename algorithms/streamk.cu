// streamk: tma_tiled's TMA-fed quads product, decomposed stream-K: a persistent grid of as many
// blocks as the device holds at once, each taking an even share of the k tiles of all output tiles
// (algorithms/kernels/tma_streamk.cuh; Osama, Merrill, Cecka, Garland and Owens, "Stream-K:
// Work-centric Parallel Decomposition for Dense Matrix Multiplication on the GPU", PPoPP 2023).
//
// Where the output has fewer tiles than a whole number of waves (small m n, deep k, 132 SMs), a
// data-parallel grid leaves SMs idle for the last wave or the whole run; split-k fills them at the
// price of atomics and a zeroed C. Stream-K fills them by construction; tiles shared by two blocks
// are summed through the workspace in a fixed order, so C is bit-identical from run to run.
// Variants: `pure` (every tile stream-K), `hybrid` (all but the last full wave data-parallel, the
// rest stream-K: the paper's "DP + SK", fewer partial tiles on large problems).
// A is transposed into the workspace as tma_tiled does; TMA zero-fills past m, n, k. Any m, n, k.
// Example: mmlab run --algorithms streamk,tma_tiled,cublas --shape 256x256x65536,2000x3000x1000
#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/tma_quads_axes.hpp"
#include "algorithms/kernels/tma_streamk.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/launch/tma_operands.cuh"

namespace mmlab {
namespace {

enum class Kind { pure, hybrid };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"pure", "every output tile's k tiles divided evenly over a persistent grid (stream-K)"},
    {"hybrid", "whole waves of tiles data-parallel, the last full wave and the rest stream-K (DP + SK)"}};

struct Choice {
  long bm, bn, bk, wm, wn, stages;
};
Choice choice(const Params& q) {
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages")};
}
long threads_of(const Choice& ch) { return 32 * (ch.bm / ch.wm) * (ch.bn / ch.wn); }
std::size_t shared_bytes(const Choice& ch) {
  return sizeof(float) * std::size_t(ch.stages * ch.bk * (ch.bm + ch.bn)) + sizeof(std::uint64_t) * ch.stages;
}

// At most this many blocks (and so workspace slots): the workspace is sized without the device.
constexpr long kMaxBlocks = 1024;

// The decomposition: `resident` blocks fit on the device at once.
StreamKWork plan(const Problem& p, const Choice& ch, bool hybrid, long resident) {
  const long tiles = long(ceil_div(p.m, ch.bm)) * long(ceil_div(p.n, ch.bn)),
             iters = long(ceil_div(p.k, ch.bk));
  const long grid = std::max(1L, std::min(resident, kMaxBlocks));
  long dp = 0;  // hybrid: whole waves but the last data-parallel (none when the tiles fill whole waves: all)
  if (hybrid) dp = tiles % grid == 0 ? tiles : std::max(0L, (tiles / grid - 1) * grid);
  const long long sk = (long long)(tiles - dp) * iters;
  const long ctas = sk == 0 ? std::min(grid, tiles) : std::min<long long>(grid, std::max(sk, 1LL));
  return {int(ceil_div(p.n, ch.bn)), int(iters), int(dp), sk, int(ctas)};
}

using Occupancy = int (*)(std::size_t shared);
using Launcher = void (*)(const RunArgs&, const CUtensorMap&, const CUtensorMap&, const LaunchConfig&,
                          const StreamKWork&, float* partial, unsigned* flags);
struct Kernel {
  Launcher launch;
  Occupancy blocks_per_sm;
  int min_blocks;  // its launch bounds' blocks per SM: the occupancy assumed without a GPU
};

template <int kBM, int kBN, int kBK, int kWN, int kStages>
int blocks_per_sm(std::size_t shared) {
  const auto kernel = tma_streamk_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  allow_shared_bytes(kernel, shared);
  int blocks = 0;
  MMLAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel, Quads<kBM, kBN, kBK, kWN / 32, 0>::kThreads, shared));
  return std::max(blocks, 1);
}

template <int kBM, int kBN, int kBK, int kWN, int kStages>
void launch_kernel(const RunArgs& r, const CUtensorMap& at, const CUtensorMap& b, const LaunchConfig& lc,
                   const StreamKWork& w, float* partial, unsigned* flags) {
  const auto kernel = tma_streamk_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      at, b, r.c, int(r.problem.n), int(r.problem.m), int(r.problem.n), w, partial, flags);
}

// The compiled points (BM, BN, BK, WN, stages), each for both variants.
#define MMLAB_POINT(V, BM, BN, BK, WN, S)                                                             \
  {{V, {{"tile", shape_text(BM, BN)}, {"warp", shape_text(32, WN)}, {"depth", #BK}, {"stages", #S}}}, \
   {launch_kernel<BM, BN, BK, WN, S>, blocks_per_sm<BM, BN, BK, WN, S>,                               \
    Quads<BM, BN, BK, WN / 32, 0>::kMinBlocks}},
#define MMLAB_BOTH(BM, BN, BK, WN, S) \
  MMLAB_POINT("pure", BM, BN, BK, WN, S) MMLAB_POINT("hybrid", BM, BN, BK, WN, S)
// clang-format off
const KernelTable<Kernel> kKernels = {
  MMLAB_BOTH(128, 256, 32, 128, 3) MMLAB_BOTH(128, 128, 32, 128, 3) MMLAB_BOTH(128, 128, 32, 64, 3)
  MMLAB_BOTH(64, 128, 32, 64, 4) MMLAB_BOTH(64, 64, 32, 64, 4)};
// clang-format on
#undef MMLAB_BOTH
#undef MMLAB_POINT

StreamKWork work_of(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(q);
  const Kernel& kernel = kKernels.at(q);
  // Without a GPU: the launch bounds' blocks, as many as an H100 SM's 228 KiB of shared memory holds.
  const long per_sm = d.present ? kernel.blocks_per_sm(shared_bytes(ch))
                                : std::min<long>(kernel.min_blocks, 233472 / long(shared_bytes(ch) + 1024));
  const long sms = d.sm_count > 0 ? d.sm_count : 132;
  return plan(p, ch, variant_kind<Kind>(kVariants, q) == Kind::hybrid, sms * per_sm);
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(ch)), 1, 1};
  lc.grid = {unsigned(work_of(p, q, d).ctas), 1, 1};
  lc.shared_bytes = shared_bytes(ch);
  return lc;
}

// The workspace: the TMA operands (A^T, B padded where needed: launch/tma_operands.cuh), the partial
// tiles (one slot per block) and the blocks' flags.
std::size_t partial_floats(const Problem& p, const Choice& ch) {
  const long blocks = std::min(
      kMaxBlocks, long(ceil_div(p.m, ch.bm)) * long(ceil_div(p.n, ch.bn)) * long(ceil_div(p.k, ch.bk)));
  return std::size_t(blocks * ch.bm * ch.bn);
}
std::size_t workspace(const Problem& p, const Params& q) {
  return sizeof(float) * (tma_operand_floats(p) + partial_floats(p, choice(q))) + sizeof(unsigned) * kMaxBlocks;
}

Reason supports(const Problem& p, const Params&, const DeviceInfo& d) { return tma_operands_fit(p, d, "streamk"); }

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const TmaOperands o = tma_operands(r);
  float* partial = o.after;
  unsigned* flags = reinterpret_cast<unsigned*>(partial + partial_floats(p, ch));
  const StreamKWork w = work_of(p, *r.params, *r.device);
  MMLAB_CHECK(cudaMemsetAsync(flags, 0, sizeof(unsigned) * std::size_t(w.ctas), r.stream));
  TensorMaps& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap at_map = maps.get(o.at, p.k, p.m, pitch_t(p), int(ch.bk), int(ch.bm));
  const CUtensorMap b_map = maps.get(o.b, p.k, p.n, o.ldb, int(ch.bk), int(ch.bn));
  kKernels.at(*r.params).launch(r, at_map, b_map, lc, w, partial, flags);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(streamk) {
  a.summary = "tma_tiled's TMA product on a persistent grid, k tiles split evenly (stream-K, deterministic)";
  a.variants = kVariants;
  a.axes = tma_quads_axes("128x128", "32x64");
  a.constraints =
      "compute capability 9.0; every matrix (A^T padded) under 2^31 elements; m <= 2097120; any m, n, k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
