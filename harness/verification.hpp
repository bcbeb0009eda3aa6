// Verification against a float64 reference: the error statistics, and the verdict.
//
// Inputs are uniform in [-1, 1). A float32 product accumulated in any order has errors that grow
// like eps32 * sqrt(k) relative to the largest |C| (random rounding); we accept
//   max_rel_err = max |C - ref| / max |ref|  <=  4 * eps32 * sqrt(k),
// which catches one missing product term and reduced-precision (10-bit mantissa) math, and a
// NaN or infinity (the output is NaN-poisoned first, so an unwritten element is one) always fails.
#pragma once

#include <cstddef>
#include <string>

namespace mmlab {

struct ErrorStats {
  double max_abs_err = 0;
  double sum_sq_err = 0;
  double max_abs_ref = 0;
  std::size_t over_1e3 = 0;   // elements with |C - ref| > 1e-3 (the homework's measure)
  std::size_t nonfinite = 0;  // NaN or infinite elements of C
  std::size_t count = 0;
  void merge(const ErrorStats& o);
};

struct Verdict {
  bool ok = false;
  double max_rel_err = 0, max_abs_err = 0, mse = 0, frac_over_1e3 = 0;
  std::string reason;  // why it failed
};

double tolerance(long k);
Verdict judge(const ErrorStats& e, long k);

// Host side: error statistics of C (float) against ref (double), count elements each.
ErrorStats compare_host(const float* c, const double* ref, std::size_t count);

// Host side: inputs and the float64 reference (Eigen, OpenMP).
void fill_random_host(float* x, std::size_t count, unsigned long long seed, unsigned long long id);
void reference_host(const float* a, const float* b, double* ref, long m, long n, long k);

}  // namespace mmlab
