#include "core/verification.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/random.hpp"

namespace mmlab {
namespace {

TEST(RandomInputs, DeterministicAndInRange) {
  std::vector<float> x(10000), y(10000);
  fill_input_host(x.data(), 100, 100, Inputs::uniform, 9, kMatrixA);
  fill_input_host(y.data(), 100, 100, Inputs::uniform, 9, kMatrixA);
  EXPECT_EQ(x, y);
  fill_input_host(y.data(), 100, 100, Inputs::uniform, 9, kMatrixB);
  EXPECT_NE(x, y);
  double sum = 0;
  for (float v : x) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / x.size(), 0.0, 0.03);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], random_input(9, kMatrixA, i));  // as before v4
}

TEST(RandomInputs, WideExponentSpansTwoToThePlusMinus16) {
  std::vector<float> x(20000);
  fill_input_host(x.data(), 100, 200, Inputs::wide_exponent, 3, kMatrixB);
  float lo = 1, hi = 0;
  for (float v : x) {
    ASSERT_TRUE(std::isfinite(v));
    if (v != 0) lo = std::min(lo, std::fabs(v)), hi = std::max(hi, std::fabs(v));
  }
  EXPECT_GT(hi, 8192.0f);       // close to 2^16
  EXPECT_LT(hi, 65536.0f);      // below it
  EXPECT_LT(lo, 1.0f / 65536);  // close to 2^-16 or below (U(-1, 1) itself comes near 0)
}

// exp_spread:phi: (U(0, 1) - 0.5) exp(phi N(0, 1)). Its name round-trips; its spread grows with phi
// as exp(phi N) does (the median of |log|x|| - its median| is phi times 0.674, N's, within 10%); the
// values are made from correctly rounded operations only (the GPU test checks the device's bits).
TEST(RandomInputs, ExpSpreadFollowsTheOzakiPapersDistribution) {
  for (const char* text : {"exp_spread:0.5", "exp_spread:2", "exp_spread:4"}) {
    const std::optional<Inputs> x = parse_inputs_name(text);
    ASSERT_TRUE(x.has_value()) << text;
    EXPECT_EQ(inputs_name(*x), text);
  }
  for (const char* bad : {"exp_spread", "exp_spread:", "exp_spread:0", "exp_spread:-1", "exp_spread:9",
                          "exp_spread:nan", "exp_spread:2x", "exp_spread:inf", "spread:2"})
    EXPECT_FALSE(parse_inputs_name(bad).has_value()) << bad;
  const long rows = 400, cols = 500;
  for (double phi : {0.5, 2.0, 4.0}) {
    std::vector<float> a(rows * cols);
    fill_input_host(a.data(), rows, cols, Inputs::exp_spread(phi), 11, kMatrixA);
    std::vector<double> logs;
    for (float v : a) {
      ASSERT_TRUE(std::isfinite(v));
      if (v != 0) logs.push_back(std::log(std::fabs(double(v))));
    }
    // log|x| = log|U - 0.5| + phi N: the spread of phi N dominates from phi = 2 on; at 0.5 U's share
    // is large, so the check is that the spread grows, and is near phi 0.674 for the larger phi.
    std::nth_element(logs.begin(), logs.begin() + logs.size() / 2, logs.end());
    const double median = logs[logs.size() / 2];
    std::vector<double> dev;
    for (double l : logs) dev.push_back(std::fabs(l - median));
    std::nth_element(dev.begin(), dev.begin() + dev.size() / 2, dev.end());
    const double mad = dev[dev.size() / 2];
    if (phi >= 2) {
      EXPECT_NEAR(mad / (phi * 0.6745), 1.0, 0.15) << "phi " << phi;
    }
    EXPECT_GT(mad, 0.6745 * phi * 0.8) << "phi " << phi;
  }
}

// Badly scaled inputs: one power of two per row of A and per column of B, spread over 2^(-40 ... 40).
TEST(RandomInputs, BadlyScaledScalesRowsOfAAndColumnsOfB) {
  const long rows = 300, cols = 200;
  std::vector<float> a(rows * cols), b(rows * cols);
  fill_input_host(a.data(), rows, cols, Inputs::badly_scaled, 5, kMatrixA);
  fill_input_host(b.data(), rows, cols, Inputs::badly_scaled, 5, kMatrixB);
  auto exponent_bound = [](float v) { return std::ilogb(v); };  // |v| in [2^e, 2^(e + 1))
  float smallest = 1, largest = 0;
  for (long r = 0; r < rows; ++r) {
    int most = -1000;
    for (long c = 0; c < cols; ++c) most = std::max(most, exponent_bound(a[r * cols + c]));
    for (long c = 0; c < cols; ++c) ASSERT_LE(exponent_bound(a[r * cols + c]), most);
    const float scale = std::ldexp(1.0f, most + 1);  // row r's values are U(-1, 1) times it
    for (long c = 0; c < cols; ++c)
      ASSERT_EQ(a[r * cols + c], random_input(5, kMatrixA, r * cols + c) * scale);
    smallest = std::min(smallest, scale), largest = std::max(largest, scale);
  }
  EXPECT_LE(largest, std::ldexp(1.0f, kScaleExponent));
  EXPECT_GT(largest, std::ldexp(1.0f, kScaleExponent - 8));
  EXPECT_GE(smallest, std::ldexp(1.0f, -kScaleExponent));
  EXPECT_LT(smallest, std::ldexp(1.0f, 8 - kScaleExponent));
  for (long r = 0; r < rows; ++r)  // B: a column's scale, the same in every row
    for (long c = 0; c < cols; ++c) {
      const float unit = random_input(5, kMatrixB, r * cols + c), first = random_input(5, kMatrixB, c);
      ASSERT_EQ(b[r * cols + c] * first, b[c] * unit);  // powers of two: exact
    }
}

// The ill-conditioned inputs cancel: every element of C is small against the sum of its terms'
// magnitudes, for even and odd k, and the blocks a rank makes agree with the whole matrix.
TEST(RandomInputs, IllConditionedSumsCancel) {
  for (long k : {64L, 65L, 1000L}) {
    const long m = 7, n = 5;
    std::vector<float> a(m * k), b(k * n);
    fill_input_host(a.data(), m, k, Inputs::ill_conditioned, 11, kMatrixA);
    fill_input_host(b.data(), k, n, Inputs::ill_conditioned, 11, kMatrixB);
    std::vector<double> ref(m * n), sumabs(m * n);
    reference_host(a.data(), b.data(), ref.data(), sumabs.data(), m, n, k);
    double worst = 0;
    for (long i = 0; i < m * n; ++i) worst = std::max(worst, std::fabs(ref[i]) / sumabs[i]);
    EXPECT_LT(worst, 8.0 * kCancelledPart / std::sqrt(double(k / 2))) << "k = " << k;
    EXPECT_GT(worst, 0.0);
    for (long p = 0; p < k; ++p)  // element (3, p) of A from its own place
      ASSERT_EQ(a[3 * k + p], input_value(Inputs::ill_conditioned, 11, kMatrixA, 3, p, m, k));
  }
}

TEST(HostReference, MatchesATripleLoop) {
  const long m = 13, n = 9, k = 21;
  std::vector<float> a(m * k), b(k * n);
  fill_input_host(a.data(), m, k, Inputs::uniform, 1, kMatrixA);
  fill_input_host(b.data(), k, n, Inputs::uniform, 1, kMatrixB);
  std::vector<double> ref(m * n), sumabs(m * n);
  reference_host(a.data(), b.data(), ref.data(), sumabs.data(), m, n, k);
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) {
      double s = 0, t = 0;
      for (long p = 0; p < k; ++p) {
        s += double(a[i * k + p]) * double(b[p * n + j]);
        t += std::fabs(double(a[i * k + p]) * double(b[p * n + j]));
      }
      EXPECT_NEAR(ref[i * n + j], s, 1e-12);
      EXPECT_NEAR(sumabs[i * n + j], t, 1e-12);
    }
}

TEST(Judge, AcceptsRoundingAndRejectsErrorsAndNaN) {
  const std::vector<double> ref = {10.0, -4.0, 2.5}, mag = {20.0, 8.0, 5.0};
  std::vector<float> c = {10.0f, -4.0f, 2.5f};
  Verdict v = judge(compare_host(c.data(), ref.data(), mag.data(), 3), 100);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.max_rel_err, 0.0);

  c[0] = std::nextafter(10.0f, 11.0f);  // one ulp off
  v = judge(compare_host(c.data(), ref.data(), mag.data(), 3), 100);
  EXPECT_TRUE(v.ok) << v.reason;

  c[0] = 10.01f;  // a wrong value
  v = judge(compare_host(c.data(), ref.data(), mag.data(), 3), 100);
  EXPECT_FALSE(v.ok);
  EXPECT_NEAR(v.max_abs_err, 0.01, 1e-6);
  EXPECT_NEAR(v.frac_over_1e3, 1.0 / 3, 1e-12);
  EXPECT_NE(v.reason.find("tolerance"), std::string::npos);

  c[0] = std::numeric_limits<float>::quiet_NaN();  // unwritten (poisoned)
  v = judge(compare_host(c.data(), ref.data(), mag.data(), 3), 100);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("NaN"), std::string::npos);
}

TEST(Judge, ToleranceGrowsWithSqrtK) {
  EXPECT_NEAR(tolerance(1), 4 * 1.1920928955078125e-7, 1e-18);
  EXPECT_NEAR(tolerance(10000), 100 * tolerance(1), 1e-15);
  EXPECT_NEAR(tolerance(100, Precision::tf32), 40.0 / 1024, 1e-15);
}

// Error relative to sum |a b|: recorded for every row (max and mean), the verdict where the inputs
// are not uniform. An element of C that is 1e-3 off where |C| is 1e-3 of its terms' magnitudes
// fails on max |ref| but is a float32-sized error against sum |a b|.
TEST(Judge, SumAbsErrorIsTheVerdictForInputsThatAreNotUniform) {
  const std::vector<double> ref = {1e-3, 2e-3}, mag = {1e4, 1e4};
  const std::vector<float> c = {float(1e-3 + 1e-3), float(2e-3)};
  const ErrorStats e = compare_host(c.data(), ref.data(), mag.data(), 2);
  EXPECT_NEAR(e.max_sumabs_err, 1e-3 / 1e4, 1e-12);
  const Verdict uniform = judge(e, 100, Inputs::uniform);
  EXPECT_FALSE(uniform.ok);
  EXPECT_NE(uniform.reason.find("max_rel_err"), std::string::npos) << uniform.reason;
  const Verdict cancelling = judge(e, 100, Inputs::ill_conditioned);
  EXPECT_TRUE(cancelling.ok) << cancelling.reason;
  EXPECT_NEAR(cancelling.mean_sumabs_err, 0.5e-3 / 1e4, 1e-10);
  // 1e-5 of the magnitudes is TF32-sized: an fp32 variant fails, a tf32 one passes.
  const std::vector<float> tf = {float(1e-3 + 0.1), float(2e-3)};
  const ErrorStats t = compare_host(tf.data(), ref.data(), mag.data(), 2);
  EXPECT_FALSE(judge(t, 100, Inputs::wide_exponent, Precision::fp32).ok);
  const Verdict v = judge(t, 100, Inputs::wide_exponent, Precision::tf32);
  EXPECT_TRUE(v.ok) << v.reason;
  // Every term zero but C is not: infinitely wrong.
  const std::vector<double> zero = {0, 0};
  EXPECT_FALSE(judge(compare_host(tf.data(), ref.data(), zero.data(), 2), 100, Inputs::ill_conditioned).ok);
}

TEST(Judge, MseAndFractionFollowTheHomeworkDefinitions) {
  const std::vector<double> ref = {0, 0, 0, 0}, mag = {1, 1, 1, 1};
  const std::vector<float> c = {0.002f, 0, 0, -0.0005f};
  const Verdict v = judge(compare_host(c.data(), ref.data(), mag.data(), 4), 1);
  EXPECT_NEAR(v.mse, (0.002 * 0.002 + 0.0005 * 0.0005) / 4, 1e-12);
  EXPECT_NEAR(v.frac_over_1e3, 0.25, 1e-12);
  EXPECT_NEAR(v.max_abs_err, 0.002, 1e-9);
}

}  // namespace
}  // namespace mmlab
