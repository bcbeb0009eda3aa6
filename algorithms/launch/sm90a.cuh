// Whether this build holds sm_90a code for the device: the architecture-specific features (wgmma,
// setmaxnreg) exist only in code built for 90a, not 90. A one-thread probe kernel, asked once per
// translation unit (every one is built with the same architectures). For tf32x3 and cutlass.
#pragma once

#include "runtime/gpu.hpp"

namespace mmlab {
namespace {

__global__ void sm90a_probe(int* built) {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  *built = 1;
#else
  *built = 0;
#endif
}

inline bool built_for_sm90a() {
  static const bool built = [] {
    Buffer flag(sizeof(int), Buffer::Kind::device);
    sm90a_probe<<<1, 1>>>(flag.as<int>());
    MMLAB_CHECK_LAUNCH();
    int host = 0;
    MMLAB_CHECK(cudaMemcpy(&host, flag.get(), sizeof(int), cudaMemcpyDeviceToHost));
    return host == 1;
  }();
  return built;
}

}  // namespace
}  // namespace mmlab
