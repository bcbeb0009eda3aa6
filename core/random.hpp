// Counter-based random inputs: element i of matrix `id` is a pure function of (seed, id, i), so
// the GPU and the host make identical matrices without copying them, in any order.
#pragma once

#include <cstdint>
#include <string>

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

MMLAB_HD inline std::uint64_t input_hash(std::uint64_t seed, std::uint64_t id, std::uint64_t i) {
  return splitmix64(splitmix64(seed ^ (id * 0xD1B54A32D192ED03ull)) + i);
}

// Uniform in [-1, 1), with 24 random bits: exactly representable in float32.
MMLAB_HD inline float random_input(std::uint64_t seed, std::uint64_t id, std::uint64_t i) {
  return float(std::int32_t(input_hash(seed, id, i) >> 40) - (1 << 23)) * (1.0f / float(1 << 23));
}

enum : std::uint64_t { kMatrixA = 1, kMatrixB = 2 };

// The inputs a problem is made of (the `inputs` axis of a sweep):
//   uniform          U(-1, 1): every element alike; the float32 verification was calibrated on it.
//   wide_exponent    U(-1, 1) x 2^e, e uniform in -16 ... 16: each sum is ruled by a few large terms,
//                    and a product's small parts meet large ones.
//   ill_conditioned  sums that cancel: the k products of C(i, j) come in pairs a b and a (-b + d) with
//                    d = 2^-10 U(-1, 1) b's size, so |C(i, j)| is about 2^-10 / sqrt(k) of sum |a b|;
//                    a format that rounds b to 10 bits loses d.
//   badly_scaled     U(-1, 1) with row i of A times 2^e_i and column j of B times 2^f_j, e and f uniform
//                    in -40 ... 40: C(i, j) is scaled by 2^(e_i + f_j), each row and column alike inside;
//                    a kernel that assumes one range for the whole matrix (FP16's, say) fails here.
enum class Inputs { uniform, wide_exponent, ill_conditioned, badly_scaled };
inline constexpr Inputs kAllInputs[] = {Inputs::uniform, Inputs::wide_exponent, Inputs::ill_conditioned,
                                        Inputs::badly_scaled};
inline const char* inputs_name(Inputs x) {
  switch (x) {
    case Inputs::uniform: return "uniform";
    case Inputs::wide_exponent: return "wide_exponent";
    case Inputs::ill_conditioned: return "ill_conditioned";
    case Inputs::badly_scaled: return "badly_scaled";
  }
  return "?";
}

// "uniform, wide_exponent, ill_conditioned": the valid values, for messages.
inline std::string inputs_names() {
  std::string out;
  for (Inputs x : kAllInputs) out += (out.empty() ? "" : ", ") + std::string(inputs_name(x));
  return out;
}

inline constexpr int kWideExponent = 16, kScaleExponent = 40;
inline constexpr float kCancelledPart = 1.0f / 1024;

// 2^e, exactly, for |e| < 32.
MMLAB_HD inline float power_of_two(int e) { return e >= 0 ? float(1u << e) : 1.0f / float(1u << -e); }

// Element (r, c) of A (rows = m, cols = k; id kMatrixA) or B (rows = k, cols = n; id kMatrixB):
// a pure function of its place, so any rank or thread makes any block of either matrix.
MMLAB_HD inline float input_value(Inputs kind, std::uint64_t seed, std::uint64_t id, std::uint64_t r,
                                  std::uint64_t c, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t flat = r * cols + c;
  switch (kind) {
    case Inputs::uniform: break;
    case Inputs::wide_exponent: {
      const int e = int(input_hash(seed, id + 16, flat) % (2 * kWideExponent + 1)) - kWideExponent;
      return random_input(seed, id, flat) * power_of_two(e);
    }
    case Inputs::ill_conditioned: {
      // Along k, place p < h pairs with p + h (h = k / 2): A repeats its value, B negates it and adds d.
      const bool is_a = id == kMatrixA;
      const std::uint64_t p = is_a ? c : r, half = (is_a ? cols : rows) / 2;
      const std::uint64_t small = id + 32;  // the stream of the added parts
      if (p >= 2 * half)  // k odd: the last product is small too, so nothing undoes the cancellation
        return is_a ? random_input(seed, id, flat) : kCancelledPart * random_input(seed, small, flat);
      const std::uint64_t first = p < half ? p : p - half;
      const float x = random_input(seed, id, is_a ? r * cols + first : first * cols + c);
      if (is_a || p < half) return x;
      return -x + kCancelledPart * random_input(seed, small, flat);
    }
    case Inputs::badly_scaled: {  // A's row r, B's column c: one exponent each
      const std::uint64_t line = id == kMatrixA ? r : c;
      const int e = int(input_hash(seed, id + 48, line) % (2 * kScaleExponent + 1)) - kScaleExponent;
      return random_input(seed, id, flat) * power_of_two(e / 2) * power_of_two(e - e / 2);
    }
  }
  return random_input(seed, id, flat);
}

}  // namespace mmlab
