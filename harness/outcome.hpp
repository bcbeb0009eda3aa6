// What one configuration came to: its status, what ran, its verdict and samples. The pipelines
// (pipeline.hpp) make it; the row (record.hpp), the progress line and the runner read it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/schema.hpp"
#include "core/scope.hpp"
#include "core/stats.hpp"
#include "core/verification.hpp"
#include "runtime/clocks.hpp"

namespace mmlab {

// What a distributed configuration adds to its row (medians over the trials; per trial, the
// slowest rank's time and each phase's maximum over ranks), or a streamed one (one rank; its
// products and copies; the grid left empty).
struct DistributedOutcome {
  int ranks = 1, gpus = 0;
  std::string grid;
  std::string engine;  // what ran the local products: a full engine spec (distributed rows)
  double compute_ms = 0, comm_ms = 0, wait_ms = 0;
  double layout_ms = 0;  // the part of comm_ms that moved A, B and C between the starting layout and the schedule's
  double overlap = 0;    // the share of the communication hidden behind the products
  double predicted_ms = 0, link_gbs = 0, local_gflops = 0;
  // The least time the decomposition allows here: its model at the local rate, the link bandwidth
  // of 1 GiB messages and the per-message latency measured in the same job (0: none).
  double bound_ms = 0;
  double latency_ms = 0;
  double verified_entries = 0;  // entries of C checked against float64 (all of them, or a sample)
  bool phases = true;           // false: a streamed library call that reports no phases or model
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
  // The host's time to enqueue each trial's work, per launch (GPU rows; empty where not measured),
  // how the trials were timed (core/scope.hpp) and, where the GPU's time could not be held apart from
  // the host's, why.
  std::vector<double> host_samples;
  std::optional<Timer> timer;
  std::string timer_note;
  // The timed trials on inputs of their own (issue #81: the `trial_inputs` column), or on the
  // verification's; unknown where nothing was timed.
  std::optional<bool> own_inputs;
  Stats stats;
  // The clock sampled after each trial (GPU rows; empty otherwise), the monitor's source and the
  // run's reference clock when the row was made.
  std::vector<ClockSample> clocks;
  std::string clock_source;
  double reference_mhz = 0;
  // sequential, or interleaved with the other configurations of `interleave_group` (trial i of each
  // ran in round i).
  bool interleaved = false;
  std::string interleave_group;
  std::optional<DistributedOutcome> distributed;
  double predicted_ms = 0;  // the algorithm's own model of this configuration (predict_ms), 0: none
};

}  // namespace mmlab
