// Small helpers shared by the algorithm files (kernels and launchers only).
#pragma once

#include <climits>

#include "harness/algorithm.hpp"
#include "harness/cuda_check.hpp"

namespace mmlab {

inline unsigned ceil_div(long a, long b) { return unsigned((a + b - 1) / b); }

inline cudaStream_t stream_of(const RunArgs& r) { return r.stream; }

inline Dim3 dim(const dim3& d) { return {d.x, d.y, d.z}; }
inline dim3 dim(const Dim3& d) { return dim3(d.x, d.y, d.z); }

// Kernels index with 32-bit ints where each matrix dimension fits; the products use 64 bits.
inline Reason fits_int(const Problem& p) {
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return "m, n and k must each be below 2^31";
  return std::nullopt;
}

}  // namespace mmlab
