#include "harness/verification.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "harness/random.hpp"

namespace mmlab {
namespace {

TEST(RandomInputs, DeterministicAndInRange) {
  std::vector<float> x(10000), y(10000);
  fill_random_host(x.data(), x.size(), 9, kMatrixA);
  fill_random_host(y.data(), y.size(), 9, kMatrixA);
  EXPECT_EQ(x, y);
  fill_random_host(y.data(), y.size(), 9, kMatrixB);
  EXPECT_NE(x, y);
  double sum = 0;
  for (float v : x) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / x.size(), 0.0, 0.03);
}

TEST(HostReference, MatchesATripleLoop) {
  const long m = 13, n = 9, k = 21;
  std::vector<float> a(m * k), b(k * n);
  fill_random_host(a.data(), a.size(), 1, kMatrixA);
  fill_random_host(b.data(), b.size(), 1, kMatrixB);
  std::vector<double> ref(m * n);
  reference_host(a.data(), b.data(), ref.data(), m, n, k);
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) {
      double s = 0;
      for (long p = 0; p < k; ++p) s += double(a[i * k + p]) * double(b[p * n + j]);
      EXPECT_NEAR(ref[i * n + j], s, 1e-12);
    }
}

TEST(Judge, AcceptsRoundingAndRejectsErrorsAndNaN) {
  const std::vector<double> ref = {10.0, -4.0, 2.5};
  std::vector<float> c = {10.0f, -4.0f, 2.5f};
  Verdict v = judge(compare_host(c.data(), ref.data(), 3), 100);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.max_rel_err, 0.0);

  c[0] = std::nextafter(10.0f, 11.0f);  // one ulp off
  v = judge(compare_host(c.data(), ref.data(), 3), 100);
  EXPECT_TRUE(v.ok) << v.reason;

  c[0] = 10.01f;  // a wrong value
  v = judge(compare_host(c.data(), ref.data(), 3), 100);
  EXPECT_FALSE(v.ok);
  EXPECT_NEAR(v.max_abs_err, 0.01, 1e-6);
  EXPECT_NEAR(v.frac_over_1e3, 1.0 / 3, 1e-12);
  EXPECT_NE(v.reason.find("tolerance"), std::string::npos);

  c[0] = std::numeric_limits<float>::quiet_NaN();  // unwritten (poisoned)
  v = judge(compare_host(c.data(), ref.data(), 3), 100);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("NaN"), std::string::npos);
}

TEST(Judge, ToleranceGrowsWithSqrtK) {
  EXPECT_NEAR(tolerance(1), 4 * 1.1920928955078125e-7, 1e-18);
  EXPECT_NEAR(tolerance(10000), 100 * tolerance(1), 1e-15);
}

TEST(Judge, MseAndFractionFollowTheHomeworkDefinitions) {
  const std::vector<double> ref = {0, 0, 0, 0};
  const std::vector<float> c = {0.002f, 0, 0, -0.0005f};
  const Verdict v = judge(compare_host(c.data(), ref.data(), 4), 1);
  EXPECT_NEAR(v.mse, (0.002 * 0.002 + 0.0005 * 0.0005) / 4, 1e-12);
  EXPECT_NEAR(v.frac_over_1e3, 0.25, 1e-12);
  EXPECT_NEAR(v.max_abs_err, 0.002, 1e-9);
}

}  // namespace
}  // namespace mmlab
