// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of Gupta and Bhalla (2022) and the SGEMM README taken to
// their usual end point (block tile -> warp tile -> thread tile), sized for Hopper, where each
// scheduler issues one FFMA per cycle at most: every non-FFMA instruction costs an FFMA slot, so
// the design is about the share of FFMAs in the instruction stream (docs/flagship-notes.md).
//
// Two kernels, chosen by the `warp` axis (compiled in register_tiled_natural_64x64.cu,
// register_tiled_natural_64x32.cu and register_tiled_quads.cu: algorithms/launch/
// register_tiled_kernels.cuh; this file is the descriptor). Quads (warp tiles 32x64, 32x128;
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
#include "algorithms/launch/register_tiled_kernels.cuh"
#include "algorithms/launch/split_k.hpp"

namespace mmlab {
namespace {

enum class Kind { tuned, manual };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"tuned", "kernel and k split chosen by a cost model of waves over the device's SMs"},
    {"manual", "all from the axes"}};

using Choice = RegisterTile;
Choice choice(const Params& q) { return register_tile(q); }  // of resolved (manual) parameters

// The compiled points (natural-A 64x64 and 64x32 warp tiles, then quads: each list in a file of its
// own) and their table.
const std::vector<RegisterTiledPoint>& points() {
  static const std::vector<RegisterTiledPoint> all = [] {
    std::vector<RegisterTiledPoint> out;
    for (auto list : {register_tiled_natural_64x64_points, register_tiled_natural_64x32_points,
                      register_tiled_quads_points})
      for (const RegisterTiledPoint& q : list()) out.push_back(q);
    return out;
  }();
  return all;
}
const KernelTable<RegisterTiledLauncher>& kernels() {
  static const KernelTable<RegisterTiledLauncher> table = [] {
    std::vector<KernelTable<RegisterTiledLauncher>::Entry> entries;
    for (const RegisterTiledPoint& q : points()) entries.push_back(q.entry);
    return KernelTable<RegisterTiledLauncher>(entries);
  }();
  return table;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(q);
  LaunchConfig lc;
  lc.block = {unsigned(register_tiled_threads(ch)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), unsigned(split_k(p.k, ch.bk, ch.split).blocks)};
  lc.shared_bytes = register_tiled_shared_bytes(ch);
  return lc;
}

// The `tuned` choice (algorithms/models/register_tiled_model.hpp), with the fitted kernels'
// occupancies on this device, asked once (the H100's when there is no GPU).
int blocks_per_sm(const RegisterTile& t) {
  for (const RegisterTiledPoint& q : points())
    if (q.tile.bm == t.bm && q.tile.bn == t.bn && q.tile.bk == t.bk && q.tile.wm == t.wm && q.tile.wn == t.wn &&
        q.tile.stages == t.stages)
      return q.blocks_per_sm();
  throw std::logic_error("register_tiled: a fitted kernel is not compiled");
}

const std::vector<int>& occupancies(const DeviceInfo& d) {
  static const std::vector<int> fitted = fitted_occupancies();
  if (!d.present) return fitted;
  static const std::vector<int> on_device = [] {
#define MMLAB_OCCUPANCY(BM, BN, WM, WN, S, ...) std::max(1, blocks_per_sm({BM, BN, 16, WM, WN, S, 1})),
    return std::vector<int>{MMLAB_REGISTER_TILED_FITTED(MMLAB_OCCUPANCY)};
#undef MMLAB_OCCUPANCY
  }();
  return on_device;
}

Choice tuned(const Problem& p, const DeviceInfo& d, double* ms = nullptr) {
  return cheapest_register_tile(p, planning_sms(d), occupancies(d), ms);
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

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(*r.params);
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const Operands o = aligned_operands(r);
  const bool split = lc.grid.z > 1;
  if (split) zero_for_split_k(r);
  kernels().at(*r.params)(r, o, lc, int(split_k(p.k, ch.bk, ch.split).k_per_block(ch.bk)), split);
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
  use_kernels(a, kernels(), launch, run);
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    return register_tiled_model(choice(q), q, p, model_sms(d), occupancies(d));
  });
}

}  // namespace mmlab
