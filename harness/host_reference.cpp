#include <Eigen/Dense>
#include <cmath>
#include <sstream>

#include "harness/random.hpp"
#include "harness/verification.hpp"

namespace mmlab {

void ErrorStats::merge(const ErrorStats& o) {
  max_abs_err = std::fmax(max_abs_err, o.max_abs_err);
  max_abs_ref = std::fmax(max_abs_ref, o.max_abs_ref);
  sum_sq_err += o.sum_sq_err;
  over_1e3 += o.over_1e3;
  nonfinite += o.nonfinite;
  count += o.count;
}

double tolerance(long k) { return 4.0 * 1.1920928955078125e-7 * std::sqrt(double(k)); }

Verdict judge(const ErrorStats& e, long k) {
  Verdict v;
  v.max_abs_err = e.max_abs_err;
  v.mse = e.count ? e.sum_sq_err / double(e.count) : 0;
  v.frac_over_1e3 = e.count ? double(e.over_1e3) / double(e.count) : 0;
  v.max_rel_err = e.max_abs_ref > 0 ? e.max_abs_err / e.max_abs_ref : e.max_abs_err;
  std::ostringstream why;
  if (e.nonfinite) {
    why << e.nonfinite << " of " << e.count << " elements are NaN or infinite (unwritten or invalid)";
  } else if (!(v.max_rel_err <= tolerance(k))) {
    why << "max_rel_err " << v.max_rel_err << " exceeds the float32 tolerance " << tolerance(k)
        << " for k = " << k;
  }
  v.reason = why.str();
  v.ok = v.reason.empty();
  return v;
}

ErrorStats compare_host(const float* c, const double* ref, std::size_t count) {
  ErrorStats e;
  e.count = count;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(c[i])) {
      ++e.nonfinite;
      continue;
    }
    const double d = std::fabs(double(c[i]) - ref[i]);
    e.max_abs_err = std::fmax(e.max_abs_err, d);
    e.max_abs_ref = std::fmax(e.max_abs_ref, std::fabs(ref[i]));
    e.sum_sq_err += d * d;
    e.over_1e3 += d > 1e-3;
  }
  return e;
}

void fill_random_host(float* x, std::size_t count, unsigned long long seed, unsigned long long id) {
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < (long long)count; ++i) x[i] = random_input(seed, id, std::uint64_t(i));
}

void reference_host(const float* a, const float* b, double* ref, long m, long n, long k) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> A(a, m, k);
  Eigen::Map<const Matrix> B(b, k, n);
  Eigen::Map<MatrixD> C(ref, m, n);
  C.noalias() = A.cast<double>() * B.cast<double>();
}

}  // namespace mmlab
