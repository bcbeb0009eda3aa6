// tf32x3: FP32 accuracy from the tensor cores. Each operand x is split into a high part big = rn(x)
// and a low part small = rn(x - big) (TF32, or FP16 after scaling each row of A and column of B by a
// power of two); a b = big big + big small + small big (small small lies below FP32's rounding) as
// three tensor-core products, each k tile's products added into FP32 accumulators by ordinary
// round-to-nearest adds (summed inside the mma over all of k, the error grew like k).
// Source: the split-precision ("3xTF32") technique as CUTLASS ships it for sm_80; FP16 parts after
// Ootomo & Yokota, IJHPCA 2022. Each variant's work split, and why: docs/tf32x3-notes.md.
// Variants (the number counts the products; the 2s split A only and are judged as TF32):
//   split3, split2        mma.sync m16n8k8: 128 x 128 tiles of 8 warps, cp.async stages
//   wgmma3, wgmma2        wgmma (sm_90a) fed by TMA; consumers split B into swizzled operands in the k loop
//   presplit3, presplit2  a pass writes the big and small parts once; a plain TF32 wgmma product by TMA
//   half3, half2          presplit with FP16 parts of the scaled rows and columns: twice TF32's rate
// Axis `split` (presplit, half): k over blockIdx.z, partial tiles added atomically; `auto` fills the SMs.
// Any m, n, k (rows not 16-byte aligned are padded first). Example:
// mmlab run --algorithms tf32x3,cublas --tf32x3.variant half3,presplit3 --size 4096,8192
#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/split_k.hpp"
#include "algorithms/kernels/tf32x3_mma.cuh"
#include "algorithms/kernels/tf32x3_presplit.cuh"
#include "algorithms/kernels/tf32x3_wgmma.cuh"
#include "algorithms/launch/sm90a.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "runtime/gpu.hpp"

namespace mmlab {
namespace {

enum class Kind { split3, split2, wgmma3, wgmma2, presplit3, presplit2, half3, half2 };
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"split3", "mma.sync: big*big + big*small + small*big, FP32 accumulation"},
      {"split2", "mma.sync: (big + small) A times rn_tf32(B): two products", Precision::tf32},
      {"wgmma3", "wgmma (sm_90a): TMA, producer warpgroup splits into swizzled operands, three products"},
      {"wgmma2", "wgmma (sm_90a): as wgmma3 with A split only: two products", Precision::tf32},
      {"presplit3", "a pass splits A and B (B transposed) once; wgmma (sm_90a) reads all four parts by TMA"},
      {"presplit2", "as presplit3 with B's small part left out: two products", Precision::tf32},
      {"half3",
       "as presplit3 with FP16 parts of row- and column-scaled values: twice the rate, half the bytes"},
      {"half2", "as half3 with B's small part left out: two products", Precision::tf32}};
  return v;
}
bool uses_wgmma(const Params& q) { return variant_kind<Kind>(variants(), q) >= Kind::wgmma3; }
bool presplit(const Params& q) { return variant_kind<Kind>(variants(), q) >= Kind::presplit3; }
bool halves(const Params& q) { return variant_kind<Kind>(variants(), q) >= Kind::half3; }

// The presplit arrays' k pitch: k rounded up to 16 bytes of parts (TMA's row alignment).
template <typename T>
long split_pitch(long k) {
  constexpr long per16 = 16 / sizeof(T);
  return (k + per16 - 1) / per16 * per16;
}
// Big and small A (m x kp) and B^T (n x kp); FP16 parts add the rows' and columns' largest |x| (bits).
template <typename T>
std::size_t split_bytes(const Problem& p) {
  const std::size_t parts = sizeof(T) * std::size_t(2 * (p.m + p.n) * split_pitch<T>(p.k));
  return sizeof(T) == 4 ? parts : parts + sizeof(unsigned) * std::size_t(p.m + p.n);
}

std::size_t workspace(const Problem& p, const Params& q) {
  if (halves(q)) return split_bytes<__half>(p);
  return presplit(q) ? split_bytes<float>(p) : aligned_workspace(p, q);
}

std::size_t shared_bytes(const Params& q) {
  const long stages = q.integer("stages");
  if (presplit(q))
    return 1024 + sizeof(float) * std::size_t(stages * 4) * kTileFloats +
           sizeof(std::uint64_t) * std::size_t(2 * stages);
  if (uses_wgmma(q))
    return 1024 + sizeof(float) * std::size_t(kOperandBuffers * 2 + stages * 2) * kTileFloats +
           sizeof(std::uint64_t) * std::size_t(2 * stages + 2 * kOperandBuffers);
  return sizeof(float) * std::size_t(stages * kStageFloats);
}

// The presplit product's k split (axis `split`, algorithms/launch/split_k.hpp): blockIdx.z takes
// whole k tiles of 128 bytes of parts (32 k of TF32, 64 of FP16). `auto` resolves to the largest
// split that leaves no SM without a block (output tiles x split <= SMs) and each split at least 4 k
// tiles: the shapes with few output tiles and a long k, where one block per tile would leave most
// of the GPU idle.
const std::vector<std::string> kSplits = {"auto", "1", "2", "3", "4", "6", "8", "12", "16"};
long k_depth(const Params& q) { return halves(q) ? 64 : 32; }
long k_tiles(const Problem& p, const Params& q) { return (p.k + k_depth(q) - 1) / k_depth(q); }
long output_tiles(const Problem& p) { return long(ceil_div(p.m, kBM)) * long(ceil_div(p.n, kBN)); }
SplitK k_split(const Problem& p, const Params& q) {
  return split_k(p.k, k_depth(q), presplit(q) ? q.integer("split") : 1);
}

Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (!presplit(q) || q.text("split") != "auto") return q;
  const long bound = std::min(std::max(1L, d.sm_count / output_tiles(p)), std::max(1L, k_tiles(p, q) / 4));
  std::string pick = "1";
  for (const std::string& v : kSplits)
    if (v != "auto" && std::stol(v) <= bound) pick = v;
  Params out = q;
  out.set("split", pick);
  return out;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  LaunchConfig lc;
  lc.block = {unsigned(uses_wgmma(q) ? kWgThreads : kThreads), 1, 1};
  lc.grid = {ceil_div(p.n, kBN), ceil_div(p.m, kBM), unsigned(k_split(p, q).blocks)};  // 128 x 128 tiles
  lc.shared_bytes = shared_bytes(q);
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (d.present && d.cc_major < 8) return "tf32x3 needs TF32 mma.sync: compute capability 8.0 or newer";
  if (uses_wgmma(q) && d.present && (d.cc_major != 9 || !built_for_sm90a()))
    return "wgmma exists on sm_90a only (Hopper, and a build for 90a)";
  if (presplit(q) && ceil_div(round4(p.k), 32) > 65535)
    return "the presplit pass over B runs a grid row per 32 of k: k at most 2097120";
  return fits_aligned_int(p, "tf32x3");
}

template <int kStages, int kProducts>
void launch_mma(const RunArgs& r, const LaunchConfig& lc) {
  const Operands o = aligned_operands(r);
  const auto kernel = tf32x3_kernel<kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  const Problem& p = r.problem;
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(o.a, o.lda, o.b, o.ldb, r.c, int(p.n),
                                                                     int(p.m), int(p.n), o.k);
}

template <int kRaw, int kProducts>
void launch_wgmma(const RunArgs& r, const LaunchConfig& lc) {
  const Operands o = aligned_operands(r);
  const Problem& p = r.problem;
  auto& maps = *static_cast<TensorMaps*>(r.state);
  const CUtensorMap& a_map = maps.get(o.a, p.m, p.k, o.lda, kWgTile, kWgDepth, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap& b_map = maps.get(o.b, p.k, p.n, o.ldb, kWgDepth, kWgTile);
  const auto kernel = tf32x3_wgmma_kernel<kRaw, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(a_map, b_map, r.c, int(p.n), int(p.m),
                                                                     int(p.n), int(p.k));
}

template <typename T, int kStages, int kProducts>
void launch_presplit(const RunArgs& r, const LaunchConfig& lc) {
  const Problem& p = r.problem;
  const SplitK split = k_split(p, *r.params);
  if (split.blocks > 1) zero_for_split_k(r);
  const long kp = split_pitch<T>(p.k);
  T* a_big = static_cast<T*>(r.workspace);
  T* a_small = a_big + p.m * kp;
  T* b_big = a_small + p.m * kp;
  T* b_small = b_big + p.n * kp;
  unsigned *a_bits = nullptr, *b_bits = nullptr;  // FP16 parts: the rows' and columns' largest |x|
  if (sizeof(T) == 2) {
    a_bits = reinterpret_cast<unsigned*>(b_small + p.n * kp), b_bits = a_bits + p.m;
    MMLAB_CHECK(cudaMemsetAsync(b_bits, 0, sizeof(unsigned) * std::size_t(p.n), r.stream));
    column_abs_max<<<dim3(ceil_div(p.n, 128), ceil_div(p.k, kMaxRows)), 128, 0, r.stream>>>(r.b, p.k, p.n,
                                                                                            b_bits);
  }
  split_rows<<<unsigned(std::min<long>(p.m, 65535)), 256, 0, r.stream>>>(r.a, p.m, p.k, kp, a_bits, a_big,
                                                                         a_small);
  split_transposed<<<dim3(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(kp, 32))), dim3(32, 8), 0,
                     r.stream>>>(r.b, int(p.k), int(p.n), int(kp), b_bits, b_big,
                                 kProducts == 3 ? b_small : nullptr);
  auto& maps = *static_cast<TensorMaps*>(r.state);
  const auto swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  const auto type = sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const int depth = 128 / sizeof(T);  // k of a 128-byte row of parts: a TMA box row
  auto map = [&](const T* parts, long rows) {
    return maps.get(parts, rows, kp, kp, kWgTile, depth, swizzle, type);
  };
  const auto kernel = tf32x3_presplit_kernel<T, kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      map(a_big, p.m), map(a_small, p.m), map(b_big, p.n), map(b_small, p.n), r.c, int(p.n), int(p.m),
      int(p.n), int(kp), a_bits, b_bits, int(split.tiles));
}

#define MMLAB_MMA(V, P, S) {{#V, {{"stages", #S}}}, launch_mma<S, P>},
#define MMLAB_WGMMA(V, P, S) {{#V, {{"stages", #S}}}, launch_wgmma<S, P>},
#define MMLAB_PRESPLIT(V, P, S) {{#V, {{"stages", #S}}}, launch_presplit<float, S, P>},
#define MMLAB_HALF(V, P, S) {{#V, {{"stages", #S}}}, launch_presplit<__half, S, P>},
const KernelTable<Launcher> kKernels = {
    MMLAB_MMA(split3, 3, 2) MMLAB_MMA(split3, 3, 3) MMLAB_MMA(split3, 3, 4)        //
    MMLAB_MMA(split2, 2, 2) MMLAB_MMA(split2, 2, 3) MMLAB_MMA(split2, 2, 4)        //
    MMLAB_WGMMA(wgmma3, 3, 2) MMLAB_WGMMA(wgmma3, 3, 3) MMLAB_WGMMA(wgmma3, 3, 4)  //
    MMLAB_WGMMA(wgmma2, 2, 2) MMLAB_WGMMA(wgmma2, 2, 3) MMLAB_WGMMA(wgmma2, 2, 4)  //
    MMLAB_PRESPLIT(presplit3, 3, 2) MMLAB_PRESPLIT(presplit3, 3, 3)                //
    MMLAB_PRESPLIT(presplit2, 2, 2) MMLAB_PRESPLIT(presplit2, 2, 3)                //
    MMLAB_HALF(half3, 3, 2) MMLAB_HALF(half3, 3, 3) MMLAB_HALF(half2, 2, 2) MMLAB_HALF(half2, 2, 3)};
#undef MMLAB_MMA
#undef MMLAB_WGMMA
#undef MMLAB_PRESPLIT
#undef MMLAB_HALF

void run(const RunArgs& r) {
  kKernels.at (*r.params)(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(tf32x3) {
  a.summary =
      "FP32 from TF32 (or scaled FP16) tensor cores: operands split big + small, three products in FP32";
  a.variants = variants();
  a.axes = {{"stages", AxisKind::integer, "shared-memory stages (wgmma: raw TMA buffers)", "3", {}, {}},
            {"split",
             AxisKind::choice,
             "k split over blockIdx.z, partial tiles added atomically; auto: enough blocks for the SMs",
             "auto",
             kSplits,
             {"presplit3", "presplit2", "half3", "half2"}}};
  a.resolve = resolve;
  a.constraints =
      "compute capability 8.0 (wgmma: sm_90a); every (padded) matrix under 2^31 elements; any m, n, k; "
      "a split of more blocks than k tiles runs one block per k tile";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = TensorMaps::make;
  mark_split_k(a, {"presplit3", "presplit2", "half3", "half2"});
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
