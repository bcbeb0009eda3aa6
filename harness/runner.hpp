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
#include "core/stats.hpp"
#include "harness/workbench.hpp"

namespace mmlab {

enum class Status { ok, skipped, failed, interrupted };
const char* status_name(Status s);

// What a distributed configuration adds to its row (medians over the trials; per trial, the
// slowest rank's time and each phase's maximum over ranks).
struct DistributedOutcome {
  int ranks = 1, gpus = 0;
  std::string grid, engine;
  double compute_ms = 0, comm_ms = 0, wait_ms = 0;
  double overlap = 0;  // the share of the communication hidden behind the products
  double predicted_ms = 0, link_gbs = 0, local_gflops = 0;
  double verified_entries = 0;  // entries of C checked against float64 (all of them, or a sample)
};

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
  std::optional<DistributedOutcome> distributed;
};

// Runs one configuration. Without `timing`, it is only checked and verified (the GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          AlgorithmStates& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr);

// A distributed configuration (every rank calls it; harness/distributed_pipeline.cpp): verify, time, model.
Outcome run_distributed(const Configuration& cfg, const DeviceInfo& device, const TimingOptions* timing,
                        const std::atomic<bool>* interrupted, unsigned long long seed, Outcome checked);

// --resume: the keys of the configurations already recorded in the plan's output (and the samples
// of unfinished ones dropped from its samples file).
std::set<std::string> recorded_keys(const RunPlan& plan);

// The whole plan; returns the exit status (0, 1 when a configuration failed, 130 interrupted).
int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted);

}  // namespace mmlab
