// cutlass's sm_90a TF32 kernels (CUTLASS 3.x from the collective builders: TMA loads, wgmma,
// warp-specialized, persistent or stream-K), compiled apart from its 2.x kernels and its descriptor
// (cutlass.cu) so that neither file takes long.
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "algorithms/launch/cutlass_launch.cuh"

namespace mmlab {
namespace {

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
  cutlass_launch<Gemm>(args, r, workspace_bytes);
}
#endif


}  // namespace

bool cutlass_sm90_compiled() {
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
  return true;
#else
  return false;
#endif
}

void cutlass_run_tf32(const RunArgs& r, std::size_t workspace_bytes, bool streamk) {
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
  if (streamk) return run_3x<sm90::Gemm<cutlass::gemm::StreamKScheduler>>(r, workspace_bytes);
  return run_3x<sm90::Gemm<cutlass::gemm::PersistentScheduler>>(r, workspace_bytes);
#else
  (void)r, (void)workspace_bytes, (void)streamk;
  throw std::runtime_error("cutlass: built without sm_90a support");
#endif
}

}  // namespace mmlab
