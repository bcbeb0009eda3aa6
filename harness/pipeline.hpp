// One configuration, in phases: check (can it run here?), prepare (buffers), verify (once, against
// float64, output poisoned first), time (warm-up, then trials). pipeline.cpp runs it on one GPU or
// the host; distributed_pipeline.cpp on every rank of the job. Both share the trial loop.
#pragma once

#include <atomic>
#include <functional>

#include "harness/options.hpp"
#include "harness/outcome.hpp"
#include "harness/workbench.hpp"

namespace mmlab {

// Runs one configuration. Without `timing`, it is only checked and verified (the GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          AlgorithmStates& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr);

// A distributed configuration, already checked (every rank calls it): verify, time, model.
Outcome run_distributed(const Configuration& cfg, const DeviceInfo& device, const TimingOptions* timing,
                        const std::atomic<bool>* interrupted, unsigned long long seed, Outcome checked);

// The trial loop both pipelines share: `warmup` untimed runs, then `trial`s until the stopping
// rule says stop, the time limit of adaptive trials passes, or an interrupt arrives (false: the
// samples are incomplete). `collective`: every rank of the job runs the loop, and the interrupt
// and time checks are agreed over ranks, so all stop at the same trial.
bool run_trials(const std::function<void()>& warmup, const std::function<double()>& trial,
                const TimingOptions& timing, const std::atomic<bool>* interrupted, bool collective,
                std::vector<double>& samples);

}  // namespace mmlab
