// One configuration, in phases: check (can it run here?), prepare (buffers), verify (once, against
// float64, output poisoned first), time (warm-up, then trials). Timing takes one configuration at
// a time (order sequential), or all configurations of a problem round-robin, each round in a
// shuffled order (order interleaved), so that drift in clocks or temperature lands on every side
// of a comparison alike and trial i of each can be paired. pipeline.cpp runs on one GPU or the
// host; distributed_pipeline.cpp on every rank of the job, sequentially.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/invocation.hpp"
#include "harness/options.hpp"
#include "harness/outcome.hpp"
#include "harness/workbench.hpp"
#include "runtime/clocks.hpp"

namespace mmlab {

class TrialTimer;
class OutputAudit;

// A configuration checked, prepared and verified: its outcome so far, and what its trials need.
class Prepared {
 public:
  Prepared(const Configuration& cfg, Outcome outcome);
  ~Prepared();
  const Configuration& configuration() const { return cfg_; }
  Outcome& outcome() { return outcome_; }
  bool ready() const { return timer_ != nullptr; }  // verified, and can be timed
  // Why it was skipped, when that was free device memory (a group holding others' buffers may retry).
  bool short_of_memory = false;
  void warmup();
  double trial(ClockMonitor* clocks);  // one timed trial (ms); the clock sampled after it goes to the outcome
  // The statistics of the trials so far; a GPU configuration whose timed trials did not compute what
  // was verified (runtime/audit.hpp) becomes `failed` here, without a time.
  void finish();

 private:
  friend std::unique_ptr<Prepared> prepare(Workbench&, const Configuration&, const DeviceInfo&,
                                           StateCache&, const TimingOptions&);
  Configuration cfg_;
  Outcome outcome_;
  Buffer workspace_;
  std::unique_ptr<TrialTimer> timer_;
  std::unique_ptr<OutputAudit> audit_;  // device algorithms: each trial's C against the verified one
  double peak_gflops_ = 0;              // GPU rows: the device's ceiling for the row's precision (0: none)
  CUstream_st* stream_ = nullptr;
  PreparedRun run_;  // the configuration resolved, checked and sized (core/invocation.hpp)
  Buffers io_;
  std::vector<StreamedReport> reports_;  // a streamed algorithm's, one per trial
};

// Check, prepare and verify one single-process configuration (distributed ones: run_distributed).
std::unique_ptr<Prepared> prepare(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                                  StateCache& states, const TimingOptions& timing);

// Warm-up, then trials of one configuration until its stop rule. False: interrupted.
bool time_alone(Prepared& p, const TimingOptions& timing, const std::atomic<bool>* interrupted,
                ClockMonitor* clocks);
// Every configuration warmed up, then rounds: each configuration not yet stopped takes one trial,
// in an order shuffled every round (from `seed`). Trial i of each is round i. False: interrupted.
bool time_interleaved(const std::vector<Prepared*>& group, const TimingOptions& timing,
                      const std::atomic<bool>* interrupted, ClockMonitor* clocks, std::uint64_t seed);

// Check, prepare, verify and (with `timing`) time one configuration alone: a single-process one
// through the above, a distributed one on every rank. Without `timing` it is only verified (the
// GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          StateCache& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr, ClockMonitor* clocks = nullptr);

// A distributed configuration, already checked (every rank calls it): verify, time, model.
// Each trial's clock: the slowest rank's SM clock (GPU engines, with `clocks`).
Outcome run_distributed(const Configuration& cfg, const DeviceInfo& device, const TimingOptions* timing,
                        const std::atomic<bool>* interrupted, unsigned long long seed, Outcome checked,
                        ClockMonitor* clocks = nullptr);

// The trial loop of one configuration: `warmup` untimed runs, then `trial`s until the stopping rule
// says stop, the time limit of adaptive trials passes, or an interrupt arrives (false: the samples
// are incomplete). `collective`: every rank of the job runs the loop, and the interrupt and time
// checks are agreed over ranks, so all stop at the same trial.
bool run_trials(const std::function<void()>& warmup, const std::function<double()>& trial,
                const TimingOptions& timing, const std::atomic<bool>* interrupted, bool collective,
                std::vector<double>& samples);

}  // namespace mmlab
