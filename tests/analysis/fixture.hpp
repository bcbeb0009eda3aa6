// Synthetic result files for the analysis tests (clearly not measurements: device "test GPU").
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/results.hpp"
#include "harness/csv.hpp"

namespace mmlab::analysis::test {

struct Row {
  std::string algorithm, variant = "default", params;
  long m, n, k;
  std::string scope = "kernel";
  std::vector<double> samples;  // ms; the statistics columns are computed from them
  std::string status = "ok";
  std::string block = "16x16x1";
  std::string device = "NVIDIA H100 test GPU";
  double max_abs_err = 1e-5, mse = 1e-12, frac = 0;
};

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("mmlab-analysis-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

// Writes `path` and its samples file in mmlab's layout (plus a column the analysis ignores).
inline void write_results(const std::string& path, const std::vector<Row>& rows, bool with_samples = true) {
  std::ofstream out(path), samples;
  if (with_samples) samples.open(mmlab::samples_path_for(path));
  out << "extra_column";
  for (const auto& c : required_columns()) out << "," << c;
  out << "\n";
  if (with_samples) samples << "run_id,trial,ms\n";
  int id = 0;
  for (const Row& r : rows) {
    const std::string run = "run-" + std::to_string(id++);
    std::vector<double> s = r.samples;
    std::sort(s.begin(), s.end());
    const double n = double(s.size());
    double mean = 0, var = 0;
    for (double v : s) mean += v / n;
    for (double v : s) var += (v - mean) * (v - mean) / (n - 1);
    const double median =
        s.empty() ? 0 : (s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2);
    const std::string bx = r.block.substr(0, r.block.find('x'));
    const std::string rest = r.block.substr(r.block.find('x') + 1);
    const std::string by = rest.substr(0, rest.find('x')), bz = rest.substr(rest.find('x') + 1);
    auto num = [](double v) {
      std::ostringstream os;
      os.precision(10);
      os << v;
      return os.str();
    };
    const bool ok = r.status == "ok";
    out << "x," << run << ",2026-11-21T10:00:00Z,abc123," << r.device << ",132," << r.algorithm << ","
        << r.variant << "," << r.params << "," << bx << "," << by << "," << bz << ",1,1,1,0,0," << r.m << ","
        << r.n << "," << r.k << "," << r.scope << ",0," << (ok ? s.size() : 0) << ","
        << (ok ? num(s.front()) + "," + num(s.back()) + "," + num(mean) + "," + num(std::sqrt(var)) + "," +
                     num(median) + "," + num(s.front()) + "," + num(s.back()) + "," +
                     num(2.0 * r.m * r.n * r.k / (median * 1e6))
               : std::string(",,,,,,,"))
        << "," << r.status << ",," << (ok ? "1" : "0") << ",1e-7," << num(r.max_abs_err) << "," << num(r.mse)
        << "," << num(r.frac) << "\n";
    if (with_samples && ok)
      for (std::size_t t = 0; t < r.samples.size(); ++t)
        samples << run << "," << t << "," << num(r.samples[t]) << "\n";
  }
}

// n samples around `center` ms, deterministic and spread by +-1%.
inline std::vector<double> around(double center, int n = 10) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1.0 + 0.01 * ((i * 7) % 11 - 5) / 5.0));
  return v;
}

}  // namespace mmlab::analysis::test
