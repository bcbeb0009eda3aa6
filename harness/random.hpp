// Counter-based random inputs: element i of matrix `id` is a pure function of (seed, id, i), so
// the GPU and the host make identical matrices without copying them, in any order.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MMLAB_HD __host__ __device__
#else
#define MMLAB_HD
#endif

namespace mmlab {

MMLAB_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), with 24 random bits: exactly representable in float32.
MMLAB_HD inline float random_input(std::uint64_t seed, std::uint64_t id, std::uint64_t i) {
  const std::uint64_t h = splitmix64(splitmix64(seed ^ (id * 0xD1B54A32D192ED03ull)) + i);
  return float(std::int32_t(h >> 40) - (1 << 23)) * (1.0f / float(1 << 23));
}

enum : std::uint64_t { kMatrixA = 1, kMatrixB = 2 };

}  // namespace mmlab
