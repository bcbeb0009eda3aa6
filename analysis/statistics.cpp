#include "analysis/statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
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

// Two-sided p of the signed-rank sum `plus` by enumerating the 2^n sign patterns of the non-zero
// differences (their average ranks `rank`), as SciPy's permutation test counts them: outcomes within a
// relative 100 eps of `plus` count on both sides (zeros only double every pattern's weight).
double permutation_p(const std::vector<double>& rank, double plus) {
  const std::size_t n = rank.size();
  const double gamma = std::fabs(100 * std::numeric_limits<double>::epsilon() * plus);
  std::uint64_t le = 0, ge = 0;
  for (std::uint64_t signs = 0; signs < (std::uint64_t(1) << n); ++signs) {
    double t = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (signs >> i & 1) t += rank[i];
    le += t <= plus + gamma;
    ge += t >= plus - gamma;
  }
  const double total = std::ldexp(1.0, int(n));
  return std::min(1.0, 2.0 * double(std::min(le, ge)) / total);
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
  if (method == Method::automatic) {
    // SciPy's rule (1.13 on; 1.17.1 checked): more than 50 differences, zeros counted, the normal
    // approximation; else exact without ties or zeros, and with them the exact permutation
    // distribution up to 13 differences, the normal approximation above.
    if (d_in.size() <= 50 && (zeros || ties) && d_in.size() <= 13) {
      r.p = permutation_p(rank, plus);
      return r;
    }
    exact = d_in.size() <= 50 && !zeros && !ties;
  }
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

namespace {

// The rank k of the shift interval [D_(k), D_(N + 1 - k)] of n1 x n2 differences: the largest with
// P(U <= k - 1) <= (1 - level) / 2, exact where affordable, else the normal approximation; `reached`
// receives that tail (0 when k = 0: no interval).
std::size_t shift_rank(std::size_t n1, std::size_t n2, double level, double* reached) {
  const std::size_t pairs = n1 * n2, m = std::min(n1, n2);
  const double tail = (1 - level) / 2;
  std::size_t k = 0;
  *reached = 0;
  if (double(m) * double(pairs) / 2 <= 5e7) {  // the exact distribution
    const std::vector<double> cdf = u_cdf(long(n1), long(n2), long(pairs / 2));
    while (k < cdf.size() && cdf[k] <= tail) *reached = cdf[k], ++k;
  } else {
    const double sigma = std::sqrt(double(n1) * double(n2) * double(n1 + n2 + 1) / 12.0);
    const double kk = std::floor(double(pairs) / 2.0 + 0.5 + normal_quantile(tail) * sigma);
    k = kk > 0 ? std::size_t(kk) : 0;
    if (k > 0) *reached = 1 - normal_sf((double(k) - 0.5 - double(pairs) / 2.0) / sigma);
  }
  return k;
}

// The rank k of the paired interval [W_(k), W_(M + 1 - k)] of n pairs' M Walsh averages, likewise.
std::size_t signed_rank_rank(std::size_t n, double level, double* reached) {
  const std::size_t walsh = n * (n + 1) / 2;
  const double tail = (1 - level) / 2;
  std::size_t k = 0;
  *reached = 0;
  if (n == 0) return 0;
  if (n <= 400) {
    const std::vector<double> c = signed_rank_counts(long(n));
    const double total = std::ldexp(1.0, int(n));
    double run = 0;
    while (k < c.size() && (run + c[k]) / total <= tail) run += c[k], ++k;
    *reached = run / total;
  } else {
    const double sigma = std::sqrt(double(n) * double(n + 1) * double(2 * n + 1) / 24.0);
    const double kk = std::floor(double(walsh) / 2.0 + 0.5 + normal_quantile(tail) * sigma);
    k = kk > 0 ? std::size_t(kk) : 0;
    if (k > 0) *reached = 1 - normal_sf((double(k) - 0.5 - double(walsh) / 2.0) / sigma);
  }
  return k;
}

}  // namespace

Interval shift_interval(const std::vector<double>& x, const std::vector<double>& y, double level) {
  if (x.empty() || y.empty()) throw std::invalid_argument("an interval needs two non-empty samples");
  const std::size_t pairs = x.size() * y.size();
  double reached = 0;
  const std::size_t k = shift_rank(x.size(), y.size(), level, &reached);
  std::vector<double> differences;
  differences.reserve(pairs);
  for (double a : x)
    for (double b : y) differences.push_back(a - b);
  return order_interval(differences, k, reached);
}

Interval paired_interval(const std::vector<double>& d, double level) {
  const std::size_t n = d.size(), walsh = n * (n + 1) / 2;
  if (n == 0) return {};
  double reached = 0;
  const std::size_t k = signed_rank_rank(n, level, &reached);
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

namespace {

// #{i <= j : d_i + d_j <= 2 v} (or < 2 v when strict) of sorted d: the Walsh averages at or below v.
std::uint64_t walsh_below(const std::vector<double>& d, double v, bool strict) {
  std::uint64_t count = 0;
  long j = long(d.size()) - 1;
  for (long i = 0; i < long(d.size()); ++i) {
    while (j >= i && !(strict ? d[i] + d[j] < 2 * v : d[i] + d[j] <= 2 * v)) --j;
    if (j < i) break;
    count += std::uint64_t(j - i + 1);
  }
  return count;
}
// #{(i, j) : x_i - y_j <= v} (or < v) of sorted x and y.
std::uint64_t differences_below(const std::vector<double>& x, const std::vector<double>& y, double v, bool strict) {
  std::uint64_t count = 0;
  std::size_t first = 0;  // the first y_j with x_i - y_j within v: it only moves on as x_i grows
  for (double a : x) {
    while (first < y.size() && !(strict ? a - y[first] < v : a - y[first] <= v)) ++first;
    count += y.size() - first;
  }
  return count;
}
// Whether the interval [V_(k), V_(M + 1 - k)] of M values decides against +-m, from how many lie
// below -m (`under`) and at or below m (`upto`): beyond either edge, or inside both.
bool decides(std::uint64_t under, std::uint64_t upto, std::uint64_t total, std::size_t k) {
  if (k == 0) return false;
  const std::uint64_t top = total + 1 - k;
  return upto < k || under >= top || (under < k && upto >= top);
}

std::uint64_t data_seed(const std::vector<double>& a, const std::vector<double>& b) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  for (const auto* v : {&a, &b})
    for (double x : *v) {
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      h = (h ^ bits) * 0x100000001B3ull;
    }
  return h;
}

// The smallest N (above n) at which at least half of kResamples resampled experiments of N trials
// decide, `decided(N, rng)` running one; +infinity above `most`. The search starts at `guess` (the
// interval narrowing like 1 / sqrt(N) from its centre), brackets by doubling or halving, then bisects
// to 5%; a guess beyond 8 `most` is taken as +infinity unresampled.
constexpr int kResamples = 400;
double resampled_trials(std::size_t n, std::size_t most, double guess, std::uint64_t seed,
                        const std::function<bool(std::size_t, std::mt19937_64&)>& decided) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!(guess <= 8.0 * double(most))) return inf;
  const auto rate = [&](std::size_t size) {
    std::mt19937_64 rng(seed ^ (0xD1B54A32D192ED03ull * size));
    int hits = 0;
    for (int r = 0; r < kResamples; ++r) hits += decided(size, rng);
    return double(hits) / kResamples;
  };
  std::size_t lo = n, hi = std::clamp<std::size_t>(std::size_t(guess), n + 1, most);
  if (rate(hi) >= 0.5) {  // halve down to a size that does not decide
    while (hi / 2 > n && rate(hi / 2) >= 0.5) hi /= 2;
    lo = std::max(n, hi / 2);
  } else {
    while (true) {
      lo = hi, hi = std::max(hi + 1, hi * 2);
      if (lo >= most) return inf;
      if (rate(hi) >= 0.5) break;
    }
  }
  while (hi - lo > std::max<std::size_t>(1, lo / 20)) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (rate(mid) >= 0.5 ? hi : lo) = mid;
  }
  return double(hi);
}

// Draws `size` values of `v` with replacement, one pick of `pick` each (the same picks, in the same
// order, as v[pick(rng)] in a loop), and returns them sorted: the picks counted per index, then each
// index's value repeated its count, in v's sorted order. O(size + |v|) where sorting the draw was
// O(size log size); the same multiset, so the same sorted values.
class SortedDraws {
 public:
  explicit SortedDraws(const std::vector<double>& v) : v_(v), order_(v.size()), count_(v.size()) {
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  }
  void draw(std::size_t size, std::mt19937_64& rng, std::vector<double>& out) {
    std::uniform_int_distribution<std::size_t> pick(0, v_.size() - 1);
    std::fill(count_.begin(), count_.end(), std::size_t{0});
    for (std::size_t i = 0; i < size; ++i) ++count_[pick(rng)];
    out.clear();
    for (std::size_t i : order_) out.insert(out.end(), count_[i], v_[i]);
  }

 private:
  const std::vector<double>& v_;
  std::vector<std::size_t> order_, count_;
};

// Where resampling starts: the pairs or trials at which an interval like `log_ci` (from n) would decide if
// it kept its centre and shape and narrowed like 1 / sqrt(N).
double narrowing_guess(const Interval& log_ci, std::size_t n, double m) {
  const double c = std::isnan(log_ci.centre) ? (log_ci.lo + log_ci.hi) / 2 : log_ci.centre;
  const double gap = std::fabs(std::fabs(c) - m);
  if (!(gap > 0) || log_ci.coverage <= 0) return double(n) * 4;
  const bool must_fall = (c >= 0) == (std::fabs(c) < m);
  const double reach = std::max(must_fall ? log_ci.hi - c : c - log_ci.lo, 1e-12);
  return double(n) * (reach / gap) * (reach / gap);
}

}  // namespace

double trials_to_decide(const std::vector<double>& d, double m, double level, std::size_t most) {
  if (d.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> draw;
  SortedDraws draws(d);
  std::size_t last = 0, k = 0;
  double reached = 0;
  const double guess = narrowing_guess(paired_interval(d, level), d.size(), m);
  return resampled_trials(d.size(), most, guess, data_seed(d, {}), [&](std::size_t size, std::mt19937_64& rng) {
    if (size != last) k = signed_rank_rank(size, level, &reached), last = size;
    draws.draw(size, rng, draw);
    return decides(walsh_below(draw, -m, true), walsh_below(draw, m, false), std::uint64_t(size) * (size + 1) / 2, k);
  });
}

double trials_to_decide(const std::vector<double>& x, const std::vector<double>& y, double m, double level,
                        std::size_t most) {
  if (x.empty() || y.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> dx, dy;
  SortedDraws draws_x(x), draws_y(y);
  std::size_t last = 0, k = 0;
  double reached = 0;
  const double guess = double(x.size()) * double(y.size()) <= 4e6
                            ? narrowing_guess(shift_interval(x, y, level), std::min(x.size(), y.size()), m)
                            : double(std::min(x.size(), y.size())) * 4;
  return resampled_trials(std::min(x.size(), y.size()), most, guess, data_seed(x, y),
                          [&](std::size_t size, std::mt19937_64& rng) {
                            if (size != last) k = shift_rank(size, size, level, &reached), last = size;
                            draws_x.draw(size, rng, dx);
                            draws_y.draw(size, rng, dy);
                            return decides(differences_below(dx, dy, -m, true), differences_below(dx, dy, m, false),
                                           std::uint64_t(size) * size, k);
                          });
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
