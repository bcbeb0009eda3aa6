// Verification against a float64 reference: the error statistics, and the verdict.
//
// Two measures of error. max_rel_err = max |C - ref| / max |ref|, the lab's verdict on uniform
// inputs: a float32 product accumulated in any order has errors that grow like eps * sqrt(k) relative
// to the largest |C| (random rounding), and we accept
//   max_rel_err  <=  4 * eps * sqrt(k)      (eps = 2^-23 for fp32, 2^-10 for a tf32 variant),
// which catches one missing product term and reduced-precision (10-bit mantissa) math in an fp32
// variant. On inputs that are not uniform, |C| can be far smaller than the terms summed into it, and
// the measure a numerical analyst uses is the error of each element relative to the sum of the
// magnitudes of its terms, |C - ref|(i, j) / sum_p |a_ip b_pj|: its max and mean are recorded for
// every row, and the max is the verdict there, against the same bound. A NaN or infinity (the output
// is NaN-poisoned first, so an unwritten element is one) always fails.
#pragma once

#include <cmath>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.hpp"

namespace mmlab {

enum class Precision { fp32, tf32 };

// The poisons C is filled with before a call. The verification's: every entry this NaN (a memset of
// 0xFF bytes on the device; std::nanf's 0x7FC00000 on the host). A timed trial's: another quiet NaN
// for each trial, never the verification's, so a kernel that computes only when C holds the
// verification's poison skips the timed trials and fails their audit (tests/cheats).
inline constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;
inline std::uint32_t trial_poison_bits(std::uint64_t trial) {
  return 0x7FC00000u | std::uint32_t(1 + splitmix64(trial ^ 0x9015017ull) % 0x3FFFFEu);
}
const char* precision_name(Precision p);

struct ErrorStats {
  double max_abs_err = 0;
  double sum_sq_err = 0;
  double max_abs_ref = 0;
  double max_sumabs_err = 0;  // max of |C - ref| / sum |a b| over the elements
  double sum_sumabs_err = 0;  // their sum (for the mean)
  std::size_t over_1e3 = 0;   // elements with |C - ref| > 1e-3 (the homework's measure)
  std::size_t nonfinite = 0;  // NaN or infinite elements of C
  std::size_t count = 0;
  void merge(const ErrorStats& o);
};

struct Verdict {
  bool ok = false;
  double max_rel_err = 0, max_abs_err = 0, mse = 0, frac_over_1e3 = 0;
  double max_sumabs_err = 0, mean_sumabs_err = 0;
  std::string reason;  // why it failed
};

double tolerance(long k, Precision p = Precision::fp32);
Verdict judge(const ErrorStats& e, long k, Inputs inputs = Inputs::uniform, Precision p = Precision::fp32);
// The error a verdict is judged by: max_rel_err on uniform inputs, max_sumabs_err on the others.
inline double judged_error(const Verdict& v, Inputs inputs) {
  return inputs == Inputs::uniform ? v.max_rel_err : v.max_sumabs_err;
}
// Its typical size, the same measure over all elements: the root mean square error on uniform
// inputs, the mean of |C - ref| / sum |a b| on the others. Steadier from one draw of inputs to the
// next than the largest, which a few elements decide.
inline double typical_error(const Verdict& v, Inputs inputs) {
  return inputs == Inputs::uniform ? std::sqrt(v.mse) : v.mean_sumabs_err;
}

// |C - ref| / sum|a b| of one element; a nonzero error where every term is zero is infinite.
inline double sumabs_error(double err, double sumabs) {
  return sumabs > 0 ? err / sumabs : err == 0 ? 0.0 : __builtin_inf();
}

// Host side: error statistics of C (float) against ref and sumabs = sum |a b| (double), count each.
ErrorStats compare_host(const float* c, const double* ref, const double* sumabs, std::size_t count);

// Host side: a rows x cols matrix of `kind` (random.hpp), and the float64 reference with sum |a b|.
void fill_input_host(float* x, long rows, long cols, Inputs kind, unsigned long long seed,
                     unsigned long long id);
void reference_host(const float* a, const float* b, double* ref, double* sumabs, long m, long n, long k);

// Entries of C (m x n = A (m x k) B, A and B of `kind` from `seed`) against float64 dot products of
// the regenerated inputs, for products too large for a whole reference: `c` holds the block of
// `rows` x `cols` entries from (row0, col0), leading dimension `ldc`. Every entry of the block when
// the product has at most 2^26 multiply-adds or the block at most `samples` entries; else `samples`
// of them, drawn from the seed. `checked` receives how many.
// `compared`, when given, receives the entries checked (their index in the block, row * cols + col)
// with their float64 reference and sum |a b|: what an audit of later runs compares with.
inline constexpr std::size_t kSampledEntries = 2048;
struct EntrySamples {
  std::vector<long long> index;
  std::vector<double> ref, sumabs;
};
ErrorStats check_entries(const float* c, long ldc, long row0, long col0, long rows, long cols, long m, long n,
                         long k, Inputs kind, unsigned long long seed, double* checked,
                         std::size_t samples = kSampledEntries, EntrySamples* compared = nullptr);

}  // namespace mmlab
