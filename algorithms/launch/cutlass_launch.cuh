// What the files that compile CUTLASS's kernels share (cutlass.cu: the 2.x kernels and the descriptor;
// cutlass_sm90.cu: the 3.x sm_90a kernels, compiled apart so that neither file takes long): CUTLASS's
// headers and the call of either API's device object.
#pragma once

#include <cutlass/cutlass.h>

#include <stdexcept>
#include <string>

#include "algorithms/launch/common.cuh"

namespace mmlab {

// Either API's device object (2.x GemmUniversal, 3.x GemmUniversalAdapter): checked, its workspace
// within what the descriptor reserved, initialized and run on the run's stream.
template <class Gemm>
inline void cutlass_launch(const typename Gemm::Arguments& args, const RunArgs& r, std::size_t workspace_bytes) {
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

// CUTLASS 4.2's sm_90a TF32 kernel (3.x: TMA + wgmma, warp-specialized; `streamk`: its stream-K tile
// scheduler) on the run's operands (cutlass_sm90.cu); false where CUTLASS compiled no sm_90 kernels.
bool cutlass_sm90_compiled();
void cutlass_run_tf32(const RunArgs& r, std::size_t workspace_bytes, bool streamk);

}  // namespace mmlab
