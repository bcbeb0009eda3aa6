#include "core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace mmlab {
namespace {

TEST(Stats, SummaryOfAKnownSample) {
  const Stats s = summarize({3, 1, 2, 5, 4});
  EXPECT_EQ(s.trials, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(2.5));  // sample std, n - 1
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.ci_lo, 1);  // n = 5: no order-statistic pair reaches 95%
  EXPECT_DOUBLE_EQ(s.ci_hi, 5);
}

TEST(Stats, EvenCountMedianIsTheMidpoint) {
  const Stats s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(5.0 / 3.0));
}

// Ranks of the 95% distribution-free CI of the median, from binomial tables
// (e.g. Conover, Practical Nonparametric Statistics): n = 6 -> (1, 6), 10 -> (2, 9),
// 20 -> (6, 15), 100 -> (40, 61).
TEST(Stats, MedianConfidenceIntervalRanks) {
  struct Case {
    std::size_t n, lo, hi;
    double coverage;
  };
  for (const Case c : {Case{6, 1, 6, 0.96875}, Case{10, 2, 9, 1 - 2 * 11.0 / 1024},
                       Case{20, 6, 15, 0.958610535}, Case{100, 40, 61, 0.964800}}) {
    const MedianRanks r = median_ci_ranks(c.n);
    EXPECT_EQ(r.lo, c.lo) << "n = " << c.n;
    EXPECT_EQ(r.hi, c.hi) << "n = " << c.n;
    EXPECT_NEAR(r.coverage, c.coverage, 1e-5) << "n = " << c.n;
  }
  EXPECT_EQ(median_ci_ranks(5).lo, 1u);
  EXPECT_EQ(median_ci_ranks(5).hi, 5u);
  EXPECT_NEAR(median_ci_ranks(5).coverage, 0.9375, 1e-12);
}

TEST(Stats, MedianCiUsesTheOrderStatistics) {
  std::vector<double> x;
  for (int i = 10; i >= 1; --i) x.push_back(i * 1.5);  // 1.5 .. 15, shuffled order
  const Stats s = summarize(x);
  EXPECT_DOUBLE_EQ(s.ci_lo, 3.0);   // x_(2)
  EXPECT_DOUBLE_EQ(s.ci_hi, 13.5);  // x_(9)
  EXPECT_DOUBLE_EQ(s.median, 8.25);
}

TEST(Stats, EmptySampleIsAnError) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(StopRule, FixedCountStopsExactly) {
  StopRule r;
  r.min_trials = r.max_trials = 4;
  EXPECT_FALSE(should_stop({1, 1, 1}, r));
  EXPECT_TRUE(should_stop({1, 1, 1, 1}, r));
}

TEST(StopRule, AdaptiveStopsWhenTheCiIsNarrowAndNotBefore) {
  StopRule r;
  r.adaptive = true;
  r.min_trials = 10;
  r.max_trials = 50;
  r.rel_width = 0.02;
  std::vector<double> tight(10, 1.0);
  EXPECT_TRUE(should_stop(tight, r));
  std::vector<double> wide;
  for (int i = 0; i < 20; ++i) wide.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_FALSE(should_stop(wide, r));
  wide.resize(50, 1.5);
  EXPECT_TRUE(should_stop(wide, r));                          // max reached
  EXPECT_FALSE(should_stop(std::vector<double>(9, 1.0), r));  // min not reached
}

}  // namespace
}  // namespace mmlab
