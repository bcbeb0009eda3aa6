// Reference values computed independently with SciPy 1.17 (stats.mannwhitneyu, stats.ttest_ind
// with equal_var=False) and by hand (Holm).
#include "analysis/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mmlab::analysis {
namespace {

const std::vector<double> kX = {1.1, 2.3, 0.7, 3.9, 2.8}, kY = {4.2, 5.1, 3.3, 6.0, 4.8, 5.5};
const std::vector<double> kA = {2.1, 2.2, 2.2, 2.5, 2.3, 2.2, 2.6, 2.4, 2.1, 2.3, 2.2, 2.5};
const std::vector<double> kB = {2.4, 2.6, 2.6, 2.7, 2.5, 2.9, 2.6, 2.8, 2.5, 2.7};

TEST(MannWhitney, ExactMatchesScipy) {
  const TestResult t = mann_whitney(kX, kY, Method::exact);
  EXPECT_DOUBLE_EQ(t.statistic, 1.0);
  EXPECT_NEAR(t.p, 0.008658008658008658, 1e-12);
  EXPECT_NEAR(mann_whitney(kX, kY).p, t.p, 1e-15);  // automatic picks exact: small, no ties
}

TEST(MannWhitney, AsymptoticMatchesScipy) {
  EXPECT_NEAR(mann_whitney(kX, kY, Method::asymptotic).p, 0.01371083007813322, 1e-12);
  const TestResult ties = mann_whitney(kA, kB);  // ties: normal approximation with tie correction
  EXPECT_DOUBLE_EQ(ties.statistic, 9.0);
  EXPECT_NEAR(ties.p, 0.0007729529303527327, 1e-12);
  EXPECT_THROW(mann_whitney(kA, kB, Method::exact), std::invalid_argument);
}

TEST(MannWhitney, IdenticalSamplesAreNotDifferent) {
  EXPECT_DOUBLE_EQ(mann_whitney(kA, kA).p, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney({1, 1, 1}, {1, 1, 1}).p, 1.0);
}

TEST(MannWhitney, NonFiniteSamplesAreRefusedNotLoopedOn) {
  const std::vector<double> x = {1, 2, std::nan("")}, y = {1, 3, 4};
  EXPECT_THROW(mann_whitney(x, y), std::invalid_argument);
  EXPECT_THROW(mann_whitney(y, {INFINITY, 2.0}), std::invalid_argument);
}

TEST(Holm, StepDownAdjustment) {
  const std::vector<double> adj = holm({0.01, 0.04, 0.03, 0.005});
  const std::vector<double> expected = {0.03, 0.06, 0.06, 0.02};
  for (std::size_t i = 0; i < adj.size(); ++i) EXPECT_NEAR(adj[i], expected[i], 1e-15);
  EXPECT_DOUBLE_EQ(holm({0.9, 0.8})[0], 1.0);  // capped at 1
}

TEST(Median, OddAndEven) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

// Coverage of the bootstrap CI of a ratio of medians on synthetic data with a known ratio.
TEST(Bootstrap, CoversAKnownRatioAboutNinetyFivePercentOfTheTime) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> noise(0.0, 0.05);  // median 1
  const double ratio = 1.3;
  int covered = 0;
  const int experiments = 300;
  for (int e = 0; e < experiments; ++e) {
    std::vector<double> slow(40), fast(40);
    for (double& v : slow) v = ratio * 2.0 * noise(rng);  // medians 2.6 and 2.0
    for (double& v : fast) v = 2.0 * noise(rng);
    const Interval ci = bootstrap_median_ratio(slow, fast, 0.95, 1000, std::uint64_t(e));
    EXPECT_LT(ci.lo, ci.hi);
    covered += ci.lo <= ratio && ratio <= ci.hi;
  }
  const double coverage = double(covered) / experiments;
  EXPECT_GT(coverage, 0.89) << coverage;
  EXPECT_LT(coverage, 0.995) << coverage;
}

}  // namespace
}  // namespace mmlab::analysis
