// Counter-based random inputs: element i of matrix `id` is a pure function of (seed, id, i), so
// the GPU and the host make identical matrices without copying them, in any order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/columns.hpp"

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
//   exp_spread:phi   (U(0, 1) - 0.5) exp(phi N(0, 1)), the test matrices of the Ozaki-scheme papers
//                    (Ootomo, Ozaki and Yokota's ozIMMU; Uchino, Ozaki and Imamura's GEMMul8), so the
//                    lab's errors sit beside theirs: phi = 0.5 is nearly uniform, 4 spreads the
//                    magnitudes over e^(+-12), about 2^(+-17), within three deviations. N(0, 1) is
//                    Irwin and Hall's sum of 12 uniforms minus
//                    6 (|N| <= 6), exp a polynomial of correctly rounded operations: the host and the
//                    GPU make the same bits.
enum class InputKind { uniform, wide_exponent, ill_conditioned, badly_scaled, exp_spread };
struct Inputs {
  InputKind kind = InputKind::uniform;
  double phi = 0;  // exp_spread's spread (0 for the other kinds)
  static const Inputs uniform, wide_exponent, ill_conditioned, badly_scaled;
  static Inputs exp_spread(double phi) { return {InputKind::exp_spread, phi}; }
  MMLAB_HD bool operator==(const Inputs& o) const { return kind == o.kind && phi == o.phi; }
  MMLAB_HD bool operator!=(const Inputs& o) const { return !(*this == o); }
};
inline const Inputs Inputs::uniform{InputKind::uniform, 0}, Inputs::wide_exponent{InputKind::wide_exponent, 0},
    Inputs::ill_conditioned{InputKind::ill_conditioned, 0}, Inputs::badly_scaled{InputKind::badly_scaled, 0};
// The kinds without a parameter, and exp_spread at the spreads the lab's reports use.
inline const Inputs kAllInputs[] = {Inputs::uniform, Inputs::wide_exponent, Inputs::ill_conditioned,
                                    Inputs::badly_scaled, Inputs::exp_spread(2)};
inline constexpr double kMaxSpread = 8;  // exp(8 * 6): about 2^69 between the largest and the smallest

// "uniform", "exp_spread:2": the name in CSV rows, options and tables.
// The kinds without a parameter are the `inputs` column's values (core/columns.hpp), in the enum's order.
inline std::string inputs_name(const Inputs& x) {
  if (x.kind != InputKind::exp_spread) return kInputsValues[static_cast<int>(x.kind)];
  char buf[32];
  std::snprintf(buf, sizeof buf, "exp_spread:%g", x.phi);
  return buf;
}
static_assert(sizeof(kInputsValues) / sizeof(kInputsValues[0]) == static_cast<std::size_t>(InputKind::exp_spread),
              "a name for each kind without a parameter");
// The inputs a name stands for (inputs_name's inverse), or nothing.
inline std::optional<Inputs> parse_inputs_name(const std::string& text) {
  for (const Inputs& x : {Inputs::uniform, Inputs::wide_exponent, Inputs::ill_conditioned, Inputs::badly_scaled})
    if (text == inputs_name(x)) return x;
  const std::string kind = "exp_spread:";
  if (text.rfind(kind, 0) != 0 || text.size() == kind.size()) return std::nullopt;
  const std::string number = text.substr(kind.size());
  char* end = nullptr;
  const double phi = std::strtod(number.c_str(), &end);
  if (*end != '\0' || !(phi > 0 && phi <= kMaxSpread) || number.find_first_of("xXnN") != std::string::npos)
    return std::nullopt;
  return Inputs::exp_spread(phi);
}

// "uniform, wide_exponent, ...": the valid values, for messages.
inline std::string inputs_names() {
  return "uniform, wide_exponent, ill_conditioned, badly_scaled, exp_spread:PHI (0 < PHI <= 8, e.g. "
         "exp_spread:0.5)";
}

// Products, sums and fused multiply-adds rounded once each, never contracted: the same bits on the
// host and on the GPU (nvcc would otherwise fuse a product into a later sum).
MMLAB_HD inline double exact_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
MMLAB_HD inline double exact_add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
MMLAB_HD inline double exact_fma(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
// 2^t for |t| < 1100: 2^floor(t) times 2^f (f in [0, 1)) by its Taylor series in f ln 2 to the 14th
// power (relative error below 1e-15), Horner's rule in fused multiply-adds.
MMLAB_HD inline double power_of_two_real(double t) {
  const double i = floor(t), f = exact_add(t, -i), x = exact_mul(f, 0.6931471805599453);
  double sum = 1.0;
  for (int n = 14; n >= 1; --n) sum = exact_fma(sum, exact_mul(x, 1.0 / n), 1.0);
  return ldexp(sum, int(i));
}

inline constexpr int kWideExponent = 16, kScaleExponent = 40;
inline constexpr float kCancelledPart = 1.0f / 1024;

// 2^e, exactly, for |e| < 32.
MMLAB_HD inline float power_of_two(int e) { return e >= 0 ? float(1u << e) : 1.0f / float(1u << -e); }

// Element (r, c) of A (rows = m, cols = k; id kMatrixA) or B (rows = k, cols = n; id kMatrixB):
// a pure function of its place, so any rank or thread makes any block of either matrix.
MMLAB_HD inline float input_value(const Inputs& inputs, std::uint64_t seed, std::uint64_t id, std::uint64_t r,
                                  std::uint64_t c, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t flat = r * cols + c;
  switch (inputs.kind) {
    case InputKind::uniform: break;
    case InputKind::wide_exponent: {
      const int e = int(input_hash(seed, id + 16, flat) % (2 * kWideExponent + 1)) - kWideExponent;
      return random_input(seed, id, flat) * power_of_two(e);
    }
    case InputKind::ill_conditioned: {
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
    case InputKind::badly_scaled: {  // A's row r, B's column c: one exponent each
      const std::uint64_t line = id == kMatrixA ? r : c;
      const int e = int(input_hash(seed, id + 48, line) % (2 * kScaleExponent + 1)) - kScaleExponent;
      return random_input(seed, id, flat) * power_of_two(e / 2) * power_of_two(e - e / 2);
    }
    case InputKind::exp_spread: {  // (U(0, 1) - 0.5) exp(phi N(0, 1)); U's 24 bits and the sums exact
      double normal = -6.0;
      for (std::uint64_t u = 0; u < 12; ++u) normal = exact_add(normal, 0.5 * (random_input(seed, id + 64 + u, flat) + 1.0));
      const double t = exact_mul(exact_mul(inputs.phi, normal), 1.4426950408889634);  // phi N log2(e)
      return float(exact_mul(0.5 * double(random_input(seed, id, flat)), power_of_two_real(t)));
    }
  }
  return random_input(seed, id, flat);
}

}  // namespace mmlab
