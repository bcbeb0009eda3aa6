// The split of an FP32 value into two TF32 values, big = rn_tf32(x) and small = rn_tf32(x - big),
// both rounded to nearest (`cvt.rna.tf32.f32`), never truncated; x - big is exact in FP32. For the
// split-precision kernels of algorithms/tf32x3.cu.
#pragma once

#include "algorithms/common.cuh"

namespace mmlab {
namespace {

struct Split {
  unsigned big, small;
};
__device__ inline Split split(float x) {
  unsigned big, small;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(x - __uint_as_float(big)));
  return {big, small};
}

// Each float of v split, big parts to big[0 .. 4), small parts to small[0 .. 4) (when kept).
__device__ inline void split_chunk(const float4 v, float* big, float* small) {
  const Split x = split(v.x), y = split(v.y), z = split(v.z), w = split(v.w);
  *reinterpret_cast<uint4*>(big) = make_uint4(x.big, y.big, z.big, w.big);
  if (small) *reinterpret_cast<uint4*>(small) = make_uint4(x.small, y.small, z.small, w.small);
}

}  // namespace
}  // namespace mmlab
