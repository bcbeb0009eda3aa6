// Hopper's warpgroup tensor-core instructions (wgmma, sm_90a), for the kernels that use them
// (algorithms/tf32x3.cu): shared-memory matrix descriptors, the TF32 m64n128k8 and FP16 m64n128k16
// products, and the fences
// and groups that order them. A warpgroup (4 warps, 128 threads) issues each wgmma together; it runs
// asynchronously, reading B (and A, unless A is in registers) from shared memory through the async
// proxy and accumulating into registers spread over the warpgroup like mma.sync's m16n8 fragments:
// warp w of the group holds rows 16 w + lane / 4 (+ 8), and register 4 j + e holds column
// 8 j + 2 (lane % 4) + e % 2 (row + 8 when e >= 2).
#pragma once

#include <cstdint>

#include "algorithms/ptx/tma.cuh"

namespace mmlab {
namespace {

// The descriptor of a K-major operand tile in shared memory laid out as wgmma's 128-byte swizzle
// expects: rows of 128 bytes (32 floats, or 64 halves), 8-row groups 1024 bytes apart, the 16-byte
// chunk c of row r stored at chunk c ^ (r % 8), the tile 1024-byte aligned. Adding 2 steps the start
// 32 bytes: one instruction's k (8 TF32, 16 FP16).
__device__ inline std::uint64_t swizzled_descriptor(const void* tile) {
  const std::uint64_t start = (shared_address(tile) & 0x3FFFF) >> 4;
  return start | (std::uint64_t(1) << 16)    // leading-dimension offset: unused within a swizzle atom
         | (std::uint64_t(1024 >> 4) << 32)  // stride between 8-row groups
         | (std::uint64_t(1) << 62);         // 128-byte swizzle
}

// Where element (row, k) of such a tile lives, in floats from its start.
__device__ inline int swizzled_offset(int row, int k) {
  return row * 32 + (((k / 4) ^ (row % 8)) * 4) + k % 4;
}

// (Each of these exists on sm_90a only; built for another target they are empty, and the kernels that
// use them are refused by their descriptor's supports().)
__device__ inline void wgmma_fence() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ inline void wgmma_commit() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int kPending>
__device__ inline void wgmma_wait() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}
// The 64 accumulators of an m64n128 wgmma, as the instruction names them (%0 ... %63) and as the asm
// statement binds them (d[0] ... d[63], read and written).
#define MMLAB_WGMMA_D64                                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "  \
  "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
  "%62, %63}"
#define MMLAB_WGMMA_D64_BIND                                                                                \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),           \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),            \
      "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),            \
      "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),            \
      "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),            \
      "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),            \
      "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),            \
      "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d (64 x 128, FP32) = a (64 x 8, TF32) b (8 x 128, TF32) + (accumulate ? d : 0): both from shared memory,
// K-major, by descriptor.
__device__ inline void wgmma_tf32_m64n128k8(float (&d)[64], std::uint64_t a, std::uint64_t b,
                                            bool accumulate) {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " MMLAB_WGMMA_D64 ", %64, %65, p, 1, 1;\n}\n"
      : MMLAB_WGMMA_D64_BIND
      : "l"(a), "l"(b), "r"(int(accumulate)));
#endif
}

// d (64 x 128, FP32) = a (64 x 8, TF32) b (8 x 128, TF32) + (accumulate ? d : 0): a from registers,
// b from shared memory (K-major, by descriptor). This thread's a[0 .. 4) are rows 16 w + lane / 4
// (+ 8) and k lane % 4 (+ 4) of a (w its warp in the group), in the order (r, k) (r + 8, k) (r, k + 4)
// (r + 8, k + 4), mma.sync's m16n8k8 fragment; they must stay unchanged until the wgmma has completed.
__device__ inline void wgmma_tf32_m64n128k8(float (&d)[64], const unsigned (&a)[4], std::uint64_t b,
                                            bool accumulate) {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " MMLAB_WGMMA_D64
      ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : MMLAB_WGMMA_D64_BIND
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(int(accumulate)));
#endif
}

// d (64 x 128, FP32) = a (64 x 16, FP16) b (16 x 128, FP16) + (accumulate ? d : 0): both from shared
// memory, K-major (the two transpose flags 0), by descriptor.
__device__ inline void wgmma_f16_m64n128k16(float (&d)[64], std::uint64_t a, std::uint64_t b,
                                            bool accumulate) {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " MMLAB_WGMMA_D64 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
      : MMLAB_WGMMA_D64_BIND
      : "l"(a), "l"(b), "r"(int(accumulate)));
#endif
}

#undef MMLAB_WGMMA_D64
#undef MMLAB_WGMMA_D64_BIND

}  // namespace
}  // namespace mmlab
