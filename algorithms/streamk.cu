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
// Axis `a`: `transposed`, A transposed into the workspace as tma_tiled does (a pass over A before the
// kernel); `k_major`, A read as stored, k-major, by TMA with the 128-byte swizzle (BK = 32; no pass,
// but where k % 4 != 0 a padded copy, as B's where n % 4 != 0). TMA zero-fills past m, n, k. Any m, n, k.
// Example: mmlab run --algorithms streamk,tma_tiled,cublas --streamk.a transposed,k_major --shape 256x256x65536
#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/tma_quads_axes.hpp"
#include "algorithms/kernels/tma_streamk.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/launch/tma_operands.cuh"
#include "algorithms/models/streamk_model.hpp"

namespace mmlab {
namespace {

enum class Kind { pure, hybrid };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"pure", "every output tile's k tiles divided evenly over a persistent grid (stream-K)"},
    {"hybrid", "whole waves of tiles data-parallel, the last full wave and the rest stream-K (DP + SK)"}};

struct Choice {
  long bm, bn, bk, wm, wn, stages;
  bool k_major;
};
Choice choice(const Params& q) {
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages"), q.text("a") == "k_major"};
}
long threads_of(const Choice& ch) { return 32 * (ch.bm / ch.wm) * (ch.bn / ch.wn); }
std::size_t shared_bytes(const Choice& ch) {
  return sizeof(float) * std::size_t(ch.stages * ch.bk * (ch.bm + ch.bn)) + sizeof(std::uint64_t) * ch.stages +
         (ch.k_major ? 1024 : 0);  // k_major: the stages start at a 1024-byte boundary
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

template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kKMajor>
int blocks_per_sm(std::size_t shared) {
  const auto kernel = tma_streamk_kernel<kBM, kBN, kBK, kStages, kWN / 32, kKMajor>;
  return std::max(resident_blocks(kernel, Quads<kBM, kBN, kBK, kWN / 32, 0>::kThreads, shared), 1);
}

template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kKMajor>
void launch_kernel(const RunArgs& r, const CUtensorMap& at, const CUtensorMap& b, const LaunchConfig& lc,
                   const StreamKWork& w, float* partial, unsigned* flags) {
  const auto kernel = tma_streamk_kernel<kBM, kBN, kBK, kStages, kWN / 32, kKMajor>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      at, b, r.c, int(r.problem.n), int(r.problem.m), int(r.problem.n), w, partial, flags);
}

// The compiled points (BM, BN, BK, WN, stages, A's layout), each for both variants; k_major for the
// tiles of the deep-k, small-output shapes it is for.
#define MMLAB_POINT(V, BM, BN, BK, WN, S, A, KM)                                                       \
  {{V,                                                                                                  \
    {{"tile", shape_text(BM, BN)}, {"warp", shape_text(32, WN)}, {"depth", #BK}, {"stages", #S}, {"a", A}}}, \
   {launch_kernel<BM, BN, BK, WN, S, KM>, blocks_per_sm<BM, BN, BK, WN, S, KM>,                          \
    Quads<BM, BN, BK, WN / 32, 0>::kMinBlocks}},
#define MMLAB_BOTH(BM, BN, BK, WN, S, A, KM) \
  MMLAB_POINT("pure", BM, BN, BK, WN, S, A, KM) MMLAB_POINT("hybrid", BM, BN, BK, WN, S, A, KM)
#define MMLAB_T(BM, BN, BK, WN, S) MMLAB_BOTH(BM, BN, BK, WN, S, "transposed", false)
#define MMLAB_K(BM, BN, BK, WN, S) MMLAB_BOTH(BM, BN, BK, WN, S, "k_major", true)
// clang-format off
const KernelTable<Kernel> kKernels = {
  MMLAB_T(128, 256, 32, 128, 3) MMLAB_T(128, 128, 32, 128, 3) MMLAB_T(128, 128, 32, 64, 3)
  MMLAB_T(64, 128, 32, 64, 4) MMLAB_T(64, 64, 32, 64, 4)
  MMLAB_K(128, 128, 32, 64, 3) MMLAB_K(64, 64, 32, 64, 4)};
// clang-format on
#undef MMLAB_T
#undef MMLAB_K
#undef MMLAB_BOTH
#undef MMLAB_POINT

StreamKWork work_of(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(q);
  const Kernel& kernel = kKernels.at(q);
  // Without a GPU: the launch bounds' blocks, as many as an H100 SM's 228 KiB of shared memory holds.
  const long per_sm = d.present ? kernel.blocks_per_sm(shared_bytes(ch))
                                : h100_resident_blocks(kernel.min_blocks, shared_bytes(ch));
  const long sms = planning_sms(d);
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
// k_major: A and B as stored, or their padded copies where rows are not 16-byte aligned (launch/aligned.cuh).
std::size_t operand_floats(const Problem& p, const Choice& ch) {
  return ch.k_major ? padding(p).a_floats + padding(p).b_floats : tma_operand_floats(p);
}
std::size_t workspace(const Problem& p, const Params& q) {
  const Choice ch = choice(q);
  return sizeof(float) * (operand_floats(p, ch) + partial_floats(p, ch)) + sizeof(unsigned) * kMaxBlocks;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (!choice(q).k_major) return tma_operands_fit(p, d, "streamk");
  if (d.present && d.cc_major < 9) return "streamk needs TMA and mbarrier transactions: compute capability 9.0";
  return fits_aligned_int(p, "streamk");
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  TensorMaps& maps = *static_cast<TensorMaps*>(r.state);
  CUtensorMap a_map, b_map;
  float* partial;
  if (ch.k_major) {
    const Operands o = aligned_operands(r);
    a_map = maps.get(o.a, p.m, p.k, o.lda, int(ch.bm), int(ch.bk), CU_TENSOR_MAP_SWIZZLE_128B);
    b_map = maps.get(o.b, p.k, p.n, o.ldb, int(ch.bk), int(ch.bn));
    partial = static_cast<float*>(r.workspace) + operand_floats(p, ch);
  } else {
    const TmaOperands o = tma_operands(r);
    a_map = maps.get(o.at, p.k, p.m, pitch_t(p), int(ch.bk), int(ch.bm));
    b_map = maps.get(o.b, p.k, p.n, o.ldb, int(ch.bk), int(ch.bn));
    partial = o.after;
  }
  unsigned* flags = reinterpret_cast<unsigned*>(partial + partial_floats(p, ch));
  const StreamKWork w = work_of(p, *r.params, *r.device);
  MMLAB_CHECK(cudaMemsetAsync(flags, 0, sizeof(unsigned) * std::size_t(w.ctas), r.stream));
  kKernels.at(*r.params).launch(r, a_map, b_map, lc, w, partial, flags);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(streamk) {
  a.summary = "tma_tiled's TMA product on a persistent grid, k tiles split evenly (stream-K, deterministic)";
  a.variants = kVariants;
  a.axes = tma_quads_axes("128x128", "32x64");
  a.axes.push_back({"a",
                    AxisKind::choice,
                    "A's layout for TMA: transposed (a pass first) or k_major (as stored, 128-byte swizzle; "
                    "tiles 128x128/32x64 and 64x64)",
                    "transposed",
                    {"transposed", "k_major"},
                    {}});
  a.constraints =
      "compute capability 9.0; every matrix (A^T padded) under 2^31 elements; m <= 2097120 (transposed); any "
      "m, n, k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  use_kernels(a, kKernels, launch, run);
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const StreamKWork w = work_of(p, q, d);  // the schedule the kernel runs
    return streamk_model(p, q, w.dp_tiles, w.ctas);
  });
}

}  // namespace mmlab
