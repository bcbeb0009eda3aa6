// deep_k: small outputs with deep k (m and n in the hundreds, k in the tens of thousands), where a
// data-parallel grid has far fewer output tiles than the device has block slots. k is split over
// blockIdx.z into as many slices as fill the slots once: each block multiplies one k slice of one
// output tile with one of register_tiled's products (axis `warp`: natural-A, A and B copied as stored
// by cp.async, kernels/register_tiled_natural.cuh; quads, A transposed through registers,
// kernels/register_tiled_quads.cuh) and stores its partial tile into its slice of the workspace; a
// second kernel adds the slices in a fixed order (add_many_slices_kernel). C is the same on every run
// (deterministic): no zeroed C, no atomics. 16-byte loads and copies of an operand whose rows are
// 16-byte aligned (A: k a multiple of 4; B: n), else 4-byte ones (natural-A: both 4-byte unless both
// are aligned): no padded copy of A, the largest operand here.
// Why a whole wave: at 492x130x62700 on an H100, register_tiled's natural kernel split 32 ways
// (atomics) had 384 blocks for the 528 slots of its tile (ncu: issue slots 63% busy, achieved
// occupancy 17% of 25%) and ran at 0.67x cuBLAS; the flagship's pick there, small split 64, at 0.66x
// (data/flagship/weak-classes/h100-d65b30d/). Filled, the product itself is the limit: the quads
// kernel is 15-20% slower per flop than cuBLAS there, and an operand read 4 bytes at a time 10-20%
// slower again (docs/flagship-notes.md, round eleven).
// Variants: `waves`, the split that fills the device's slots once (floor(slots / tiles), each slice
// at least 256 deep); `manual`, the split from the axis.
// Example: mmlab run --algorithms deep_k,cublas --deep_k.tile all --deep_k.warp all --shape 492x130x62700,125x125x34624
#include <algorithm>
#include <cstdint>
#include <vector>

#include "algorithms/kernels/register_tiled_natural.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/deep_k_model.hpp"
#include "algorithms/models/split_k.hpp"

namespace mmlab {
namespace {

enum class Kind { waves, manual };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"waves", "k split into as many slices as fill the device's block slots once (each at least 256 deep)"},
    {"manual", "the split from the axis"}};

constexpr int kDepth = 16, kStages = 4;  // k per stage, stages in flight
constexpr long kMinSliceTiles = 16;      // a slice is at least 16 stages (256) deep
constexpr long kMaxSplit = 256;

// C = the sum of `slices` partial C's (count elements each, one after another) in a fixed order: a
// block of 32 x kSliceGroups threads takes 32 consecutive elements; thread (x, g) adds slices g, g +
// kSliceGroups, ... of element x in slice order, then thread (x, 0) adds the groups' sums in group
// order. kernels/reduce.cuh's add_slices_kernel (one chain per element) suits a few slices; with
// hundreds, one chain per element keeps too few loads in flight.
constexpr int kSliceGroups = 8;
__global__ void __launch_bounds__(32 * kSliceGroups)
    add_many_slices_kernel(const float* __restrict__ partial, float* __restrict__ c, long count, int slices) {
  __shared__ float sums[kSliceGroups][32];
  const long e = blockIdx.x * 32L + threadIdx.x;
  const int g = int(threadIdx.y);
  float s = 0.f;
  if (e < count) {
#pragma unroll 4
    for (int i = g; i < slices; i += kSliceGroups) s += __ldcg(partial + i * count + e);
  }
  sums[g][threadIdx.x] = s;
  __syncthreads();
  if (g == 0 && e < count) {
    float total = sums[0][threadIdx.x];
    for (int j = 1; j < kSliceGroups; ++j) total += sums[j][threadIdx.x];
    c[e] = total;
  }
}

using Kernel = void (*)(const float*, int, const float*, int, float*, int, int, int, int, int, bool);
struct Point {
  Kernel by_alignment[2][2];  // [A's rows 16-byte aligned][B's]: 16-byte loads and copies, else 4-byte ones
  int (*blocks_per_sm)();
  int min_blocks;  // its launch bounds' blocks per SM: the occupancy assumed without a GPU
};

// The warp tile: 64 rows, the natural-A kernel (WN 32: 8x8 outputs per thread; 64: 8x16); 32 rows,
// the quads kernel (A transposed through registers; WN 64: 8x8, 128: 8x16).
bool quads(const Shape2& w) { return w.x == 32; }
long threads_of(const Shape2& t, const Shape2& w) { return 32 * (t.x / w.x) * (t.y / w.y); }
std::size_t shared_bytes(const Shape2& t, const Shape2& w) {
  return sizeof(float) * std::size_t(kStages * kDepth * ((quads(w) ? t.x + 4 : t.x) + t.y));
}

// The kernel for A's and B's alignment (16-byte rows or not): quads takes each apart; natural-A copies
// both 4 bytes at a time unless both are aligned.
template <int BM, int BN, int WM, int WN, bool kVecA, bool kVecB>
Kernel kernel_of() {
  if constexpr (WM == 32) return register_tiled_quads_kernel<BM, BN, kDepth, kStages, WN / 32, true, kVecA, kVecB>;
  else return register_tiled_kernel<BM, BN, kDepth, WN, kStages, false, true, kVecA && kVecB>;
}
template <int BM, int BN, int WM, int WN>
int blocks_per_sm() {
  static const int blocks = [] {
    return std::max(resident_blocks(kernel_of<BM, BN, WM, WN, true, true>(), int(threads_of({BM, BN}, {WM, WN})),
                                    shared_bytes({BM, BN}, {WM, WN})),
                    1);
  }();
  return blocks;
}
template <int BM, int BN, int WM, int WN>
constexpr int min_blocks() {
  if constexpr (WM == 32) return Quads<BM, BN, kDepth, WN / 32>::min_blocks(true);
  else return Tiling<BM, BN, kDepth, WN>::kMinBlocks;
}

#define MMLAB_POINT(V, BM, BN, WM, WN)                                                                         \
  {{V, {{"tile", #BM "x" #BN}, {"warp", #WM "x" #WN}}},                                                         \
   Point{{{kernel_of<BM, BN, WM, WN, false, false>(), kernel_of<BM, BN, WM, WN, false, true>()},              \
          {kernel_of<BM, BN, WM, WN, true, false>(), kernel_of<BM, BN, WM, WN, true, true>()}},                \
         blocks_per_sm<BM, BN, WM, WN>, min_blocks<BM, BN, WM, WN>()}},
#define MMLAB_POINTS(BM, BN, WM, WN) MMLAB_POINT("waves", BM, BN, WM, WN) MMLAB_POINT("manual", BM, BN, WM, WN)
// clang-format off
const KernelTable<Point> kKernels = {
  MMLAB_POINTS(64, 64, 64, 32) MMLAB_POINTS(128, 64, 64, 32) MMLAB_POINTS(128, 128, 64, 32)
  MMLAB_POINTS(64, 128, 64, 64) MMLAB_POINTS(128, 128, 64, 64)
  MMLAB_POINTS(64, 64, 32, 64) MMLAB_POINTS(128, 64, 32, 64) MMLAB_POINTS(64, 128, 32, 64)
  MMLAB_POINTS(128, 128, 32, 64) MMLAB_POINTS(128, 128, 32, 128)};
// clang-format on
#undef MMLAB_POINTS
#undef MMLAB_POINT

long output_tiles(const Problem& p, const Shape2& t) { return long(ceil_div(p.m, t.x)) * long(ceil_div(p.n, t.y)); }

// The block slots of the device: SMs x the kernel's occupancy (without a GPU, an H100's 132 SMs and
// its estimate from the launch bounds and shared memory: launch/common.cuh).
long slots(const Params& q, const DeviceInfo& d) {
  const Point& k = kKernels.at(q);
  const long per_sm = d.present ? k.blocks_per_sm()
                                : h100_resident_blocks(k.min_blocks, shared_bytes(q.shape("tile"), q.shape("warp")));
  return planning_sms(d) * std::max(1L, per_sm);
}

// `waves`: the split whose blocks fill the slots once, each slice at least kMinSliceTiles stages.
Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (variant_kind<Kind>(kVariants, q) == Kind::manual) return q;
  const long stages = (p.k + kDepth - 1) / kDepth;
  const long wanted = slots(q, d) / std::max(1L, output_tiles(p, q.shape("tile")));
  const long split = std::max(1L, std::min({wanted, stages / kMinSliceTiles, kMaxSplit}));
  Params out(kVariants[int(Kind::manual)].name);
  out.set("tile", q.text("tile"));
  out.set("warp", q.text("warp"));
  out.set("split", std::to_string(split_k(p.k, kDepth, split).blocks));  // no slice without k
  return out;
}

SplitK division(const Problem& p, const Params& q) { return split_k(p.k, kDepth, q.integer("split")); }

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Shape2 t = q.shape("tile");
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(t, q.shape("warp"))), 1, 1};
  lc.grid = {ceil_div(p.n, t.y), ceil_div(p.m, t.x), unsigned(division(p, q).blocks)};
  lc.shared_bytes = shared_bytes(t, q.shape("warp"));
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (d.present && d.cc_major < 8) return "deep_k needs cp.async: compute capability 8.0 or newer";
  if (variant_kind<Kind>(kVariants, q) == Kind::manual && (q.integer("split") < 1 || q.integer("split") > kMaxSplit))
    return "split must be 1 to 256";
  if (ceil_div(p.m, q.shape("tile").x) > 65535) return "m / tile rows must be at most 65535 (the grid's y)";
  return fits_aligned_int(p, "deep_k");
}

std::size_t workspace(const Problem& p, const Params& q) {
  if (variant_kind<Kind>(kVariants, q) != Kind::manual) return 0;  // resolved first
  const long split = division(p, q).blocks;
  return split > 1 ? sizeof(float) * std::size_t(split) * std::size_t(p.m * p.n) : 0;
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const SplitK s = division(p, *r.params);
  const Point& point = kKernels.at(*r.params);
  auto aligned = [](const void* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0; };
  const Kernel kernel = point.by_alignment[p.k % 4 == 0 && aligned(r.a)][p.n % 4 == 0 && aligned(r.b)];
  allow_shared_bytes(kernel, lc.shared_bytes);
  float* out = s.blocks > 1 ? static_cast<float*>(r.workspace) : r.c;  // one slice: C itself
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(r.a, int(p.k), r.b, int(p.n), out, int(p.n),
                                                                     int(p.m), int(p.n), int(p.k),
                                                                     int(s.k_per_block(kDepth)), false);
  MMLAB_CHECK_LAUNCH();
  if (s.blocks > 1) {
    const long count = p.m * p.n;
    add_many_slices_kernel<<<unsigned((count + 31) / 32), dim3(32, kSliceGroups), 0, r.stream>>>(out, r.c, count,
                                                                                            int(s.blocks));
    MMLAB_CHECK_LAUNCH();
  }
}

}  // namespace

MMLAB_ALGORITHM(deep_k) {
  a.summary =
      "small outputs, deep k: k split to fill the device's block slots once, register_tiled's natural-A "
      "product per slice, the slices added in a fixed order (deterministic)";
  a.variants = kVariants;
  a.axes = {{"tile", AxisKind::shape, "block tile BMxBN: 64x64, 128x64, 64x128 or 128x128 (as compiled per warp tile)",
             "128x64"},
            {"warp",
             AxisKind::shape,
             "warp tile: natural-A 64x32 (8x8 outputs per thread) or 64x64 (8x16); quads (A transposed through "
             "registers) 32x64 (8x8) or 32x128 (8x16)",
             "64x32"},
            {"split",
             AxisKind::integer,
             "k slices over blockIdx.z, each stored to the workspace and added in slice order by a second kernel",
             "8",
             {"8", "32"},
             {"manual"},
             (unsigned long long)kMaxSplit}};
  a.resolve = resolve;
  a.constraints =
      "compute capability 8.0; m / BM at most 65535; split 1 to 256; every matrix under 2^31 elements; any m, "
      "n, k, any alignment (4-byte loads and copies where k or n is not a multiple of 4)";
  a.supports = supports;
  a.workspace_bytes = workspace;
  use_kernels(a, kKernels, launch, run);
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const LaunchConfig lc = launch(p, q, d);
    return deep_k_model(p, q, lc.grid.z, long(lc.grid.x) * lc.grid.y * lc.grid.z, d);
  });
}

}  // namespace mmlab
