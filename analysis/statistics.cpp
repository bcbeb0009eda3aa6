#include "analysis/statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

namespace mmlab::analysis {

double median(std::vector<double> x) {
  if (x.empty()) throw std::invalid_argument("median of no values");
  const std::size_t h = x.size() / 2;
  std::nth_element(x.begin(), x.begin() + h, x.end());
  if (x.size() % 2) return x[h];
  return 0.5 * (x[h] + *std::max_element(x.begin(), x.begin() + h));
}

namespace {

// Number of arrangements of n1 + n2 distinct values whose U (of the first sample) equals u.
std::vector<double> u_counts(int n1, int n2) {
  // f[i][j][u]: built up by adding values in increasing order; the largest value is either from
  // sample 1 (adding j to U: it beats all j values of sample 2) or from sample 2.
  std::vector<std::vector<std::vector<double>>> f(n1 + 1, std::vector<std::vector<double>>(n2 + 1));
  for (int i = 0; i <= n1; ++i)
    for (int j = 0; j <= n2; ++j) {
      f[i][j].assign(std::size_t(i * j + 1), 0.0);
      if (i == 0 || j == 0) {
        f[i][j][0] = 1;
        continue;
      }
      for (int u = 0; u <= i * j; ++u) {
        double c = 0;
        if (u - j >= 0 && u - j <= (i - 1) * j) c += f[i - 1][j][u - j];
        if (u <= i * (j - 1)) c += f[i][j - 1][u];
        f[i][j][u] = c;
      }
    }
  return f[n1][n2];
}

}  // namespace

TestResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y, Method method) {
  const std::size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) throw std::invalid_argument("Mann-Whitney U needs two non-empty samples");
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!std::all_of(x.begin(), x.end(), finite) || !std::all_of(y.begin(), y.end(), finite))
    throw std::invalid_argument("Mann-Whitney U needs finite samples (ranks of NaN are undefined)");
  std::vector<std::pair<double, int>> all;
  for (double v : x) all.push_back({v, 0});
  for (double v : y) all.push_back({v, 1});
  std::sort(all.begin(), all.end());
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;  // a tie group of at least one: the loop always advances
    while (j < n && all[j].first == all[i].first) ++j;
    const double t = double(j - i), mid_rank = (double(i + 1) + double(j)) / 2.0;
    for (std::size_t q = i; q < j; ++q)
      if (all[q].second == 0) rank_sum_x += mid_rank;
    tie_term += t * t * t - t;
    ties = ties || t > 1;
    i = j;
  }
  TestResult r;
  const double u1 = rank_sum_x - double(n1) * (double(n1) + 1) / 2.0;
  const double u2 = double(n1) * double(n2) - u1;
  r.statistic = u1;
  const double big = std::max(u1, u2);
  bool exact = method == Method::exact;
  if (method == Method::automatic) exact = !ties && n1 < 8 && n2 < 8;
  if (exact) {
    if (ties) throw std::invalid_argument("the exact Mann-Whitney distribution assumes no ties");
    const std::vector<double> counts = u_counts(int(n1), int(n2));
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    double tail = 0;  // P(U >= big)
    for (std::size_t u = std::size_t(std::llround(big)); u < counts.size(); ++u) tail += counts[u];
    r.p = std::min(1.0, 2.0 * tail / total);
    return r;
  }
  const double mu = double(n1) * double(n2) / 2.0;
  const double sigma = std::sqrt(double(n1) * double(n2) / 12.0 *
                                 ((double(n) + 1) - tie_term / (double(n) * (double(n) - 1))));
  if (sigma == 0) {
    r.p = 1;
    return r;
  }
  const double z = (big - mu - 0.5) / sigma;  // continuity correction
  r.p = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal(), z)));
  return r;
}

std::vector<double> holm(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> out(m);
  double running = 0;
  for (std::size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, double(m - i) * p[order[i]]));
    out[order[i]] = running;
  }
  return out;
}

Interval bootstrap_median_ratio(const std::vector<double>& x, const std::vector<double>& y, double level,
                                int resamples, std::uint64_t seed) {
  if (x.empty() || y.empty()) throw std::invalid_argument("bootstrap needs two non-empty samples");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick_x(0, x.size() - 1), pick_y(0, y.size() - 1);
  std::vector<double> ratios(static_cast<std::size_t>(resamples)), bx(x.size()), by(y.size());
  for (double& ratio : ratios) {
    for (double& v : bx) v = x[pick_x(rng)];
    for (double& v : by) v = y[pick_y(rng)];
    ratio = median(bx) / median(by);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - level) / 2;
  auto at = [&](double q) {  // linear interpolation between order statistics
    const double pos = q * double(ratios.size() - 1);
    const std::size_t i = std::size_t(pos);
    const double f = pos - double(i);
    return i + 1 < ratios.size() ? ratios[i] * (1 - f) + ratios[i + 1] * f : ratios[i];
  };
  return {at(tail), at(1 - tail)};
}

}  // namespace mmlab::analysis
