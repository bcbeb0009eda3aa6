#include <Eigen/Dense>
#include <cmath>
#include <sstream>
#include <vector>

#include "core/random.hpp"
#include "core/verification.hpp"

namespace mmlab {

void ErrorStats::merge(const ErrorStats& o) {
  max_abs_err = std::fmax(max_abs_err, o.max_abs_err);
  max_abs_ref = std::fmax(max_abs_ref, o.max_abs_ref);
  max_sumabs_err = std::fmax(max_sumabs_err, o.max_sumabs_err);
  sum_sumabs_err += o.sum_sumabs_err;
  sum_sq_err += o.sum_sq_err;
  over_1e3 += o.over_1e3;
  nonfinite += o.nonfinite;
  count += o.count;
}

const char* precision_name(Precision p) { return kPrecisionValues[p == Precision::tf32 ? 1 : 0]; }

double tolerance(long k, Precision p) {
  const double eps = p == Precision::tf32 ? 1.0 / 1024 : 1.1920928955078125e-7;  // 2^-10, 2^-23
  return 4.0 * eps * std::sqrt(double(k));
}

Verdict judge(const ErrorStats& e, long k, Inputs inputs, Precision p) {
  Verdict v;
  v.max_abs_err = e.max_abs_err;
  v.mse = e.count ? e.sum_sq_err / double(e.count) : 0;
  v.frac_over_1e3 = e.count ? double(e.over_1e3) / double(e.count) : 0;
  v.max_rel_err = e.max_abs_ref > 0 ? e.max_abs_err / e.max_abs_ref : e.max_abs_err;
  v.max_sumabs_err = e.max_sumabs_err;
  const std::size_t finite = e.count - e.nonfinite;
  v.mean_sumabs_err = finite ? e.sum_sumabs_err / double(finite) : 0;
  const bool uniform = inputs == Inputs::uniform;
  const double measured = judged_error(v, inputs);
  std::ostringstream why;
  if (e.nonfinite) {
    why << e.nonfinite << " of " << e.count << " elements are NaN or infinite (unwritten or invalid)";
  } else if (!(measured <= tolerance(k, p))) {
    why << (uniform ? "max_rel_err " : "max_sumabs_err ") << measured << " exceeds the " << precision_name(p)
        << " tolerance " << tolerance(k, p) << " for k = " << k;
  }
  v.reason = why.str();
  v.ok = v.reason.empty();
  return v;
}

ErrorStats compare_host(const float* c, const double* ref, const double* sumabs, std::size_t count) {
  ErrorStats e;
  e.count = count;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(c[i])) {
      ++e.nonfinite;
      continue;
    }
    const double d = std::fabs(double(c[i]) - ref[i]);
    const double r = sumabs_error(d, sumabs[i]);
    e.max_abs_err = std::fmax(e.max_abs_err, d);
    e.max_abs_ref = std::fmax(e.max_abs_ref, std::fabs(ref[i]));
    e.max_sumabs_err = std::fmax(e.max_sumabs_err, r);
    e.sum_sumabs_err += r;
    e.sum_sq_err += d * d;
    e.over_1e3 += d > 1e-3;
  }
  return e;
}

void fill_input_host(float* x, long rows, long cols, Inputs kind, unsigned long long seed,
                     unsigned long long id) {
#pragma omp parallel for schedule(static)
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c)
      x[r * cols + c] = input_value(kind, seed, id, std::uint64_t(r), std::uint64_t(c), std::uint64_t(rows),
                                    std::uint64_t(cols));
}

void reference_host(const float* a, const float* b, double* ref, double* sumabs, long m, long n, long k) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> A(a, m, k);
  Eigen::Map<const Matrix> B(b, k, n);
  Eigen::Map<MatrixD>(ref, m, n).noalias() = A.cast<double>() * B.cast<double>();
  Eigen::Map<MatrixD>(sumabs, m, n).noalias() = A.cast<double>().cwiseAbs() * B.cast<double>().cwiseAbs();
}

}  // namespace mmlab

namespace mmlab {

ErrorStats check_entries(const float* c, long ldc, long row0, long col0, long rows, long cols, long m, long n,
                         long k, Inputs kind, unsigned long long seed, double* checked, std::size_t samples,
                         EntrySamples* compared) {
  const std::size_t entries = std::size_t(rows) * std::size_t(cols);
  const bool all = double(m) * double(n) * double(k) <= double(1 << 26) || entries <= samples;
  const std::size_t count = all ? entries : samples;
  std::vector<double> ref(count), sumabs(count);
  std::vector<float> got(count);
  std::vector<long long> index(count);
#pragma omp parallel for schedule(dynamic, 16)
  for (long s = 0; s < long(count); ++s) {
    const std::size_t at =
        all ? std::size_t(s) : std::size_t(splitmix64(seed ^ (0xC0FFEEull + s + 131 * row0 + col0)) % entries);
    const long r = long(at) / cols, q = long(at) % cols;
    double sum = 0, mag = 0;
    for (long p = 0; p < k; ++p) {
      const double x = input_value(kind, seed, kMatrixA, row0 + r, p, m, k);
      const double y = input_value(kind, seed, kMatrixB, p, col0 + q, k, n);
      sum += x * y;
      mag += std::fabs(x * y);
    }
    ref[s] = sum;
    sumabs[s] = mag;
    got[s] = c[r * ldc + q];
    index[s] = (long long)(at);
  }
  *checked = double(count);
  if (compared) *compared = {index, ref, sumabs};
  return compare_host(got.data(), ref.data(), sumabs.data(), count);
}

}  // namespace mmlab
