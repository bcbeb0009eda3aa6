// Statistics for comparing configurations from their raw samples.
#pragma once

#include <cstdint>
#include <vector>

namespace mmlab::analysis {

double median(std::vector<double> x);

struct TestResult {
  double statistic = 0;  // U (of the first sample) or t
  double p = 1;          // two-sided
};

enum class Method { automatic, exact, asymptotic };
// Mann-Whitney U, two-sided. exact: the permutation distribution (no ties); asymptotic: normal
// approximation with tie correction and continuity correction; automatic: exact when there are no
// ties and both samples have fewer than 8 values (as SciPy's "auto" did).
TestResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y,
                        Method method = Method::automatic);

// Holm's step-down adjustment of p-values (family-wise error), in the input order.
std::vector<double> holm(const std::vector<double>& p);

struct Interval {
  double lo = 0, hi = 0;
};
// Percentile bootstrap interval of median(x) / median(y), resampling both samples.
Interval bootstrap_median_ratio(const std::vector<double>& x, const std::vector<double>& y,
                                double level = 0.95, int resamples = 4000, std::uint64_t seed = 1);

}  // namespace mmlab::analysis
