// Synthetic result files for the analysis tests (clearly not measurements: device "test GPU").
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/results.hpp"
#include "core/csv.hpp"
#include "core/schema.hpp"

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
  std::string run = "run";  // run_id = run-<index>
  std::string l2_flush = "off";
  std::string inputs = "uniform";
  double max_sumabs_err = 2e-8;
  std::string order = "";             // "", sequential or interleaved (schema 5)
  std::string interleave_group = "";  // shared by rows whose trials were interleaved
  std::vector<double> clocks = {};    // MHz per trial; empty: no clock column values
  int slow_trials = 0;
  std::vector<double> host = {};  // the host's ms per trial (schema 7); empty: none recorded
  std::string timer = "blocked";  // how the trials were timed (schema 7)
  std::map<std::string, std::string> fields = {};  // other columns (a distributed row's grid, engine, ...)
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

// Writes `path` and its samples file in mmlab's layout (plus a column the analysis ignores): the
// current schema (`version` 0), version 6 (no timer or host_ms) or version 1 (no schema, resolved or
// cuda_driver columns; l2_flush 0/1).
inline void write_results(const std::string& path, const std::vector<Row>& rows, bool with_samples = true,
                          int version = 0) {
  const bool version1 = version == 1, before7 = version != 0;
  std::ofstream out(path), samples;
  if (with_samples) samples.open(mmlab::samples_path_for(path));
  const std::vector<std::string> columns = version ? mmlab::result_columns_of(version) : mmlab::result_columns();
  out << "extra_column";
  for (const auto& c : columns) out << "," << c;
  out << "\n";
  if (with_samples)
    samples << (version1 ? "run_id,trial,ms\n" : before7 ? "run_id,trial,ms,clock_mhz\n" : "run_id,trial,ms,clock_mhz,host_ms\n");
  int id = 0;
  for (const Row& r : rows) {
    const std::string run = r.run + "-" + std::to_string(id++);
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
    std::map<std::string, std::string> f = {
        {"schema", version ? std::to_string(version) : std::string(mmlab::kSchemaVersion)},
        {"run_id", run},
        {"timestamp", "2026-11-21T10:00:00Z"},
        {"git_revision", "abc123"},
        {"device", r.device},
        {"sm_count", "132"},
        {"algorithm", r.algorithm},
        {"variant", r.variant},
        {"params", r.params},
        {"resolved", r.params},
        {"block_x", bx},
        {"block_y", by},
        {"block_z", bz},
        {"grid_x", "1"},
        {"grid_y", "1"},
        {"grid_z", "1"},
        {"shared_bytes", "0"},
        {"device_bytes", "0"},
        {"m", std::to_string(r.m)},
        {"n", std::to_string(r.n)},
        {"k", std::to_string(r.k)},
        {"inputs", r.inputs},
        {"precision", r.variant == "tf32" ? "tf32" : "fp32"},
        {"scope", r.scope},
        {"l2_flush", version1 ? (r.l2_flush == "on" ? "1" : "0") : r.l2_flush},
        {"trials", std::to_string(ok ? s.size() : 0)},
        {"status", r.status},
        {"verified", ok ? "1" : ""},
        {"max_rel_err", "1e-7"},
        {"max_abs_err", num(r.max_abs_err)},
        {"mse", num(r.mse)},
        {"frac_err_over_1e-3", num(r.frac)},
        {"max_sumabs_err", ok ? num(r.max_sumabs_err) : ""},
        {"mean_sumabs_err", ok ? num(r.max_sumabs_err / 4) : ""},
        {"order", ok ? (r.order.empty() ? "sequential" : r.order) : ""},
        {"interleave_group", r.interleave_group},
        {"slow_trials", r.clocks.empty() ? "" : std::to_string(r.slow_trials)}};
    if (ok) {
      f["min_ms"] = num(s.front()), f["max_ms"] = num(s.back()), f["mean_ms"] = num(mean);
      f["std_ms"] = num(std::sqrt(var)), f["median_ms"] = num(median), f["ci_lo_ms"] = num(s.front());
      f["ci_hi_ms"] = num(s.back()), f["gflops"] = num(2.0 * r.m * r.n * r.k / (median * 1e6));
      f["timer"] = r.timer;
      if (!r.host.empty()) {
        std::vector<double> h = r.host;
        std::sort(h.begin(), h.end());
        f["host_ms"] = num(h[h.size() / 2]);
      }
    }
    for (const auto& [column, value] : r.fields) f[column] = value;
    out << "x";
    for (const auto& c : columns) out << "," << mmlab::csv_escape(f[c]);
    out << "\n";
    if (with_samples && ok)
      for (std::size_t t = 0; t < r.samples.size(); ++t)
        samples << run << "," << t << "," << num(r.samples[t])
                << (version1 ? "" : "," + (t < r.clocks.size() ? num(r.clocks[t]) : std::string()))
                << (before7 ? "" : "," + (t < r.host.size() ? num(r.host[t]) : std::string())) << "\n";
  }
}

// n samples around `center` ms, deterministic and spread by +-1%.
inline std::vector<double> around(double center, int n = 10) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1.0 + 0.01 * ((i * 7) % 11 - 5) / 5.0));
  return v;
}

}  // namespace mmlab::analysis::test
