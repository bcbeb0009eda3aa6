// The FP16 split's shortcuts against the library functions they replace (issue #46, round four): the
// scale exponent from a float's bits against frexpf on every one of the 2^32 bit patterns, and the
// epilogue's unscaling by a power of two against ldexpf on values of every exponent and subnormal
// ones, at every shift that reaches C: equal to the bit, so C is what it was with the library calls.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/kernels/tf32x3_presplit.cuh"
#include "runtime/cuda_check.hpp"

namespace mmlab {
namespace {

struct Mismatches {
  unsigned long long count;
  unsigned first_bits;  // of the first one met (any, when several)
  int first_shift;
};

__device__ int frexp_scale(unsigned bits) {  // half_scale as it was: through frexpf
  if (bits == 0 || bits >= 0x7f800000u) return 0;
  int e;
  frexpf(__uint_as_float(bits), &e);
  return 15 - e;
}

__global__ void every_scale(Mismatches* out) {
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < (1ull << 32);
       i += 1ull * gridDim.x * blockDim.x) {
    const unsigned bits = unsigned(i);
    if (half_scale(bits) != frexp_scale(bits) && atomicAdd(&out->count, 1ull) == 0) out->first_bits = bits;
  }
}

// Values x with every biased exponent (and 0, the subnormals' field) and a spread of mantissas and
// signs, each scaled by 2^-e for e from -300 to 300 (row and column exponents lie in -113 ... 163
// each: their sum in -226 ... 326).
__global__ void every_shift(Mismatches* out) {
  const unsigned bits = (blockIdx.x << 23) | (threadIdx.x * 2654435761u >> 9) | (threadIdx.x & 1 ? 0x80000000u : 0);
  const float x = __uint_as_float(bits);
  if (!isfinite(x)) return;
  for (int e = -300; e <= 326; ++e) {
    const float want = ldexpf(x, -e), got = times_pow2(x, e);
    if (__float_as_uint(want) != __float_as_uint(got) && atomicAdd(&out->count, 1ull) == 0)
      out->first_bits = bits, out->first_shift = e;
  }
}

Mismatches run(void (*kernel)(Mismatches*), unsigned blocks, unsigned threads) {
  Mismatches* d = nullptr;
  MMLAB_CHECK(cudaMalloc(&d, sizeof(Mismatches)));
  MMLAB_CHECK(cudaMemset(d, 0, sizeof(Mismatches)));
  kernel<<<blocks, threads>>>(d);
  MMLAB_CHECK(cudaGetLastError());
  Mismatches h{};
  MMLAB_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  MMLAB_CHECK(cudaFree(d));
  return h;
}

TEST(HalfSplit, ScaleFromTheBitsIsFrexpfsOnEveryFloat) {
  const Mismatches m = run(every_scale, 4096, 256);
  EXPECT_EQ(m.count, 0u) << "first at bits 0x" << std::hex << m.first_bits;
}

TEST(HalfSplit, UnscalingByAPowerOfTwoIsLdexpfsToTheBit) {
  const Mismatches m = run(every_shift, 256, 1024);
  EXPECT_EQ(m.count, 0u) << "first at bits 0x" << std::hex << m.first_bits << std::dec << ", shift "
                         << m.first_shift;
}

}  // namespace
}  // namespace mmlab
