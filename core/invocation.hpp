// One way to run an algorithm. An Invocation binds an algorithm to a device description and does what
// every caller needs before a run: resolve the configuration, check it (the compiled set, the
// algorithm's supports, the device's limits on its launch), size its workspace, and run it with its
// state. The harness's pipeline uses it for every configuration, and so do the algorithms that run
// other algorithms (the flagship dispatchers, out_of_core's worker, the distributed engines): none
// keeps a check or a state cache of its own. CUDA-free (core/).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "core/algorithm.hpp"

namespace mmlab {

// The algorithms' states (make_state: library handles, tensor maps), one per algorithm and GPU, made
// on first use on the GPU current then. The one cache of them: a run's harness holds one, and each
// algorithm that runs others keeps one as its own state. Thread-safe.
class StateCache {
 public:
  void* get(const Algorithm& a, int device = -1);

 private:
  std::mutex lock_;
  std::map<std::pair<const Algorithm*, int>, std::shared_ptr<void>> states_;
};

// What every GPU algorithm must fit, from its launch configuration: threads per block, shared memory
// per block, grid dimensions. nullopt when it fits.
Reason launch_limits(const LaunchConfig& lc, const DeviceInfo& d);

// `variant` with every axis that applies to it at its default: a configuration nobody tuned.
Params default_params(const Algorithm& a, const std::string& variant);

// `d` outlives the invocation (the harness's device, a run's RunArgs::device).
class Invocation {
 public:
  Invocation(const Algorithm& a, const DeviceInfo& d)
      : a_(&a), d_(&d), resolved_(a.resolve ? std::make_shared<Resolved>() : nullptr) {}
  const Algorithm& algorithm() const { return *a_; }
  const DeviceInfo& device() const { return *d_; }

  // The configuration as the algorithm runs it for p (its resolve(), or as given); a dispatcher's
  // choice is made once per problem and configuration, then remembered.
  Params resolve(const Problem& p, const Params& asked) const;
  // Why the resolved configuration cannot run here, or nullopt: a point no kernel was compiled for,
  // the algorithm's own supports(), and for GPU algorithms the device's launch limits. `launch`
  // receives the launch configuration where the algorithm states one.
  Reason check(const Problem& p, const Params& resolved, LaunchConfig* launch = nullptr) const;
  std::size_t workspace(const Problem& p, const Params& resolved) const { return a_->workspace(p, resolved); }
  // Runs `args` (problem, operands, resolved params, workspace, stream) with the algorithm's state from
  // `states` and this device.
  void run(RunArgs args, StateCache& states) const;

 private:
  const Algorithm* a_;
  const DeviceInfo* d_;
  struct Resolved {  // for an algorithm that resolves: its choice per problem and configuration
    std::mutex lock;
    std::map<std::tuple<long, long, long, std::string, std::string>, Params> of;
  };
  std::shared_ptr<Resolved> resolved_;
};

}  // namespace mmlab
