// Trial statistics: the summary recorded per configuration and the adaptive stopping rule.
#pragma once

#include <cstddef>
#include <vector>

namespace mmlab {

struct Stats {
  std::size_t trials = 0;
  double min = 0, max = 0, mean = 0, std = 0;  // std: sample standard deviation (n - 1)
  double median = 0;
  double ci_lo = 0, ci_hi = 0;  // distribution-free 95% confidence interval of the median
  double ci_coverage = 0;       // its exact coverage: below 95% with fewer than 6 trials
};
// Rows leave the median's CI empty below this many trials (two trials' [min, max] covers 50%), and
// the standard deviation below two.
inline constexpr std::size_t kMinTrialsForCi = 3;

// Ranks (1-based, into the sorted sample) of the distribution-free confidence interval of the
// median: the largest l with P(Binomial(n, 1/2) <= l - 1) <= (1 - level) / 2 gives
// [x_(l), x_(n + 1 - l)]. With n < 6 no pair reaches 95%; the interval is then [min, max].
struct MedianRanks {
  std::size_t lo = 1, hi = 1;
  double coverage = 0;  // the interval's exact coverage
};
MedianRanks median_ci_ranks(std::size_t n, double level = 0.95);

Stats summarize(std::vector<double> samples);  // throws std::invalid_argument when empty

// Adaptive trial count: stop once the median's CI is at most `rel_width` of the median wide.
// The harness's options set it (their defaults: harness/options.cpp); default-constructed: one trial.
struct StopRule {
  std::size_t min_trials = 1;
  std::size_t max_trials = 1;
  double rel_width = 1;   // (ci_hi - ci_lo) / median
  bool adaptive = false;  // false: exactly min_trials trials
};
bool should_stop(const std::vector<double>& samples, const StopRule& rule);

}  // namespace mmlab
