// The split of an FP32 value into two tensor-core values big + small, both rounded to nearest, never
// truncated, and the TF32 mma.sync product, for the split-precision kernels of algorithms/tf32x3.cu
// and small.cu's tf32x3 variant.
//   TF32: big = rn_tf32(x), small = rn_tf32(x - big) (`cvt.rna.tf32.f32`; x - big is exact in FP32).
//   FP16: the same with FP16's 11 significant bits (TF32's) on x 2^e, e chosen per row of A and per
//         column of B (half_scale) so that the largest |x| 2^e of the row lies in [2^14, 2^15): FP16's
//         5-bit exponent then holds the row's values down to about 2^-17 of its largest as precisely as
//         the TF32 split. Smaller ones it holds only to within 2^-25 absolute after scaling (FP16's
//         subnormals), an error no longer relative to each value: on inputs whose exponents spread, a
//         short sum dominated by such a value came out 75,000x SGEMM's error (issue #46). half_parts
//         says which values the parts hold; the presplit pass lists the others, whose terms the product
//         adds exactly (tf32x3_split_pass.cuh, tf32x3_presplit.cuh).
#pragma once

#include <cuda_fp16.h>


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
// The TF32 split takes no scale (FP32's exponent range is TF32's) and holds every value.
__device__ inline unsigned split_chunk(const float4 v, int, float* big, float* small) {
  split_chunk(v, big, small);
  return 0;
}

// d += a (m16 x k8, TF32) b (k8 x n8, TF32), FP32 accumulators.
__device__ inline void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The m16n8k8 fragments of a thread (group g = lane / 4, t = lane % 4) read from shared memory and
// split: A's (row-major, pitch `pitch`, from the tile's row 0 and k 0) rows g, g + 8 at k t, t + 4;
// B's (k-major rows, pitch `pitch`, from k 0 and the fragment's column 0) column g at k t, t + 4.
__device__ __forceinline__ void split_a_fragment(const float* p, int pitch, unsigned (&big)[4], unsigned (&small)[4]) {
  const float v[4] = {p[0], p[8 * pitch], p[4], p[8 * pitch + 4]};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const Split x = split(v[e]);
    big[e] = x.big, small[e] = x.small;
  }
}
__device__ __forceinline__ void split_b_fragment(const float* p, int pitch, unsigned (&big)[2], unsigned (&small)[2]) {
  const float v[2] = {p[0], p[4 * pitch]};
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const Split x = split(v[e]);
    big[e] = x.big, small[e] = x.small;
  }
}

// The exponent e of the FP16 split's scale 2^e for a row (or column) whose largest |x| has the float
// bits max_bits: max 2^e in [2^14, 2^15). 0 for a row of zeros, or one holding an Inf or a NaN.
// From the bits: max = f 2^e with f in [0.5, 1) (frexpf's e on all 2^32 patterns: GPU test HalfSplit,
// tests/gpu/half_split_test.cu) is e = E - 126 for a normal float of biased exponent E, and p - 148 for a
// subnormal one whose highest set bit is p; the scale is 15 - e.
__device__ inline int half_scale(unsigned max_bits) {
  if (max_bits == 0 || max_bits >= 0x7f800000u) return 0;
  if (max_bits >= 0x00800000u) return 141 - int(max_bits >> 23);
  return 163 - (31 - __clz(max_bits));
}

// The FP16 parts of y = x 2^e (exact: a power of two, into FP16's range by construction), and whether
// they hold x as closely as the TF32 split holds any value: |y - big - small| <= 2^-22 |y|, or with the
// big part alone (with_small false) |y - big| <= 2^-11 |y|. Each difference is exact in FP32. False for
// a value far below its row's largest (|y| under about 2^-3), and for an Inf or a NaN.
struct HalfParts {
  __half big, small;
  bool holds;
};
__device__ inline HalfParts half_parts(float x, int e, bool with_small) {
  const float y = ldexpf(x, e);
  const __half big = __float2half_rn(y);
  const float rest = y - __half2float(big);
  const __half small = __float2half_rn(rest);
  const float left = with_small ? rest - __half2float(small) : rest;
  return {big, small, fabsf(left) <= (with_small ? 0x1p-22f : 0x1p-11f) * fabsf(y)};
}

// Each float of v times 2^e, split into FP16 big and small parts, 8-byte stores (small when kept). The
// values the parts cannot hold are stored as zeros and marked in the result (bit i for v's element i).
__device__ inline unsigned split_chunk(const float4 v, int e, __half* big, __half* small) {
  const float x[4] = {v.x, v.y, v.z, v.w};
  __align__(8) __half b[4], s[4];
  unsigned lost = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const HalfParts h = half_parts(x[i], e, small != nullptr);
    b[i] = h.holds ? h.big : __half(0.f), s[i] = h.holds ? h.small : __half(0.f);
    lost |= unsigned(!h.holds) << i;
  }
  *reinterpret_cast<uint2*>(big) = *reinterpret_cast<const uint2*>(b);
  if (small) *reinterpret_cast<uint2*>(small) = *reinterpret_cast<const uint2*>(s);
  return lost;
}

}  // namespace
}  // namespace mmlab
