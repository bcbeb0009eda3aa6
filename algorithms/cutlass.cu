// cutlass: CUTLASS's own kernels, a second yardstick beside cuBLAS. CUTLASS is NVIDIA's open CUDA C++
// template library for GEMM (the kernels people build on); its headers come from the PyPI package
// nvidia-cutlass 4.2.0.0, which scripts/setup fetches into build/deps (CMake: MMLAB_CUTLASS_DIR).
// Without them the lab builds without this algorithm and says so once, at configure time.
// Variants (instantiated once each, so the build stays a few minutes longer at most):
//   simt          CUTLASS 2.x GemmUniversal, FP32 FFMA (OpClassSimt, Sm80), 4 stages, any alignment,
//                 data-parallel (identity swizzle); axis `tile`: the block tiles of CUTLASS's SIMT SGEMM
//                 kernels for Sm80 (its library generator): 256x128 (64x64 warps), 128x128 (32x64),
//                 64x64 (32x32), each with k steps of 8
//   simt_streamk  the same kernel decomposed stream-K (ThreadblockSwizzleStreamK: Osama, Merrill,
//                 Cecka, Garland and Owens, PPoPP 2023), CUTLASS's own stream-K
//   tf32x3        2.x GemmUniversal on TF32 tensor cores with OpMultiplyAddFastF32: each operand
//                 split big + small, three products (CUTLASS example 27's "3xTF32"): FP32-accurate;
//                 128x128x16 blocks of 64x64x16 warps, m16n8k8 mma.sync, 3 stages
//   tf32          3.x kernel from the collective builder for sm_90a: TMA loads, wgmma, warp-specialized
//                 (KernelScheduleAuto), 128x128x32 tiles, 1x1 clusters, persistent; TF32 (judged as
//                 TF32, as cuBLAS's tf32 variant is; on request)
//   tf32_streamk  the same with CUTLASS 3's stream-K tile scheduler (on request)
// Row-major A (m x k), B (k x n), C (m x n) as the lab stores them, alpha = 1, beta = 0 (C is not read).
// The tensor-core variants copy 16 bytes at a time: k and n multiples of 4 (and 16-byte aligned
// pointers); other shapes are skipped rows with the reason. The stream-K variants take a workspace.
// The sm_90a kernels are compiled in cutlass_sm90.cu.
// Example: mmlab run --algorithms cutlass,cublas --cutlass.variant simt,simt_streamk,tf32x3 --size 4096
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "algorithms/launch/cutlass_launch.cuh"
#include "algorithms/launch/sm90a.cuh"

namespace mmlab {
namespace {

enum class Kind { simt, simt_streamk, tf32x3, tf32, tf32_streamk };  // in the order of variants()
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"simt", "CUTLASS 2.x FP32 SIMT GemmUniversal, 4 stages, data-parallel"},
      {"simt_streamk", "the simt kernel with CUTLASS's stream-K swizzle (ThreadblockSwizzleStreamK)"},
      {"tf32x3", "CUTLASS 2.x 3xTF32 (OpMultiplyAddFastF32, example 27): FP32-accurate on TF32 tensor cores"},
      {"tf32", "CUTLASS 3.x sm_90a warp-specialized TMA + wgmma kernel (collective builder), TF32", Precision::tf32,
       true},
      {"tf32_streamk", "the tf32 kernel with CUTLASS 3's stream-K tile scheduler, TF32", Precision::tf32, true}};
  return v;
}
Kind kind_of(const Params& q) { return variant_kind<Kind>(variants(), q); }

// The stream-K variants' workspace (partial tiles and flags), sized without the device: CUTLASS's
// own size for the problem is checked against it at run time.
constexpr std::size_t kStreamKWorkspace = std::size_t(64) << 20;

using Row = cutlass::layout::RowMajor;

// ---- CUTLASS 2.x: GemmUniversal (SIMT FP32; 3xTF32 on tensor cores) ----
template <int BM, int BN, int WM, int WN, class Swizzle>
using SimtGemm = cutlass::gemm::device::GemmUniversal<
    float, Row, float, Row, float, Row, float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, 8>, cutlass::gemm::GemmShape<WM, WN, 8>, cutlass::gemm::GemmShape<1, 1, 1>,
    cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Swizzle, 4, 1, 1>;
using Identity = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>;
using StreamK = cutlass::gemm::threadblock::ThreadblockSwizzleStreamK;
using Tf32x3Gemm = cutlass::gemm::device::GemmUniversal<
    float, Row, float, Row, float, Row, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 16>, cutlass::gemm::GemmShape<64, 64, 16>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 4, 4, cutlass::arch::OpMultiplyAddFastF32>;

template <class Gemm, bool kStreamK>
void run_2x(const RunArgs& r, std::size_t workspace_bytes) {
  const Problem& p = r.problem;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  typename Gemm::Arguments args = [&] {
    if constexpr (kStreamK)
      return typename Gemm::Arguments(cutlass::gemm::GemmUniversalMode::kGemm, {m, n, k}, 1, {1.f, 0.f}, r.a, r.b,
                                      r.c, r.c, 0, 0, 0, 0, k, n, n, n, r.device->sm_count);
    else
      return typename Gemm::Arguments(cutlass::gemm::GemmUniversalMode::kGemm, {m, n, k}, 1, {1.f, 0.f}, r.a, r.b,
                                      r.c, r.c, 0, 0, 0, 0, k, n, n, n);
  }();
  cutlass_launch<Gemm>(args, r, workspace_bytes);
}

bool tensor_cores(Kind kind) { return kind >= Kind::tf32x3; }
bool streamk(Kind kind) { return kind == Kind::simt_streamk || kind == Kind::tf32_streamk; }

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (Reason r = fits_int(p)) return r;
  const Kind kind = kind_of(q);
  if (d.present && d.cc_major < 8) return "CUTLASS's Sm80 kernels need compute capability 8.0 or newer";
  if ((kind == Kind::tf32 || kind == Kind::tf32_streamk) && d.present &&
      (d.cc_major != 9 || !cutlass_sm90_compiled() || !built_for_sm90a()))
    return "CUTLASS's warp-specialized TMA + wgmma kernels exist on sm_90a only (Hopper, and a build for 90a)";
  if (tensor_cores(kind) && (p.k % 4 != 0 || p.n % 4 != 0))
    return "CUTLASS's tensor-core kernels copy 16 bytes at a time: k and n must be multiples of 4";
  return std::nullopt;
}

// The SIMT kernels at each block tile (the compiled set: the other variants have one kernel each).
using Launcher = void (*)(const RunArgs&, std::size_t workspace_bytes);
#define MMLAB_SIMT(BM, BN, WM, WN)                                                              \
  {{"simt", {{"tile", #BM "x" #BN}}}, run_2x<SimtGemm<BM, BN, WM, WN, Identity>, false>},       \
      {{"simt_streamk", {{"tile", #BM "x" #BN}}}, run_2x<SimtGemm<BM, BN, WM, WN, StreamK>, true>},
const KernelTable<Launcher> kSimt = {MMLAB_SIMT(256, 128, 64, 64) MMLAB_SIMT(128, 128, 32, 64)
                                         MMLAB_SIMT(64, 64, 32, 32)};
#undef MMLAB_SIMT

void run(const RunArgs& r) {
  const Kind kind = kind_of(*r.params);
  const std::size_t workspace = streamk(kind) ? kStreamKWorkspace : 0;
  switch (kind) {
    case Kind::simt:
    case Kind::simt_streamk:
      return kSimt.at(*r.params)(r, workspace);
    case Kind::tf32x3:
      return run_2x<Tf32x3Gemm, false>(r, workspace);
    case Kind::tf32:
    case Kind::tf32_streamk:
      return cutlass_run_tf32(r, workspace, kind == Kind::tf32_streamk);
  }
}

}  // namespace

MMLAB_ALGORITHM(cutlass) {
  a.summary = "CUTLASS 4.2's kernels (PyPI nvidia-cutlass): FP32 SIMT and its stream-K, 3xTF32, sm_90a TF32";
  a.variants = variants();
  a.axes = {{"tile", AxisKind::shape, "block tile of the SIMT kernels: 256x128, 128x128 or 64x64 (k step 8)", "128x128",
             {}, {"simt", "simt_streamk"}}};
  a.constraints =
      "m, n, k below 2^31; tensor-core variants: k and n multiples of 4 (16-byte copies), tf32 and "
      "tf32_streamk on sm_90a only; a workspace for the stream-K variants";
  a.supports = supports;
  a.workspace_bytes = [](const Problem&, const Params& q) {
    return streamk(kind_of(q)) ? kStreamKWorkspace : std::size_t(0);
  };
  a.run = run;
  a.arithmetic_by = [](const Params& q) {  // tf32x3: three TF32 products; tf32: one
    const std::string& v = q.variant();
    return v == "tf32x3" ? Arithmetic{MathUnit::tf32_tensor, 3}
           : v.rfind("tf32", 0) == 0 ? Arithmetic{MathUnit::tf32_tensor, 1} : Arithmetic{};
  };
  a.set_compiled(kSimt.compiled());
}

}  // namespace mmlab
