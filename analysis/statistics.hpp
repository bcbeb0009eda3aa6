// Statistics for comparing configurations from their raw samples: the tests (Mann-Whitney U for
// independent samples, Wilcoxon signed-rank for paired ones, Holm across a family), the
// distribution-free confidence intervals of a speed-up that the verdicts read, and what a design
// can reach (the smallest p its trials allow, the trials a decision needs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace mmlab::analysis {

double median(std::vector<double> x);

struct TestResult {
  double statistic = 0;  // U of the first sample; T = the smaller signed-rank sum (Wilcoxon)
  double p = 1;          // two-sided
};

enum class Method { automatic, exact, asymptotic };
// Mann-Whitney U, two-sided. exact: the permutation distribution (no ties); asymptotic: normal
// approximation with tie and continuity corrections; automatic, as SciPy's mannwhitneyu: exact when
// either sample has at most 8 values and there are no ties.
TestResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y,
                        Method method = Method::automatic);

// Wilcoxon signed-rank test of the paired differences d, two-sided, as SciPy's wilcoxon with its
// defaults (zero differences dropped, no continuity correction; SciPy 1.13 on, checked against 1.17.1):
// exact for at most 50 differences with no zeros and no ties among |d|; with zeros or ties, the exact
// permutation distribution for at most 13 differences (zeros counted); else the normal approximation
// with tie correction.
TestResult wilcoxon_signed_rank(const std::vector<double>& d, Method method = Method::automatic);

// Holm's step-down adjustment of p-values (family-wise error), in the input order.
std::vector<double> holm(const std::vector<double>& p);

struct Interval {
  double lo = 0, hi = 0;
  double coverage = 0;  // the exact coverage, when known (distribution-free intervals)
  // The point estimate the interval is built around: the Hodges-Lehmann estimate (the median of the
  // Walsh averages or of the pairwise differences), or the bootstrap's ratio of medians; NaN: unknown.
  double centre = std::numeric_limits<double>::quiet_NaN();
  bool valid() const { return lo <= hi && coverage > 0; }
};

// The shift between two samples (x - y, as in log times: the log of a speed-up): the Hodges-Lehmann
// interval from the Mann-Whitney distribution, [D_(k), D_(N + 1 - k)] of the N = n1 n2 differences
// x_i - y_j, with the largest k whose tails hold at most (1 - level) / 2 each. Distribution-free
// under a shift model; coverage = 0 (no interval) when the samples are too small for `level` (3 vs
// 3 reaches 90%).
Interval shift_interval(const std::vector<double>& x, const std::vector<double>& y, double level = 0.95);
// The centre of paired differences d: from the Wilcoxon signed-rank distribution, the order
// statistics of the Walsh averages (d_i + d_j) / 2, i <= j. No interval below 6 pairs at 95%.
Interval paired_interval(const std::vector<double>& d, double level = 0.95);

// Percentile bootstrap interval of median(x) / median(y), resampling both samples (the fallback of
// very large samples; coverage unknown: 0.95 nominal is recorded).
Interval bootstrap_median_ratio(const std::vector<double>& x, const std::vector<double>& y,
                                double level = 0.95, int resamples = 4000, std::uint64_t seed = 1);

// The smallest two-sided p-value any outcome can give: Mann-Whitney with n1 and n2 values (no
// ties), Wilcoxon signed-rank with n pairs.
double smallest_p_mann_whitney(std::size_t n1, std::size_t n2);
double smallest_p_wilcoxon(std::size_t n);

// What a design needs to decide, where "decide" means an interval lying beyond the margin (faster,
// slower) or inside it (equivalent); m is the margin as a log speed-up, log(1 + margin).
//
// Trials per configuration that would decide a comparison, from the observed rounds themselves: the
// smallest N at which at least half of 400 resampled experiments of N rounds (drawn with replacement)
// give an interval that decides (beyond +-m, or inside it), found by doubling, then bisection to 5%.
// Paired: d, the rounds' log speed-ups (their Walsh interval); independent: x and y, the two samples'
// log times (the Hodges-Lehmann shift interval, N values a side). +infinity when none up to `most`
// would. Against resampling by an independent implementation (tests/analysis/scipy_fixtures.py: NumPy,
// the intervals by sorting every Walsh average or difference) it lands within 1.35x on one-humped,
// skewed (one outlier), two-humped and near-margin rounds, and on the repro rows of
// data/cutlass/yardstick-run2.csv; the formula it replaces (the interval narrowing like 1 / sqrt(n))
// missed resampling by more than 1.6x on 39 of 122 committed rows.
double trials_to_decide(const std::vector<double>& d, double m, double level = 0.95, std::size_t most = 20000);
double trials_to_decide(const std::vector<double>& x, const std::vector<double>& y, double m, double level = 0.95,
                        std::size_t most = 20000);

// Runs at which Student's t interval of the mean log speed-up over runs would decide: the smallest
// R > r with (t_{R-1}(1 - (1 - level) / 2) + t_{R-1}(power)) sd / sqrt(R) <= | |mean| - m |, the t
// quantiles taken at the proposed R (power 0: the interval alone, as if the next runs looked like
// these; 0.8: with that chance). `most` + 1 when none up to `most` would.
std::size_t runs_to_decide(double mean, double sd, std::size_t r, double m, double level, double power = 0,
                           std::size_t most = 100000);

}  // namespace mmlab::analysis
