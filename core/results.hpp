// Reading mmlab's results: the tidy CSV (one row per configuration) and its raw samples. The lab's one
// reader of results (the analysis, `mmlab-analyze rows`, and through it Python's mmlab.read): every
// older schema upgraded to this one on the way in. Plain C++ (no CUDA): CSV through core/csv.hpp's one parser.
#pragma once

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/schema.hpp"
#include "core/scope.hpp"
#include "core/verification.hpp"

namespace mmlab {

// Bad input (a missing or malformed file, an unknown column, absent data): exit code 2.
struct AnalysisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Result {
  std::string file;
  unsigned line = 0;
  std::map<std::string, std::string> fields;  // every column read, as text
  // Every whole or decimal column's value (kResultColumns' order), read once from that text: none where
  // the cell is empty or the column is not numeric. What number() and `rows --format json` hand on.
  std::array<std::optional<double>, kResultColumnCount> numbers{};
  // The columns the analysis reasons with, read once into their types (core/schema.hpp's choices).
  std::string run_id, device, algorithm, variant, params;
  Scope scope = Scope::kernel;
  Status status = Status::ok;
  Inputs inputs;
  Precision precision = Precision::fp32;  // tf32: a variant that rounds to TF32 on purpose: never a baseline
  bool l2_flush = false;
  long m = 0, n = 0, k = 0;
  std::size_t trials = 0;
  double min_ms = 0, max_ms = 0, mean_ms = 0, std_ms = 0, median_ms = 0, ci_lo_ms = 0, ci_hi_ms = 0,
         gflops = 0;
  std::vector<double> samples;        // ms per launch, when loaded
  std::vector<double> sample_clocks;  // the SM clock (MHz) after each trial, when recorded (schema 5)
  std::string order;                  // sequential or interleaved (sequential before schema 5)
  std::string interleave_group;       // shared by the configurations timed round-robin with it
  long slow_trials = 0;               // trials below 95% of the run's reference clock
  // How the trials were timed (core/scope.hpp: blocked, blocked_graph, events, graph, host; filled in
  // for files before schema 7; none where nothing was timed), and the host's time to enqueue a trial's
  // work: the row's median and each trial's, per launch (schema 7, GPU rows; 0 and empty otherwise).
  std::optional<Timer> timer;
  double host_ms = 0;
  std::vector<double> sample_host;
  std::vector<double> sample_energy;  // each trial's energy, J, all the job's GPUs (schema 8, where NVML said)

  bool ok() const { return status == Status::ok; }
  bool has_ci() const { return !fields.at("ci_lo_ms").empty(); }  // empty below 3 trials (schema 5)
  bool fp32() const { return precision == Precision::fp32; }
  bool uniform() const { return inputs == Inputs::uniform; }
  bool square() const { return m == n && n == k; }
  // A row of an MPI job: a process grid, or more than one rank (cuBLASMp's 1D matmul rows have no grid).
  bool distributed() const;
  std::string configuration()
      const;                  // "algorithm variant params" (variant "default" and empty params omitted)
  std::string dims() const;   // "4096" when square, else "1041x1247x139"
  std::string shape() const;  // dims, and "/ill_conditioned" (say) where the inputs are not uniform
  std::string block() const;  // "16x16" (x by y; z when not 1), "" when not recorded
  // The problem as the analysis groups rows: shape (with the inputs), scope and L2 setting,
  // "1041x1247x139/ill_conditioned|kernel|off".
  std::string problem() const;
  // A column by name; AnalysisError naming the column and the valid ones when unknown.
  const std::string& get(const std::string& column) const;
  const std::string& get(Col column) const { return get(std::string(column_name(column))); }
  // A numeric column's value as read (numbers); `absent` where the cell is empty or the column is not one
  // of the results' numeric columns.
  double number(const std::string& column, double absent = std::numeric_limits<double>::quiet_NaN()) const;
  double number(Col column, double absent = std::numeric_limits<double>::quiet_NaN()) const {
    return numbers[static_cast<std::size_t>(column)].value_or(absent);
  }
};

// "algorithm:variant" of an engine spec ("flagship:tensor_cores:kernel=tf32x3:half3;..." ->
// "flagship:tensor_cores"): the engine, whatever the dispatcher picked for a shape.
std::string engine_name(const std::string& spec);

// The columns the analysis reads; mmlab writes them all.
const std::vector<std::string>& required_columns();

// The rows of one run: "latest" keeps, per configuration, shape, scope and L2 setting, the last row
// recorded (a re-run supersedes, a resumed run completes); "all" keeps every row; any other value
// is a run (the `run` field: run_id without its index, one mmlab invocation).
std::vector<Result> select_run(const std::vector<Result>& rows, const std::string& run);

// What to do with an ok row whose samples do not match it (none, a trial missing or extra, a count
// other than its `trials`): stop with an error naming the file and line, or leave the row out and say
// why on stderr.
enum class BadSamples { error, leave_out };

// Reads the result files (rows in file order; each run_id once in a file). With `samples`, also each
// file's sibling <name>.samples.csv: each ok row's trials joined by run_id, in trial order, each
// trial once and as many as the row says.
std::vector<Result> load_results(const std::vector<std::string>& files, bool samples,
                                 BadSamples bad = BadSamples::error);

// The analysis (analysis/) reads results through this reader, by these names.
namespace analysis {
using mmlab::AnalysisError;
using mmlab::BadSamples;
using mmlab::engine_name;
using mmlab::load_results;
using mmlab::required_columns;
using mmlab::Result;
using mmlab::select_run;
}  // namespace analysis

}  // namespace mmlab
