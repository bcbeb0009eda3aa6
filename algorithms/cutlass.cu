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
// Example: mmlab run --algorithms cutlass,cublas --cutlass.variant simt,simt_streamk,tf32x3 --size 4096
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "algorithms/launch/common.cuh"
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

// Either API's device object (2.x GemmUniversal, 3.x GemmUniversalAdapter): checked, its workspace
// within what the descriptor reserved, initialized and run on the run's stream.
template <class Gemm>
void launch(const typename Gemm::Arguments& args, const RunArgs& r, std::size_t workspace_bytes) {
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess)
    throw std::runtime_error("cutlass: the kernel cannot run this problem (can_implement)");
  if (Gemm::get_workspace_size(args) > workspace_bytes)
    throw std::runtime_error("cutlass: stream-K needs " + std::to_string(Gemm::get_workspace_size(args)) +
                             " bytes of workspace, more than the " + std::to_string(workspace_bytes) + " reserved");
  if (gemm.initialize(args, r.workspace, r.stream) != cutlass::Status::kSuccess ||
      gemm.run(r.stream) != cutlass::Status::kSuccess)
    throw std::runtime_error("cutlass: the kernel failed to launch");
}

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
  launch<Gemm>(args, r, workspace_bytes);
}

// ---- CUTLASS 3.x: sm_90a warp-specialized TF32 (TMA + wgmma) from the collective builders ----
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
// wgmma reads 32-bit operands K-major only, and of row-major A and B one is always MN-major: the
// kernel computes C^T = B^T A^T (M' = n, N' = m), A' = B^T MN-major (column-major), which the builder
// loads through registers and transposes (its RS mainloop), B' = A^T K-major, C' = C^T column-major.
// (A K-major with B MN-major, the builder's internal A/B swap, gave wrong results on the H100.)
namespace sm90 {
using namespace cute;
using Col = cutlass::layout::ColumnMajor;
using Tile = Shape<_128, _128, _32>;
using Cluster = Shape<_1, _1, _1>;
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
    float, float, float, Col, 4, float, Col, 4, cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, Col, 4, float, Col, 4, float, Tile, Cluster,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;
template <class Scheduler>
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<
    cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>>;
}  // namespace sm90

template <class Gemm>
void run_3x(const RunArgs& r, std::size_t workspace_bytes) {
  const Problem& p = r.problem;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  using Kernel = typename Gemm::GemmKernel;
  // C^T (n x m, column-major) = B^T (n x k, column-major: B as stored) A^T (A as stored, K-major).
  const auto stride_a = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {n, k, 1});
  const auto stride_b = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {m, k, 1});
  const auto stride_c = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {n, m, 1});
  cutlass::KernelHardwareInfo hw;
  hw.device_id = r.device->ordinal, hw.sm_count = r.device->sm_count;
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {n, m, k, 1},
                                {r.b, stride_a, r.a, stride_b},
                                {{1.f, 0.f}, r.c, stride_c, r.c, stride_c},
                                hw};
  launch<Gemm>(args, r, workspace_bytes);
}
#endif

// Whether CUTLASS compiled its sm_90 kernels here (its CUDA and architecture checks).
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
constexpr bool kSm90Kernels = true;
#else
constexpr bool kSm90Kernels = false;
#endif

bool tensor_cores(Kind kind) { return kind >= Kind::tf32x3; }
bool streamk(Kind kind) { return kind == Kind::simt_streamk || kind == Kind::tf32_streamk; }

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (Reason r = fits_int(p)) return r;
  const Kind kind = kind_of(q);
  if (d.present && d.cc_major < 8) return "CUTLASS's Sm80 kernels need compute capability 8.0 or newer";
  if ((kind == Kind::tf32 || kind == Kind::tf32_streamk) && d.present &&
      (d.cc_major != 9 || !kSm90Kernels || !built_for_sm90a()))
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
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
    case Kind::tf32:
      return run_3x<sm90::Gemm<cutlass::gemm::PersistentScheduler>>(r, workspace);
    case Kind::tf32_streamk:
      return run_3x<sm90::Gemm<cutlass::gemm::StreamKScheduler>>(r, workspace);
#else
    default:
      throw std::runtime_error("cutlass: built without sm_90a support");
#endif
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
  a.set_compiled(kSimt.compiled());
}

}  // namespace mmlab
