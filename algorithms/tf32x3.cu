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
#include "algorithms/models/tf32x3_model.hpp"
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
// Big and small A (m x kp) and B^T (n x kp).
template <typename T>
std::size_t split_bytes(const Problem& p) {
  return sizeof(T) * std::size_t(2 * (p.m + p.n) * split_pitch<T>(p.k));
}

// The half variants' workspace: the parts (FP16, or TF32 where the split falls back: the same bytes,
// as many as TF32's take), then the rows' and columns' largest |x| (bits), the lossy values' counts,
// per-tile marks and fallback flag (zeroed together before each run), then their lists
// (kernels/tf32x3_split_pass.cuh).
struct HalfWorkspace {
  __half *a_big, *a_small, *b_big, *b_small;
  float *a_big32, *a_small32, *b_big32, *b_small32;
  unsigned *a_bits, *b_bits;  // b_bits ... fallback are zeroed together
  HalfLossy lossy;
  std::size_t zeroed_bytes, bytes;
};
HalfWorkspace half_workspace(const Problem& p, void* base) {
  HalfWorkspace w{};
  const long kp = split_pitch<__half>(p.k), kp32 = split_pitch<float>(p.k);
  const long row_tiles = ceil_div(p.m, kWgTile), col_tiles = ceil_div(p.n, kWgTile);
  char* at = static_cast<char*>(base);
  w.a_big = reinterpret_cast<__half*>(at), w.a_small = w.a_big + p.m * kp;
  w.b_big = w.a_small + p.m * kp, w.b_small = w.b_big + p.n * kp;
  w.a_big32 = reinterpret_cast<float*>(at), w.a_small32 = w.a_big32 + p.m * kp32;
  w.b_big32 = w.a_small32 + p.m * kp32, w.b_small32 = w.b_big32 + p.n * kp32;
  at += std::max(split_bytes<__half>(p), split_bytes<float>(p));
  w.a_bits = reinterpret_cast<unsigned*>(at), w.b_bits = w.a_bits + p.m;
  int* counts = reinterpret_cast<int*>(w.b_bits + p.n);
  w.lossy.a_count = counts, w.lossy.b_count = counts + p.m;
  w.lossy.a_any = counts + p.m + p.n, w.lossy.b_any = w.lossy.a_any + row_tiles;
  w.lossy.fallback = w.lossy.b_any + col_tiles;
  w.zeroed_bytes = sizeof(int) * std::size_t(p.n + p.m + p.n + row_tiles + col_tiles + 1);
  at = reinterpret_cast<char*>(w.lossy.fallback + 1);
  at += (8 - reinterpret_cast<std::uintptr_t>(at) % 8) % 8;  // the lists' 8-byte entries
  w.lossy.a_list = reinterpret_cast<Lossy*>(at), w.lossy.b_list = w.lossy.a_list + p.m * kLossyPerLine;
  w.bytes = std::size_t(reinterpret_cast<char*>(w.lossy.b_list + p.n * kLossyPerLine) - static_cast<char*>(base));
  w.lossy.k = int(p.k), w.lossy.n = int(p.n);
  return w;
}

std::size_t workspace(const Problem& p, const Params& q) {
  if (halves(q)) return half_workspace(p, nullptr).bytes + 8;  // + 8: the lists' alignment at any base
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

// The split pass over A (rows) and B (transposed tiles) into parts of type T (kp = k rounded up), with
// the FP16 parts' scales and lossy lists (`bits` null for TF32 parts).
template <typename T>
void split_pass(const RunArgs& r, long kp, unsigned* a_bits, unsigned* b_bits, T* a_big, T* a_small, T* b_big,
                T* b_small, const HalfLossy& lossy) {
  const Problem& p = r.problem;
  split_rows<<<unsigned(std::min<long>(p.m, 65535)), 256, 0, r.stream>>>(r.a, p.m, p.k, kp, a_bits, a_big,
                                                                         a_small, lossy);
  const long tiles = long(ceil_div(p.n, 32)) * ceil_div(kp, 32);
  split_transposed<<<unsigned(std::min<long>(tiles, 1L << 30)), 256, 0, r.stream>>>(
      r.b, int(p.k), int(p.n), int(kp), b_bits, b_big, b_small, lossy);
}

template <typename T>
CUtensorMap parts_map(const RunArgs& r, const T* parts, long rows, long kp) {
  const auto type = sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const int depth = 128 / sizeof(T);  // k of a 128-byte row of parts: a TMA box row
  return static_cast<TensorMaps*>(r.state)->get(parts, rows, kp, kp, kWgTile, depth, CU_TENSOR_MAP_SWIZZLE_128B,
                                                type);
}

template <int kStages, int kProducts>
void launch_presplit(const RunArgs& r, const LaunchConfig& lc) {
  const Problem& p = r.problem;
  const SplitK split = k_split(p, *r.params);
  if (split.blocks > 1) zero_for_split_k(r);
  const long kp = split_pitch<float>(p.k);
  float* a_big = static_cast<float*>(r.workspace);
  float *a_small = a_big + p.m * kp, *b_big = a_small + p.m * kp, *b_small = b_big + p.n * kp;
  split_pass<float>(r, kp, nullptr, nullptr, a_big, a_small, b_big, kProducts == 3 ? b_small : nullptr, {});
  const auto kernel = tf32x3_presplit_kernel<kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      parts_map(r, a_big, p.m, kp), parts_map(r, a_small, p.m, kp), parts_map(r, b_big, p.n, kp),
      parts_map(r, b_small, p.n, kp), r.c, int(p.n), int(p.m), int(p.n), int(kp), int(split.tiles));
}

// half3, half2: the FP16 split (scales, parts, lossy lists), the TF32 one where it fell back (a launch
// that returns at once otherwise), then one product kernel that takes whichever path the flag says.
template <int kStages, int kProducts>
void launch_half(const RunArgs& r, const LaunchConfig& lc) {
  const Problem& p = r.problem;
  const SplitK split = k_split(p, *r.params);
  if (split.blocks > 1) zero_for_split_k(r);
  const long kp = split_pitch<__half>(p.k), kp32 = split_pitch<float>(p.k);
  void* base = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(r.workspace) + 7) & ~std::uintptr_t(7));
  HalfWorkspace w = half_workspace(p, base);
  w.lossy.a = r.a, w.lossy.b = r.b;
  MMLAB_CHECK(cudaMemsetAsync(w.b_bits, 0, w.zeroed_bytes, r.stream));
  column_abs_max<<<dim3(ceil_div(p.n, 128), ceil_div(p.k, kMaxRows)), 128, 0, r.stream>>>(r.b, p.k, p.n,
                                                                                          w.b_bits);
  split_pass<__half>(r, kp, w.a_bits, w.b_bits, w.a_big, w.a_small, w.b_big, kProducts == 3 ? w.b_small : nullptr,
                     w.lossy);
  split_fallback<<<unsigned(4 * std::max(r.device->sm_count, 1)), 256, 0, r.stream>>>(
      r.a, r.b, p.m, p.n, p.k, kp32, w.a_big32, w.a_small32, w.b_big32, kProducts == 3 ? w.b_small32 : nullptr,
      w.lossy);
  const PartMaps halves{parts_map(r, w.a_big, p.m, kp), parts_map(r, w.a_small, p.m, kp),
                        parts_map(r, w.b_big, p.n, kp), parts_map(r, w.b_small, p.n, kp)};
  const PartMaps tf32{parts_map(r, w.a_big32, p.m, kp32), parts_map(r, w.a_small32, p.m, kp32),
                      parts_map(r, w.b_big32, p.n, kp32), parts_map(r, w.b_small32, p.n, kp32)};
  const int per32 = int(ceil_div(ceil_div(p.k, 32), split.blocks));  // the same blocks in z, TF32's k tiles
  const auto kernel = tf32x3_half_kernel<kStages, kProducts>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      halves, tf32, r.c, int(p.n), int(p.m), int(p.n), int(kp), int(kp32), w.a_bits, w.b_bits, int(split.tiles),
      per32, w.lossy);
}

#define MMLAB_MMA(V, P, S) {{#V, {{"stages", #S}}}, launch_mma<S, P>},
#define MMLAB_WGMMA(V, P, S) {{#V, {{"stages", #S}}}, launch_wgmma<S, P>},
#define MMLAB_PRESPLIT(V, P, S) {{#V, {{"stages", #S}}}, launch_presplit<S, P>},
#define MMLAB_HALF(V, P, S) {{#V, {{"stages", #S}}}, launch_half<S, P>},
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
  a.arithmetic_by = [](const Params& q) {  // the number in the name counts the products
    const Kind k = variant_kind<Kind>(variants(), q);
    const int passes = k == Kind::split2 || k == Kind::wgmma2 || k == Kind::presplit2 || k == Kind::half2 ? 2 : 3;
    return Arithmetic{halves(q) ? MathUnit::fp16_tensor : MathUnit::tf32_tensor, passes};
  };
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
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    return tf32x3_model(p, q, launch(p, q, d), d);
  });
}

}  // namespace mmlab
