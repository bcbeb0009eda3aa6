// cp.async (sm_80+) helpers shared by register_tiled's and small's kernels: 16- and 4-byte global ->
// shared copies grouped into commit groups, and waits on the groups still in flight.
#pragma once

namespace mmlab {
namespace {

// Asynchronous 16-byte global -> shared copy (sm_80+). A source size of 0 writes zeros and reads nothing
// (the address need not be inside any allocation).
__device__ inline void copy16(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
// The same for one 4-byte element (any alignment of a float), cached in L1 (.ca: the only kind
// that takes 4 bytes).
__device__ inline void copy4(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void wait_for() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace
}  // namespace mmlab
