// Executes a run plan: per problem, make inputs and the float64 reference once; per
// configuration, check it can run, prepare its buffers, verify it, time it, and append its row.
// The parts: workbench.hpp (inputs and reference), pipeline.cpp (one configuration, in phases),
// record.hpp (its CSV row), resume.cpp, progress.hpp, runner.cpp (the plan).
#pragma once

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/options.hpp"
#include "harness/stats.hpp"
#include "harness/workbench.hpp"

namespace mmlab {

enum class Status { ok, skipped, failed, interrupted };
const char* status_name(Status s);

struct Outcome {
  Status status = Status::ok;
  std::string reason;
  Params resolved;  // what ran (the algorithm's resolve(), or the parameters as given)
  LaunchConfig launch;
  bool launch_known = false;     // false: the algorithm does not say (e.g. a library call)
  std::size_t device_bytes = 0;  // A, B, C and the workspace this configuration used
  std::optional<Verdict> verdict;
  std::vector<double> samples;  // ms per launch, in trial order
  Stats stats;
};

// Runs one configuration. Without `timing`, it is only checked and verified (the GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          AlgorithmStates& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr);

// --resume: the keys of the configurations already recorded in the plan's output (and the samples
// of unfinished ones dropped from its samples file).
std::set<std::string> recorded_keys(const RunPlan& plan);

// The whole plan; returns the exit status (0, 1 when a configuration failed, 130 interrupted).
int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted);

}  // namespace mmlab
