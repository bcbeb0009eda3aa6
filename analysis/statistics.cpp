#include "analysis/statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
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

// P(Z > z) of the standard normal.
double normal_sf(double z) { return boost::math::cdf(boost::math::complement(boost::math::normal(), z)); }
double normal_quantile(double p) { return boost::math::quantile(boost::math::normal(), p); }

// The number of arrangements of m + n distinct values whose U (of the m values) is u, for u = 0 ...
// limit: the coefficients of the Gaussian binomial [m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) /
// (1 - q^i), truncated at degree `limit`. After step i they are [n + i choose i]_q's: all >= 0, and
// the subtraction takes from a coefficient n + i places lower, so no cancellation eats the tails.
std::vector<double> u_counts(long m, long n, long limit) {
  if (m > n) std::swap(m, n);
  std::vector<double> c(std::size_t(limit + 1), 0.0);
  c[0] = 1;
  for (long i = 1; i <= m; ++i) {
    for (long j = i; j <= limit; ++j) c[std::size_t(j)] += c[std::size_t(j - i)];          // / (1 - q^i)
    for (long j = limit; j >= n + i; --j) c[std::size_t(j)] -= c[std::size_t(j - n - i)];  // * (1 - q^(n+i))
  }
  return c;
}

double log_binomial(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// P(U <= u) for u = 0 ... limit, under the null with m and n values (no ties).
std::vector<double> u_cdf(long m, long n, long limit) {
  std::vector<double> c = u_counts(m, n, limit);
  const double total = std::exp(log_binomial(double(m + n), double(m)));
  double run = 0;
  for (double& v : c) v = (run += v) / total;
  return c;
}

// The number of subsets of {1 ... n} summing to t, t = 0 ... n (n + 1) / 2: the signed-rank sums.
std::vector<double> signed_rank_counts(long n) {
  const long top = n * (n + 1) / 2;
  std::vector<double> c(std::size_t(top + 1), 0.0);
  c[0] = 1;
  for (long r = 1; r <= n; ++r)
    for (long t = top; t >= r; --t) c[std::size_t(t)] += c[std::size_t(t - r)];
  return c;
}

// Average ranks (1-based) of `v`, and the tie term sum (t^3 - t) over groups of equal values.
std::vector<double> average_ranks(const std::vector<double>& v, double* tie_term, bool* ties) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  *tie_term = 0, *ties = false;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    const double t = double(j - i);
    for (std::size_t q = i; q < j; ++q) rank[order[q]] = (double(i + 1) + double(j)) / 2.0;
    *tie_term += t * t * t - t;
    *ties = *ties || t > 1;
    i = j;
  }
  return rank;
}

void require_finite(const std::vector<double>& v, const char* what) {
  if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }))
    throw std::invalid_argument(std::string(what) + " needs finite samples (ranks of NaN are undefined)");
}

// The k-th smallest (1-based) of `values`.
double kth(std::vector<double>& values, std::size_t k) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k - 1), values.end());
  return values[k - 1];
}

// [values_(k), values_(N + 1 - k)] with the coverage 1 - 2 tail; none when k = 0.
Interval order_interval(std::vector<double>& values, std::size_t k, double tail) {
  Interval out;
  if (k == 0 || 2 * k > values.size() + 1) return out;
  out.lo = kth(values, k);
  out.hi = kth(values, values.size() + 1 - k);
  out.coverage = 1 - 2 * tail;
  out.centre = median(values);  // Hodges-Lehmann
  return out;
}

}  // namespace

TestResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y, Method method) {
  const std::size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) throw std::invalid_argument("Mann-Whitney U needs two non-empty samples");
  require_finite(x, "Mann-Whitney U");
  require_finite(y, "Mann-Whitney U");
  std::vector<double> all(x);
  all.insert(all.end(), y.begin(), y.end());
  double tie_term = 0;
  bool ties = false;
  const std::vector<double> rank = average_ranks(all, &tie_term, &ties);
  const double rank_sum_x = std::accumulate(rank.begin(), rank.begin() + std::ptrdiff_t(n1), 0.0);
  TestResult r;
  const double u1 = rank_sum_x - double(n1) * (double(n1) + 1) / 2.0;
  const double u2 = double(n1) * double(n2) - u1;
  r.statistic = u1;
  const double big = std::max(u1, u2);
  bool exact = method == Method::exact;
  if (method == Method::automatic) exact = !ties && (n1 <= 8 || n2 <= 8);
  if (exact) {
    if (ties) throw std::invalid_argument("the exact Mann-Whitney distribution assumes no ties");
    // P(U >= big) = P(U <= n1 n2 - big), by symmetry.
    const long low = long(std::llround(double(n1) * double(n2) - big));
    r.p = std::min(1.0, 2.0 * u_cdf(long(n1), long(n2), low).back());
    return r;
  }
  const double mu = double(n1) * double(n2) / 2.0;
  const double sigma = std::sqrt(double(n1) * double(n2) / 12.0 *
                                 ((double(n) + 1) - tie_term / (double(n) * (double(n) - 1))));
  if (sigma == 0) {
    r.p = 1;
    return r;
  }
  r.p = std::min(1.0, 2.0 * normal_sf((big - mu - 0.5) / sigma));  // continuity correction
  return r;
}

TestResult wilcoxon_signed_rank(const std::vector<double>& d_in, Method method) {
  require_finite(d_in, "the Wilcoxon signed-rank test");
  TestResult r;
  const bool zeros = std::any_of(d_in.begin(), d_in.end(), [](double v) { return v == 0; });
  std::vector<double> d;  // zero differences carry no sign: dropped (SciPy's zero_method "wilcox")
  for (double v : d_in)
    if (v != 0) d.push_back(v);
  if (d.empty()) return r;  // no difference at all
  std::vector<double> magnitude(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) magnitude[i] = std::fabs(d[i]);
  double tie_term = 0;
  bool ties = false;
  const std::vector<double> rank = average_ranks(magnitude, &tie_term, &ties);
  double plus = 0, minus = 0;
  for (std::size_t i = 0; i < d.size(); ++i) (d[i] > 0 ? plus : minus) += rank[i];
  r.statistic = std::min(plus, minus);
  bool exact = method == Method::exact;
  if (method == Method::automatic) exact = d_in.size() <= 50 && !zeros && !ties;
  const double n = double(d.size());
  if (exact) {
    if (ties) throw std::invalid_argument("the exact signed-rank distribution assumes no ties");
    const std::vector<double> c = signed_rank_counts(long(d.size()));
    const double total = std::ldexp(1.0, int(d.size()));
    const long t = long(std::llround(plus)), top = long(c.size()) - 1;
    if (t == top / 2) {  // the centre of the distribution
      r.p = 1;
      return r;
    }
    double below = 0, above = 0;  // P(T+ <= t), P(T+ >= t)
    for (long v = 0; v <= top; ++v) (v <= t ? below : above) += c[std::size_t(v)];
    above += c[std::size_t(t)];
    r.p = std::min(1.0, 2.0 * std::min(below, above) / total);
    return r;
  }
  const double mean = n * (n + 1) / 4.0;
  const double se = std::sqrt((n * (n + 1) * (2 * n + 1) - 0.5 * tie_term) / 24.0);
  if (se == 0) return r;
  r.p = std::min(1.0, 2.0 * normal_sf(std::fabs(r.statistic - mean) / se));
  return r;
}

Interval shift_interval(const std::vector<double>& x, const std::vector<double>& y, double level) {
  if (x.empty() || y.empty()) throw std::invalid_argument("an interval needs two non-empty samples");
  const std::size_t n1 = x.size(), n2 = y.size(), pairs = n1 * n2;
  const double tail = (1 - level) / 2;
  // k: the largest with P(U <= k - 1) <= tail.
  std::size_t k = 0;
  double reached = 0;
  const std::size_t m = std::min(n1, n2);
  if (double(m) * double(pairs) / 2 <= 5e7) {  // the exact distribution
    const std::vector<double> cdf = u_cdf(long(n1), long(n2), long(pairs / 2));
    while (k < cdf.size() && cdf[k] <= tail) reached = cdf[k], ++k;
  } else {
    const double sigma = std::sqrt(double(n1) * double(n2) * double(n1 + n2 + 1) / 12.0);
    const double kk = std::floor(double(pairs) / 2.0 + 0.5 + normal_quantile(tail) * sigma);
    k = kk > 0 ? std::size_t(kk) : 0;
    if (k > 0) reached = 1 - normal_sf((double(k) - 0.5 - double(pairs) / 2.0) / sigma);
  }
  std::vector<double> differences;
  differences.reserve(pairs);
  for (double a : x)
    for (double b : y) differences.push_back(a - b);
  return order_interval(differences, k, reached);
}

Interval paired_interval(const std::vector<double>& d, double level) {
  const std::size_t n = d.size(), walsh = n * (n + 1) / 2;
  const double tail = (1 - level) / 2;
  std::size_t k = 0;
  double reached = 0;
  if (n == 0) return {};
  if (n <= 400) {
    const std::vector<double> c = signed_rank_counts(long(n));
    const double total = std::ldexp(1.0, int(n));
    double run = 0;
    while (k < c.size() && (run + c[k]) / total <= tail) run += c[k], ++k;
    reached = run / total;
  } else {
    const double sigma = std::sqrt(double(n) * double(n + 1) * double(2 * n + 1) / 24.0);
    const double kk = std::floor(double(walsh) / 2.0 + 0.5 + normal_quantile(tail) * sigma);
    k = kk > 0 ? std::size_t(kk) : 0;
    if (k > 0) reached = 1 - normal_sf((double(k) - 0.5 - double(walsh) / 2.0) / sigma);
  }
  std::vector<double> averages;
  averages.reserve(walsh);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) averages.push_back((d[i] + d[j]) / 2);
  return order_interval(averages, k, reached);
}

double smallest_p_mann_whitney(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  std::vector<double> x(n1), y(n2);
  std::iota(x.begin(), x.end(), 0.0);
  std::iota(y.begin(), y.end(), double(n1));
  return mann_whitney(x, y).p;
}

double smallest_p_wilcoxon(std::size_t n) {
  if (n == 0) return 1;
  std::vector<double> d(n);
  std::iota(d.begin(), d.end(), 1.0);
  return wilcoxon_signed_rank(d).p;
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
  Interval out{at(tail), at(1 - tail), level};
  out.centre = median(x) / median(y);
  return out;
}

double trials_to_decide(const Interval& log_ci, std::size_t n, double m) {
  const double c = std::isnan(log_ci.centre) ? (log_ci.lo + log_ci.hi) / 2 : log_ci.centre;
  const double gap = std::fabs(std::fabs(c) - m);
  if (!(gap > 0)) return std::numeric_limits<double>::infinity();
  // The edge to clear: +-m from inside the margin (equivalent), the margin's own side from outside it.
  const bool must_fall = (c >= 0) == (std::fabs(c) < m);  // the interval must end below an edge
  const double reach = must_fall ? log_ci.hi - c : c - log_ci.lo;
  return double(n) * (reach / gap) * (reach / gap);
}

std::size_t runs_to_decide(double mean, double sd, std::size_t r, double m, double level, double power,
                           std::size_t most) {
  const double gap = std::fabs(std::fabs(mean) - m);
  for (std::size_t runs = std::max<std::size_t>(r + 1, 2); runs <= most; ++runs) {
    const boost::math::students_t t(double(runs - 1));
    double q = boost::math::quantile(t, 1 - (1 - level) / 2);
    if (power > 0) q += boost::math::quantile(t, power);
    if (q * sd / std::sqrt(double(runs)) <= gap) return runs;
  }
  return most + 1;
}

}  // namespace mmlab::analysis
