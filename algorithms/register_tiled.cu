// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of Gupta and Bhalla (2022) and the SGEMM README taken to
// their usual end point (block tile -> warp tile -> thread tile), sized for Hopper, where each
// scheduler issues one FFMA per cycle at most: every non-FFMA instruction costs an FFMA slot, so
// the design is about the share of FFMAs in the instruction stream (docs/flagship-notes.md).
//
// Two kernels, chosen by the `warp` axis. Quads (warp tiles 32x64, 32x128;
// algorithms/register_tiled_quads.cuh): 8x8 or 8x16 thread tiles in 4x4 quads, A transposed in
// shared memory through registers; the fastest from 1536 up (fewest register-bank conflicts).
// Natural-A (warp tiles 64x64, 64x32; algorithms/register_tiled_natural.cuh): 8x16 or 8x8 thread
// tiles, A and B both by cp.async; the fastest for small split-k problems (512, 1024).
// Both: 16-byte copies into STAGES shared-memory buffers, one barrier per k tile; rows past m and
// columns past n read clamped (valid) addresses and are never stored; the last k tile of a slice
// zero-fills what lies past its end. An operand whose rows are not 16-byte aligned (k % 4 != 0 for
// A, n % 4 != 0 for B) is first copied, padded to an aligned pitch, into the workspace
// (algorithms/aligned.cuh).
// Any m, n, k.
// `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first) atomically.
// Variants: `tuned` picks tile, warp tile, depth, stages and split from the problem size (the
// table below, chosen by experiments/flagship-tuning.ini); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include <cmath>

#include "algorithms/aligned.cuh"
#include "algorithms/common.cuh"
#include "algorithms/register_tiled_natural.cuh"
#include "algorithms/register_tiled_quads.cuh"

namespace mmlab {
namespace {

enum class Kind { tuned, manual };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"tuned", "tile, warp tile, depth, stages and split chosen from the problem size and the SM count"},
    {"manual", "all from the axes"}};

struct Choice {
  long bm, bn, bk, wm, wn, stages, split;
};

Choice choice(const Params& q) {  // of resolved (manual) parameters
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages"), q.integer("split")};
}

long k_per_split(long k, const Choice& ch) {
  const long per = (k + ch.split - 1) / ch.split;
  return (per + ch.bk - 1) / ch.bk * ch.bk;  // whole k tiles per split
}

long threads_of(const Choice& ch) { return 32 * (ch.bm / ch.wm) * (ch.bn / ch.wn); }

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(ch)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), ceil_div(p.k, k_per_split(p.k, ch))};
  const long pitch_a = ch.wm == 32 ? ch.bm + 4 : ch.bm;  // the quads kernel pads A's transposed rows
  lc.shared_bytes = sizeof(float) * std::size_t(ch.stages * (pitch_a * ch.bk + ch.bk * ch.bn));
  return lc;
}

// The `tuned` choice, read off experiments/flagship-tuning.ini on the H100 (data/flagship/tuning.csv,
// docs/flagship-notes.md) and stated in waves of the device's own SM count. Where 128x128 tiles
// waste little to padding: the quads kernel with 8x16 threads (warp 32x128) once 128x128 tiles make
// four well-filled waves (4095 and up on 132 SMs); with 8x8 threads (warp 32x64) from about one
// wave (240 of the 264 slots of two blocks per SM; 2048, 3072, 4096x1024x8192), k split in two when
// that fills the last wave much better (3072); with 128x64 tiles and k split four ways below that
// (1536, 1000x3000x2000); 128x128 tiles of 8x16 threads split four ways while that still gives
// every SM a block (1024); 128x64 tiles of 8x8 threads split four ways (512). Where padding tiles
// would waste more than 5% of the work (1025, 2049): 128x64 quads tiles, k split while the slices
// stay 512 deep.
Choice tuned(const Problem& p, const DeviceInfo& d) {
  const double sms = d.sm_count > 0 ? d.sm_count : 132, slots = 2 * sms;  // two 256-thread blocks per SM
  auto fill = [&](double blocks) { return blocks / (std::ceil(blocks / slots) * slots); };
  const double t128 = double(ceil_div(p.m, 128)) * double(ceil_div(p.n, 128));
  const double coverage = double(p.m) * double(p.n) / (t128 * 128 * 128);
  // The thresholds measured on 132 SMs (264 slots), in the device's own slots.
  const double waves4 = slots * 1000 / 264, one_wave = slots * 240 / 264, half_wave = slots * 128 / 264;
  auto split_while = [&](long min_depth) {
    long split = 4;
    while (split > 1 && p.k / split < min_depth) split /= 2;
    return split;
  };
  if (coverage >= 0.95 || t128 >= waves4) {
    if (t128 >= waves4 && fill(t128) >= 0.85) return {128, 128, 16, 32, 128, 2, 1};
    if (t128 >= one_wave)
      return {128, 128, 16, 32, 64, 2, fill(t128) < 0.85 && fill(2 * t128) >= 0.85 ? 2 : 1};
    if (t128 >= half_wave) return {128, 64, 16, 32, 64, 4, split_while(128)};
    if (t128 * 4 >= sms && p.k >= 512) return {128, 128, 16, 64, 64, 3, 4};
    return {128, 64, 16, 64, 32, 3, split_while(128)};
  }
  return {128, 64, 16, 32, 64, 4, split_while(512)};
}

Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (variant_kind<Kind>(kVariants, q) == Kind::manual) return q;
  const Choice ch = tuned(p, d);
  Params out(kVariants[int(Kind::manual)].name);
  out.set("tile", shape_text(ch.bm, ch.bn));
  out.set("warp", shape_text(ch.wm, ch.wn));
  out.set("depth", std::to_string(ch.bk));
  out.set("stages", std::to_string(ch.stages));
  out.set("split", std::to_string(ch.split));
  return out;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(q);
  if (d.present && d.cc_major < 8) return "register_tiled needs cp.async: compute capability 8.0 or newer";
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  return fits_aligned_int(p, "register_tiled");
}

using KernelLauncher = void (*)(const RunArgs&, const Operands&, const LaunchConfig&, int per, bool split);

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
void launch_kernel(const RunArgs& r, const Operands& o, const LaunchConfig& lc, int per, bool split) {
  using Kernel = void (*)(const float*, int, const float*, int, float*, int, int, int, int, int, bool);
  Kernel kernel = nullptr;
  if constexpr (kWM == 32)
    kernel = register_tiled_quads_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  else if constexpr (kWN == 32)  // only 8x8 tiles have a separate split-k epilogue
    kernel = split ? register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, true>
                   : register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  else
    kernel = register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m), int(r.problem.n), o.k, per, split);
}

// The compiled points: (BM, BN, BK, WM, WN), each with 2, 3 and 4 stages. WM 64: natural-A kernel;
// WM 32: quads kernel.
#define MMLAB_STAGE(BM, BN, BK, WM, WN, S)                                                                   \
  {{"manual", {{"tile", shape_text(BM, BN)}, {"warp", shape_text(WM, WN)}, {"depth", #BK}, {"stages", #S}}}, \
   launch_kernel<BM, BN, BK, WM, WN, S>},
#define MMLAB_ENTRY(BM, BN, BK, WM, WN) \
  MMLAB_STAGE(BM, BN, BK, WM, WN, 2) MMLAB_STAGE(BM, BN, BK, WM, WN, 3) MMLAB_STAGE(BM, BN, BK, WM, WN, 4)
// clang-format off
const KernelTable<KernelLauncher> kKernels = {
  MMLAB_ENTRY(128, 128, 8, 64, 64) MMLAB_ENTRY(128, 128, 16, 64, 64) MMLAB_ENTRY(128, 256, 16, 64, 64)
  MMLAB_ENTRY(256, 128, 16, 64, 64) MMLAB_ENTRY(128, 64, 16, 64, 64) MMLAB_ENTRY(64, 128, 16, 64, 64)
  MMLAB_ENTRY(128, 128, 16, 64, 32) MMLAB_ENTRY(128, 128, 32, 64, 32) MMLAB_ENTRY(256, 128, 16, 64, 32)
  MMLAB_ENTRY(128, 64, 16, 64, 32) MMLAB_ENTRY(64, 64, 16, 64, 32) MMLAB_ENTRY(64, 64, 32, 64, 32)
  MMLAB_ENTRY(128, 128, 8, 32, 64) MMLAB_ENTRY(128, 128, 16, 32, 64) MMLAB_ENTRY(128, 64, 16, 32, 64)
  MMLAB_ENTRY(128, 128, 8, 32, 128) MMLAB_ENTRY(128, 128, 16, 32, 128) MMLAB_ENTRY(128, 256, 16, 32, 128)};
// clang-format on
#undef MMLAB_ENTRY
#undef MMLAB_STAGE

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const Operands o = aligned_operands(r);
  const bool split = lc.grid.z > 1;
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));
  kKernels.at (*r.params)(r, o, lc, int(k_per_split(p.k, ch)), split);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(register_tiled) {
  a.summary = "flagship: warp-tiled 8x8 and 8x16 register blocking, cp.async multi-stage pipeline, split-k";
  a.variants = kVariants;
  const std::vector<std::string> manual = {"manual"};
  a.axes = {
      {"tile", AxisKind::shape, "block tile BMxBN", "128x128", {}, manual},
      {"warp",
       AxisKind::shape,
       "warp tile: 64x64 (8x16 per thread) or 64x32 (8x8), A as stored; 32x64 or 32x128 (8x8 or 8x16 in "
       "4x4 quads), A transposed",
       "64x64",
       {},
       manual},
      {"depth", AxisKind::integer, "k step BK of a shared-memory tile", "16", {}, manual},
      {"stages", AxisKind::integer, "shared-memory pipeline stages filled by cp.async", "3", {}, manual},
      {"split",
       AxisKind::integer,
       "k split over blockIdx.z, partial tiles added atomically",
       "1",
       {"1", "3"},
       manual}};
  a.constraints =
      "split 1 to 64; each (padded) matrix under 2^31 elements; any m, n, k (operands with rows not 16-byte "
      "aligned are copied padded into the workspace)";
  a.resolve = resolve;
  a.supports = supports;
  a.workspace_bytes = aligned_workspace;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
