// The statistics against independent references: tests/analysis/golden/scipy.txt, made once by
// tests/analysis/scipy_fixtures.py with SciPy (and, where SciPy has no such function, by enumerating
// the permutation distributions), and simulations of the intervals' coverage.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/commands.hpp"
#include "analysis/statistics.hpp"
#include "core/stats.hpp"
#include "tests/analysis/fixture.hpp"

namespace mmlab::analysis {
namespace {

struct Record {
  std::vector<std::string> head;            // the words before the first '|'
  std::vector<std::vector<double>> values;  // each '|'-separated list after it
};

std::vector<Record> records(const std::string& kind) {
  std::ifstream in(std::string(MMLAB_SOURCE_DIR) + "/tests/analysis/golden/scipy.txt");
  std::vector<Record> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream parts(line);
    std::string part;
    Record r;
    for (int i = 0; std::getline(parts, part, '|'); ++i) {
      std::stringstream words(part);
      if (i == 0) {
        for (std::string w; words >> w;) r.head.push_back(w);
      } else {
        r.values.emplace_back();
        for (double v; words >> v;) r.values.back().push_back(v);
      }
    }
    if (!r.head.empty() && r.head[0] == kind) out.push_back(r);
  }
  EXPECT_FALSE(out.empty()) << "no '" << kind << "' records in tests/analysis/golden/scipy.txt";
  return out;
}

// SciPy's exact/asymptotic rule and p-values, including 8 vs 8, 3 vs 10 and 5 vs 30 tie-free
// samples, where exact (0.0499, 0.0490, 0.0482 in the examples) and asymptotic differ.
TEST(Scipy, MannWhitneyTakesScipysMethodAndMatchesItsP) {
  for (const Record& r : records("mannwhitney")) {
    const std::vector<double>& x = r.values[0];
    const std::vector<double>& y = r.values[1];
    const double expected = std::stod(r.head[2]);
    SCOPED_TRACE(r.head[1] + " " + std::to_string(x.size()) + " vs " + std::to_string(y.size()));
    EXPECT_NEAR(mann_whitney(x, y).p, expected, 1e-12 + 1e-9 * expected);
    const Method m = r.head[1] == "exact" ? Method::exact : Method::asymptotic;
    EXPECT_NEAR(mann_whitney(x, y, m).p, expected, 1e-12 + 1e-9 * expected);
  }
}

TEST(Scipy, WilcoxonSignedRankMatchesScipy) {
  for (const Record& r : records("wilcoxon")) {
    const double expected = std::stod(r.head[2]);
    SCOPED_TRACE(r.head[1] + " " + std::to_string(r.values[0].size()) + " differences");
    EXPECT_NEAR(wilcoxon_signed_rank(r.values[0]).p, expected, 1e-12 + 1e-9 * expected);
  }
}

// The row CI of the median: ranks and exact coverage from the binomial, n = 1 ... 60.
TEST(Scipy, MedianIntervalRanksAndCoverage) {
  for (const Record& r : records("median_ci")) {
    const std::size_t n = std::stoul(r.head[1]);
    const MedianRanks ranks = median_ci_ranks(n);
    EXPECT_EQ(ranks.lo, std::stoul(r.head[2])) << n;
    EXPECT_EQ(ranks.hi, std::stoul(r.head[3])) << n;
    EXPECT_NEAR(ranks.coverage, std::stod(r.head[4]), 1e-12) << n;
  }
}

TEST(Scipy, ShiftAndPairedIntervalsMatchTheEnumeratedDistributions) {
  for (const Record& r : records("shift_ci")) {
    const Interval i = shift_interval(r.values[0], r.values[1]);
    EXPECT_NEAR(i.lo, std::stod(r.head[1]), 1e-15);
    EXPECT_NEAR(i.hi, std::stod(r.head[2]), 1e-15);
    EXPECT_NEAR(i.coverage, std::stod(r.head[3]), 1e-12);
  }
  for (const Record& r : records("paired_ci")) {
    const Interval i = paired_interval(r.values[0]);
    EXPECT_NEAR(i.lo, std::stod(r.head[1]), 1e-15);
    EXPECT_NEAR(i.hi, std::stod(r.head[2]), 1e-15);
    EXPECT_NEAR(i.coverage, std::stod(r.head[3]), 1e-12);
  }
  EXPECT_EQ(shift_interval({1, 2, 3}, {4, 5, 6}).coverage, 0.0);  // 3 vs 3 reaches 90%: none
  EXPECT_EQ(paired_interval({1, 2, 3, 4, 5}).coverage, 0.0);      // 5 pairs reach 93.75%: none
}

// compare() of two configurations whose interleaved rounds have the log speed-ups d: trial i of the
// baseline takes exp(d_i), of the other 1.
Table compare_rounds(const std::vector<double>& d, const test::TempDir& dir) {
  std::vector<double> base;
  for (double x : d) base.push_back(std::exp(x));
  std::vector<test::Row> rows = {
      {"cublas", "default", "", 64, 64, 64, "kernel", base},
      {"other", "default", "", 64, 64, 64, "kernel", std::vector<double>(base.size(), 1.0)}};
  for (test::Row& row : rows) row.order = "interleaved", row.interleave_group = "run-0";
  test::write_results(dir / "rounds.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  return compare(load_results({dir / "rounds.csv"}, true), o);
}

// The verdict of paired trials at a 2% margin, through compare().
TEST(Scipy, PairedVerdictsAgainstTheMargin) {
  test::TempDir dir;
  for (const Record& r : records("verdict")) {
    const Table t = compare_rounds(r.values[0], dir);
    ASSERT_EQ(t.rows.size(), 1u);
    const std::string verdict = t.rows[0][7];
    EXPECT_EQ(verdict.substr(0, verdict.find_first_of(" :")), r.head[1]) << verdict;
  }
}

// The runs a claim needs: Student's t at the proposed number of runs (not at the runs at hand), with
// and without 80% power, as SciPy's t.ppf gives them.
TEST(Scipy, RunsNeededTakeStudentsTAtTheProposedRuns) {
  for (const Record& r : records("runs_needed")) {
    const std::vector<double>& logs = r.values[0];
    double mean = 0, ss = 0;
    for (double v : logs) mean += v / double(logs.size());
    for (double v : logs) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / double(logs.size() - 1));
    EXPECT_EQ(runs_to_decide(mean, sd, logs.size(), std::log1p(0.02), 0.95, std::stod(r.head[2]), 1000),
              std::stoul(r.head[1]))
        << "power " << r.head[2] << ", " << logs.size() << " runs";
  }
}

// The trials a claim needs, resampled from the observed rounds (statistics.hpp, trials_to_decide):
// within 1.35x of what an independent implementation's resampling says (NumPy, every Walsh average or
// difference sorted; the smallest N at which half of 400 resampled experiments decide), on one-humped,
// skewed, two-humped and near-margin rounds and the repro rows; paired through compare()'s
// verdict as well.
TEST(Scipy, TrialsNeededMatchResamplingTheObservedRounds) {
  test::TempDir dir;
  const double m = std::log1p(0.02);
  for (const Record& r : records("trials_needed")) {
    const std::vector<double>& d = r.values[0];
    const double resampled = std::stod(r.head[1]), n = trials_to_decide(d, m);
    EXPECT_LT(std::fabs(std::log(n / resampled)), std::log(1.35)) << n << " against " << resampled;
    const std::string verdict = compare_rounds(d, dir).rows[0][7], prefix = "inconclusive: about ";
    ASSERT_EQ(verdict.rfind(prefix, 0), 0u) << verdict;
    const double said = std::stod(verdict.substr(prefix.size()));  // from rounds re-read from a file
    EXPECT_LT(std::fabs(std::log(said / resampled)), std::log(1.35)) << verdict << " against " << resampled;
  }
  for (const Record& r : records("trials_independent")) {
    const double resampled = std::stod(r.head[1]), n = trials_to_decide(r.values[0], r.values[1], m);
    EXPECT_LT(std::fabs(std::log(n / resampled)), std::log(1.35)) << n << " against " << resampled;
  }
}

// Coverage by simulation: the row CI of the median and the paired interval on skewed samples
// (exponential times) cover the true centre about as often as their exact coverage says.
TEST(Simulation, IntervalsCoverAsOftenAsTheySay) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> skewed(1.0);  // median log(2)
  const int experiments = 4000;
  for (std::size_t n : {3, 5, 10, 25}) {
    int covered = 0;
    for (int e = 0; e < experiments; ++e) {
      std::vector<double> x(n);
      for (double& v : x) v = skewed(rng);
      const Stats s = summarize(x);
      covered += s.ci_lo <= std::log(2.0) && std::log(2.0) <= s.ci_hi;
    }
    const double expected = median_ci_ranks(n).coverage,
                 se = std::sqrt(expected * (1 - expected) / experiments);
    EXPECT_NEAR(double(covered) / experiments, expected, 4 * se + 1e-3) << n << " trials";
  }
  // Paired: symmetric noise around a known log speed-up of 0.03.
  std::normal_distribution<double> noise(0.0, 0.02);
  for (std::size_t n : {6, 12, 30}) {
    int covered = 0;
    for (int e = 0; e < experiments; ++e) {
      std::vector<double> d(n);
      for (double& v : d) v = 0.03 + noise(rng);
      const Interval i = paired_interval(d);
      covered += i.lo <= 0.03 && 0.03 <= i.hi;
    }
    const double rate = double(covered) / experiments;
    EXPECT_GT(rate, 0.95 - 4 * std::sqrt(0.95 * 0.05 / experiments)) << n << " pairs";
    EXPECT_LT(rate, 0.995) << n << " pairs";
  }
}

}  // namespace
}  // namespace mmlab::analysis
