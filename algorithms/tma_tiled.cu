// tma_tiled: the flagship's quads product (algorithms/kernels/register_tiled_quads.cuh) fed by Hopper's TMA:
// one thread loads each k tile of A and B with two `cp.async.bulk.tensor` instructions, an mbarrier
// per stage says when they have landed, and the other threads do no address arithmetic, no global
// loads and no shared stores at all: their instruction stream is the product's shared loads and FFMAs.
//
// Source: the register-blocking design of register_tiled (Gupta and Bhalla 2022, and the SGEMM README's
// block -> warp -> thread tiling), with the operand movement of NVIDIA's Hopper tuning guide (Tensor
// Memory Accelerator, asynchronous transaction barriers). docs/flagship-notes.md, round two, part 2.
//
// The product reads A's k tile transposed, (BK, BM), so A is first transposed into the workspace
// (k x m, pitch rounded up to 4 floats: a tensor map's rows are 16-byte aligned); B is used as
// stored, or padded when n % 4 != 0 (algorithms/launch/aligned.cuh). TMA fills what lies past m, n or k with
// zeros, so no load is clamped or guarded; the epilogue stores only rows < m and columns < n.
// Variants, per k tile t:
//   tma          every thread waits on stage t's mbarrier, then one block barrier (stage t - 1 is free),
//                then thread 0 issues tile t + STAGES - 1 into it, then the product of tile t;
//   specialized  an extra producer warp issues tile t as soon as the consumer warps have released its
//                stage (a second mbarrier per stage, one arrival per consumer warp); the consumers only
//                wait, multiply and release: no block barrier in the k loop (warp specialisation).
// `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first) atomically.
// Defaults: the fastest at 4096 and 8192 on the H100 (data/flagship/tma/, docs/flagship-notes.md step 15).
// Example: mmlab run --algorithms tma_tiled,register_tiled,cublas --size 4096 --stages 2,3
#include "algorithms/launch/aligned.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/tma_quads_axes.hpp"
#include "algorithms/launch/split_k.hpp"
#include "algorithms/ptx/tma.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/launch/tma_operands.cuh"
#include "algorithms/models/tma_tiled_model.hpp"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK, int kQN>
using Tile = Quads<kBM, kBN, kBK, kQN, 0>;  // A's tile as TMA writes it: (BK, BM), no pad

// kProducer: a warpgroup of its own (one lane of it) issues the loads (warp specialisation) and the
// consumer warps release each stage by an mbarrier instead of meeting at a block barrier; otherwise
// thread 0 issues them. setmaxnreg hands the producers' registers to the consumers: the block is
// launched at the registers of its whole thread count (128 per thread for two blocks of 8 warps, 168
// for one of 12), then the producers drop to 40 and the consumers rise to 208 (the 8x16 product needs
// ~200). It acts per warpgroup, hence a producer warpgroup rather than one warp.
constexpr int kProducerThreads = 128, kProducerRegisters = 40, kConsumerRegisters = 208;
template <int kBM, int kBN, int kBK, int kStages, int kQN, bool kProducer>
__global__ void __launch_bounds__(Tile<kBM, kBN, kBK, kQN>::kThreads + (kProducer ? kProducerThreads : 0),
                                  Tile<kBM, kBN, kBK, kQN>::kMinBlocks)
    tma_tiled_kernel(const __grid_constant__ CUtensorMap at_map, const __grid_constant__ CUtensorMap b_map,
                     float* __restrict__ c, int ldc, int m, int n, int k, int k_per_split, bool accumulate) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Tile<kBM, kBN, kBK, kQN>;
  constexpr int kConsumerWarps = S::kThreads / 32;
  extern __shared__ __align__(128) float smem[];  // kStages x [A^T (BK, BM), B (BK, BN)], then the barriers
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(smem + kStages * S::kStage);  // tile's bytes in
  std::uint64_t* freed = landed + kStages;  // every consumer warp done with the stage (kProducer)
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;
  auto stage = [&](int t) { return smem + (t % kStages) * S::kStage; };
  auto issue = [&](int t) {  // tile t (k_per_split is whole tiles: a tile never crosses into another split)
    fence_async_shared();  // the threads' reads of the stage's last tile (generic proxy) before TMA's writes
    std::uint64_t* bar = &landed[t % kStages];
    mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
    tma_load_2d(stage(t), at_map, row0, k_begin + t * kBK, bar);
    tma_load_2d(stage(t) + S::kTileA, b_map, col0, k_begin + t * kBK, bar);
  };
  const int issuer = kProducer ? S::kThreads : 0;
  if (threadIdx.x == issuer) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(&landed[s], 1), mbarrier_init(&freed[s], kConsumerWarps);
    mbarrier_init_fence();
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  typename S::Acc acc = {};
  if constexpr (kProducer) {
    static_assert(!kProducer || (kQN == 4 && S::kThreads % 128 == 0),
                  "8x16 tiles, whole consumer warpgroups");
    if (threadIdx.x >=
        S::kThreads) {  // the producer warpgroup: one lane issues every tile as its stage frees
      release_registers<kProducerRegisters>();
      if (threadIdx.x == issuer)
        for (int t = 0; t < tiles; ++t) {
          if (t >= kStages) mbarrier_wait_cta(&freed[t % kStages], unsigned(t / kStages - 1) & 1u);
          issue(t);
        }
      return;
    }
    claim_registers<kConsumerRegisters>();
    for (int t = 0; t < tiles; ++t) {
      mbarrier_wait_cta(&landed[t % kStages], unsigned(t / kStages) & 1u);
      S::product(stage(t), stage(t) + S::kTileA, acc);
      __syncwarp();
      if (threadIdx.x % 32 == 0) mbarrier_arrive_cta(&freed[t % kStages]);  // this warp is done with it
    }
  } else {
    if (threadIdx.x == issuer)
      for (int t = 0; t < kStages - 1 && t < tiles; ++t) issue(t);
    for (int t = 0; t < tiles; ++t) {
      mbarrier_wait_cta(&landed[t % kStages], unsigned(t / kStages) & 1u);  // tile t has landed
      __syncthreads();  // every thread is done with tile t - 1: its stage may be overwritten
      if (threadIdx.x == issuer && t + kStages - 1 < tiles) issue(t + kStages - 1);
      S::product(stage(t), stage(t) + S::kTileA, acc);
    }
  }

  S::store(acc, c, ldc, row0, col0, m, n, accumulate);
#endif
}

enum class Kind { tma, specialized };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"tma", "thread 0 issues each k tile's TMA loads; an mbarrier per stage, one block barrier per tile"},
    {"specialized",
     "a producer warp issues the TMA loads; consumer warps release stages by mbarrier, no block "
     "barrier"}};

struct Choice {
  long bm, bn, bk, wm, wn, stages, split;
  bool producer;
};

Choice choice(const Params& q) {
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x,
          t.y,
          q.integer("depth"),
          w.x,
          w.y,
          q.integer("stages"),
          q.integer("split"),
          variant_kind<Kind>(kVariants, q) == Kind::specialized};
}

std::size_t shared_bytes(const Choice& ch) {
  return sizeof(float) * std::size_t(ch.stages * ch.bk * (ch.bm + ch.bn)) +
         2 * sizeof(std::uint64_t) * ch.stages;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(32 * (ch.bm / ch.wm) * (ch.bn / ch.wn) + (ch.producer ? kProducerThreads : 0)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), unsigned(split_k(p.k, ch.bk, ch.split).blocks)};
  lc.shared_bytes = shared_bytes(ch);
  return lc;
}

// The workspace: the TMA operands (A^T, B padded where needed: launch/tma_operands.cuh).
std::size_t workspace(const Problem& p, const Params&) { return sizeof(float) * tma_operand_floats(p); }

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(q);
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  return tma_operands_fit(p, d, "tma_tiled");
}

using KernelLauncher = void (*)(const RunArgs&, const CUtensorMap&, const CUtensorMap&, const LaunchConfig&,
                                int per, bool split);

template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kProducer>
void launch_kernel(const RunArgs& r, const CUtensorMap& at, const CUtensorMap& b, const LaunchConfig& lc,
                   int per, bool split) {
  const auto kernel = tma_tiled_kernel<kBM, kBN, kBK, kStages, kWN / 32, kProducer>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  const Problem& p = r.problem;
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(at, b, r.c, int(p.n), int(p.m), int(p.n),
                                                                     int(p.k), per, split);
}

// The compiled points: (BM, BN, BK, WN), warp tiles 32 x WN (8x8 or 8x16 per thread), 2, 3 and 4 stages;
// `specialized` for the 8x16 tiles (its registers: above).
#define MMLAB_STAGE(V, P, BM, BN, BK, WN, S)                                                          \
  {{V, {{"tile", shape_text(BM, BN)}, {"warp", shape_text(32, WN)}, {"depth", #BK}, {"stages", #S}}}, \
   launch_kernel<BM, BN, BK, WN, S, P>},
#define MMLAB_STAGES(V, P, BM, BN, BK, WN) \
  MMLAB_STAGE(V, P, BM, BN, BK, WN, 2)     \
  MMLAB_STAGE(V, P, BM, BN, BK, WN, 3) MMLAB_STAGE(V, P, BM, BN, BK, WN, 4)
#define MMLAB_ENTRY(BM, BN, BK, WN) MMLAB_STAGES("tma", false, BM, BN, BK, WN)
#define MMLAB_BOTH(BM, BN, BK, WN) \
  MMLAB_STAGES("tma", false, BM, BN, BK, WN) MMLAB_STAGES("specialized", true, BM, BN, BK, WN)
// clang-format off
const KernelTable<KernelLauncher> kKernels = {
  MMLAB_ENTRY(128, 128, 16, 64) MMLAB_ENTRY(128, 128, 32, 64) MMLAB_ENTRY(64, 128, 16, 64)
  MMLAB_ENTRY(64, 128, 32, 64)
  MMLAB_BOTH(128, 128, 16, 128) MMLAB_BOTH(128, 128, 32, 128) MMLAB_BOTH(128, 256, 16, 128)
  MMLAB_BOTH(128, 256, 32, 128)};
// clang-format on
#undef MMLAB_BOTH
#undef MMLAB_ENTRY
#undef MMLAB_STAGES
#undef MMLAB_STAGE

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const TmaOperands o = tma_operands(r);
  TensorMaps& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap& at_map = maps.get(o.at, p.k, p.m, pitch_t(p), int(ch.bk), int(ch.bm));
  const CUtensorMap& b_map = maps.get(o.b, p.k, p.n, o.ldb, int(ch.bk), int(ch.bn));
  const bool split = lc.grid.z > 1;
  if (split) zero_for_split_k(r);
  kKernels.at (*r.params)(r, at_map, b_map, lc, int(split_k(p.k, ch.bk, ch.split).k_per_block(ch.bk)), split);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(tma_tiled) {
  a.summary = "register_tiled's quads product fed by TMA tile loads and mbarrier-completed stages (Hopper)";
  a.variants = kVariants;
  a.axes = tma_quads_axes("128x256", "32x128");
  a.axes.push_back(
      {"split", AxisKind::integer, "k split over blockIdx.z, partial tiles added atomically", "1", {"1", "3"}, {}});
  a.constraints =
      "compute capability 9.0; split 1 to 64; every matrix (A^T padded) under 2^31 elements; m <= 2097120; "
      "any m, n, k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  mark_split_k(a, {"tma", "specialized"});
  use_kernels(a, kKernels, launch, run);
  use_linear_model(a, tma_tiled_model);
}

}  // namespace mmlab
