// Trial timing. A timer owns what one configuration needs to be timed (events, a captured graph)
// and returns milliseconds per launch for each trial.
#pragma once

#include <memory>

#include "core/algorithm.hpp"
#include "core/scope.hpp"

namespace mmlab {

class TrialTimer {
 public:
  virtual ~TrialTimer() = default;
  virtual void untimed() = 0;     // a warm-up launch
  virtual double trial_ms() = 0;  // one timed trial: ms per launch
};

struct DeviceTiming {
  const Algorithm* algorithm = nullptr;
  RunArgs args;  // device buffers and the stream to use
  Scope scope = Scope::kernel;
  int repeats = 1;           // launches per trial in the batched scope
  void* l2_flush = nullptr;  // overwritten before each trial when not null
  std::size_t l2_flush_bytes = 0;
  const float* host_a = nullptr;  // end_to_end: pinned host copies to copy in
  const float* host_b = nullptr;
  float* host_c = nullptr;  // and the pinned host output to copy back to
};

std::unique_ptr<TrialTimer> make_device_timer(const DeviceTiming& t);
std::unique_ptr<TrialTimer> make_host_timer(const Algorithm* algorithm, const RunArgs& args);

}  // namespace mmlab
