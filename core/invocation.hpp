// One way to run an algorithm. An Invocation binds an algorithm to a device description and prepares
// runs: Invocation::prepare resolves a configuration for a problem, checks it (the compiled set, the
// algorithm's supports, the device's limits on its launch), sizes its workspace and takes its state,
// once; the PreparedRun it returns runs it on any operands (CUTLASS's Operation: a configuration
// initialized once, then run with arguments). The harness's pipeline and timers, the flagship
// dispatchers, out_of_core and the distributed engines all run algorithms through it: none keeps a
// check, a resolve memo or a state cache of its own. An engine (an algorithm another one runs) is
// named by one EngineSpec. CUDA-free (core/).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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

// The operands of one run and its workspace (PreparedRun::workspace_bytes(): device memory for GPU
// algorithms, host memory for host ones).
struct Buffers {
  const float* a = nullptr;  // (m, k)
  const float* b = nullptr;  // (k, n)
  float* c = nullptr;        // (m, n), leading dimension ldc
  void* workspace = nullptr;
  long ldc = 0;             // 0: n
  bool accumulate = false;  // C += A B (a run prepared to accumulate; see Invocation::prepare)
};

// c (leading dimension ldc) += t (m x n, dense), or = t without `accumulate`, on `stream`: how a
// prepared run accumulates with an algorithm that writes a dense C. host_add for host algorithms;
// runtime/engine.hpp's device_add for GPU ones (core is CUDA-free).
using AddPartial = void (*)(float* c, long ldc, const float* t, long m, long n, bool accumulate,
                           CUstream_st* stream);
void host_add(float* c, long ldc, const float* t, long m, long n, bool accumulate, CUstream_st* stream);

// A configuration prepared for one problem on one device: its resolved parameters, launch, workspace
// size, model's time and state, or why it cannot run. A value; copies share the resolved parameters.
class PreparedRun {
 public:
  bool ready() const { return !skip_; }
  const Reason& skip() const { return skip_; }  // why it cannot run here (nullopt: it can)
  const Algorithm& algorithm() const { return *a_; }
  const Problem& problem() const { return p_; }
  const Params& params() const { return *params_; }  // resolved
  // The launch configuration where the algorithm states one (GPU and streamed algorithms), once checked.
  const std::optional<LaunchConfig>& launch() const { return launch_; }
  // Bytes of Buffers::workspace a run needs: the algorithm's, and the partial product of a run that
  // accumulates where the algorithm cannot.
  std::size_t workspace_bytes() const { return workspace_ + partial_; }
  double predicted_ms() const { return predicted_ms_; }  // the algorithm's model; NaN: none
  // C = A B (C += A B when io.accumulate) for the problem on `stream` (host algorithms ignore it).
  // An algorithm that does not accumulate writes the product into the workspace's partial, then adds.
  void run(const Buffers& io, CUstream_st* stream) const;
  // The arguments the algorithm's run() receives for io (without the partial product's accumulation),
  // for what reads them after a run (a streamed algorithm's report).
  RunArgs args(const Buffers& io, CUstream_st* stream) const;

 private:
  friend class Invocation;
  const Algorithm* a_ = nullptr;
  const DeviceInfo* d_ = nullptr;
  Problem p_;
  std::shared_ptr<const Params> params_;
  Reason skip_;
  std::optional<LaunchConfig> launch_;
  std::size_t workspace_ = 0, partial_ = 0;
  double predicted_ms_ = 0;
  void* state_ = nullptr;
  AddPartial add_ = nullptr;
};

// An algorithm another one runs (out_of_core's and the distributed algorithms' local products, the
// flagship's pick): "algorithm:variant[:params]", the parameters as canonical() writes them.
struct EngineSpec {
  const Algorithm* algorithm = nullptr;
  Params params;
  std::string text() const;  // as parsed
  // The spec `text` names among `known`; std::invalid_argument naming what is wrong.
  static EngineSpec parse(const std::string& text, const std::vector<const Algorithm*>& known);
};

// The configuration a row's `params` or `resolved` text names, of `a`'s variant `variant`: read by a's
// axes (Params::parse), so a value that is itself a configuration (the flagship's pick) is read whole.
Params read_params(const Algorithm& a, const std::string& variant, const std::string& text);

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
  // `asked` resolved, checked and sized for p, with the algorithm's state from `states` (which
  // outlives the run). With `add`, runs may accumulate or write a C of leading dimension above n
  // (Buffers::accumulate, ldc): an algorithm that cannot is given a partial product in its workspace,
  // added (or copied) into C by `add`.
  PreparedRun prepare(const Problem& p, const Params& asked, StateCache& states, AddPartial add = nullptr) const;

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
