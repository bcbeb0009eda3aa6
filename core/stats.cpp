#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace mmlab {

// log of C(n, i) / 2^n, stable for large n.
static double log_binomial_half(std::size_t n, std::size_t i) {
  return std::lgamma(double(n) + 1) - std::lgamma(double(i) + 1) - std::lgamma(double(n - i) + 1) -
         double(n) * std::log(2.0);
}

MedianRanks median_ci_ranks(std::size_t n, double level) {
  if (n == 0) throw std::invalid_argument("median_ci_ranks: no samples");
  const double tail = (1.0 - level) / 2.0;
  // cdf = P(B <= l - 1); grow l while the tail stays within bounds.
  std::size_t l = 0;
  double cdf = 0;
  while (l < n / 2) {
    const double next = cdf + std::exp(log_binomial_half(n, l));  // P(B <= l)
    if (next > tail) break;
    cdf = next;
    ++l;
  }
  if (l == 0) return {1, n, 1.0 - 2.0 * std::exp(log_binomial_half(n, 0))};
  return {l, n + 1 - l, 1.0 - 2.0 * cdf};
}

Stats summarize(std::vector<double> x) {
  if (x.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  Stats s;
  s.trials = n;
  s.min = x.front();
  s.max = x.back();
  s.mean = std::accumulate(x.begin(), x.end(), 0.0) / double(n);
  double ss = 0;
  for (double v : x) ss += (v - s.mean) * (v - s.mean);
  s.std = n > 1 ? std::sqrt(ss / double(n - 1)) : 0.0;
  s.median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  const MedianRanks r = median_ci_ranks(n);
  s.ci_lo = x[r.lo - 1];
  s.ci_hi = x[r.hi - 1];
  s.ci_coverage = r.coverage;
  return s;
}

bool should_stop(const std::vector<double>& samples, const StopRule& rule) {
  if (samples.size() < rule.min_trials) return false;
  if (!rule.adaptive || samples.size() >= rule.max_trials) return true;
  const Stats s = summarize(samples);
  return s.median > 0 && (s.ci_hi - s.ci_lo) / s.median <= rule.rel_width;
}

}  // namespace mmlab
