// Hopper's own data movement, for the kernels that use it (algorithms/tma_tiled.cu): TMA tile loads
// (`cp.async.bulk.tensor`: one thread copies a whole 2D box of global memory into shared memory,
// zero-filling what lies outside the matrix), completing an mbarrier (mbarrier.cuh), and the register
// hand-over of warp specialisation. The tensor maps they read are made on the host
// (launch/tma_maps.cuh).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "algorithms/ptx/mbarrier.cuh"

namespace mmlab {
namespace {

// Warp specialisation: a warpgroup that only issues loads hands its registers to the warpgroups that
// compute (setmaxnreg, sm_90a; every warp of the group executes it). Built for plain sm_90 these do
// nothing and the block keeps its launch registers.
template <int kRegisters>
__device__ inline void release_registers() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ inline void claim_registers() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

// The box of `map` at element (x, y) (x the contiguous dimension) into shared memory at `dst`,
// completing `bar`'s transaction count by the box's size.
__device__ inline void tma_load_2d(void* dst, const CUtensorMap& map, int x, int y, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(shared_address(bar))
      : "memory");
}

}  // namespace
}  // namespace mmlab
