// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of Gupta and Bhalla (2022) and the SGEMM README taken to
// their usual end point (block tile -> warp tile -> thread tile), sized for Hopper, where each
// scheduler issues one FFMA per cycle at most: every non-FFMA instruction costs an FFMA slot, so
// the design is about the share of FFMAs in the instruction stream (docs/flagship-notes.md).
//
// Two kernels, chosen by the `warp` axis. Quads (warp tiles 32x64, 32x128;
// algorithms/kernels/register_tiled_quads.cuh): 8x8 or 8x16 thread tiles in 4x4 quads, A transposed in
// shared memory through registers; the fastest from 1536 up (fewest register-bank conflicts).
// Natural-A (warp tiles 64x64, 64x32; algorithms/kernels/register_tiled_natural.cuh): 8x16 or 8x8 thread
// tiles, A and B both by cp.async; the fastest for small split-k problems (512, 1024).
// Both: 16-byte copies into STAGES shared-memory buffers, one barrier per k tile; rows past m and
// columns past n read clamped (valid) addresses and are never stored; the last k tile of a slice
// zero-fills what lies past its end. An operand whose rows are not 16-byte aligned (k % 4 != 0 for
// A, n % 4 != 0 for B) is first copied, padded to an aligned pitch, into the workspace
// (algorithms/launch/aligned.cuh).
// Any m, n, k.
// `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first) atomically.
// Variants: `tuned` picks the kernel and the split by a cost model of waves over the device's SMs
// (algorithms/models/register_tiled_model.hpp); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include <algorithm>
#include <vector>

#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/register_tiled_model.hpp"
#include "algorithms/kernels/register_tiled_natural.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/split_k.hpp"

namespace mmlab {
namespace {

enum class Kind { tuned, manual };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"tuned", "kernel and k split chosen by a cost model of waves over the device's SMs"},
    {"manual", "all from the axes"}};

using Choice = RegisterTile;

Choice choice(const Params& q) {  // of resolved (manual) parameters
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages"), q.integer("split")};
}

long threads_of(const Choice& ch) { return 32 * (ch.bm / ch.wm) * (ch.bn / ch.wn); }

std::size_t shared_bytes(const Choice& ch) {
  const long pitch_a = ch.wm == 32 ? ch.bm + 4 : ch.bm;  // the quads kernel pads A's transposed rows
  return sizeof(float) * std::size_t(ch.stages * (pitch_a * ch.bk + ch.bk * ch.bn));
}

// The kernel of a compiled point: WM 32 the quads kernel, else natural-A (whose 8x8 tiles have a
// separate split-k epilogue).
using Kernel = void (*)(const float*, int, const float*, int, float*, int, int, int, int, int, bool);
template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
Kernel kernel_of(bool split) {
  if constexpr (kWM == 32)
    return register_tiled_quads_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  else if constexpr (kWN == 32)
    return split ? register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, true>
                 : register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  else
    return register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(ch)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), unsigned(split_k(p.k, ch.bk, ch.split).blocks)};
  lc.shared_bytes = shared_bytes(ch);
  return lc;
}

// The `tuned` choice (algorithms/models/register_tiled_model.hpp), with the fitted kernels'
// occupancies on this device, asked once (the H100's when there is no GPU).
template <int kBM, int kBN, int kWM, int kWN, int kStages>
int blocks_per_sm() {
  const Choice ch{kBM, kBN, 16, kWM, kWN, kStages, 1};
  const Kernel kernel = kernel_of<kBM, kBN, 16, kWM, kWN, kStages>(false);
  allow_shared_bytes(kernel, shared_bytes(ch));
  int blocks = 0;
  MMLAB_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, int(threads_of(ch)), shared_bytes(ch)));
  return blocks;
}

const std::vector<int>& occupancies(const DeviceInfo& d) {
  static const std::vector<int> fitted = fitted_occupancies();
  if (!d.present) return fitted;
  static const std::vector<int> on_device = [] {
#define MMLAB_OCCUPANCY(BM, BN, WM, WN, S, ...) std::max(1, blocks_per_sm<BM, BN, WM, WN, S>()),
    return std::vector<int>{MMLAB_REGISTER_TILED_FITTED(MMLAB_OCCUPANCY)};
#undef MMLAB_OCCUPANCY
  }();
  return on_device;
}

Choice tuned(const Problem& p, const DeviceInfo& d, double* ms = nullptr) {
  return cheapest_register_tile(p, d.sm_count > 0 ? d.sm_count : 132, occupancies(d), ms);
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
  const Kernel kernel = kernel_of<kBM, kBN, kBK, kWM, kWN, kStages>(split);
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
  MMLAB_ENTRY(128, 128, 8, 32, 128) MMLAB_ENTRY(128, 128, 16, 32, 128) MMLAB_ENTRY(128, 256, 16, 32, 128)
  MMLAB_ENTRY(64, 128, 16, 32, 64) MMLAB_ENTRY(64, 256, 16, 32, 64)};
// clang-format on
#undef MMLAB_ENTRY
#undef MMLAB_STAGE

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const Operands o = aligned_operands(r);
  const bool split = lc.grid.z > 1;
  if (split) zero_for_split_k(r);
  kKernels.at (*r.params)(r, o, lc, int(split_k(p.k, ch.bk, ch.split).k_per_block(ch.bk)), split);
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
  mark_split_k(a, {"tuned", "manual"});
  use_kernels(a, kKernels, launch, run);
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    return register_tiled_model(choice(q), q, p, model_sms(d), occupancies(d));
  });
}

}  // namespace mmlab
