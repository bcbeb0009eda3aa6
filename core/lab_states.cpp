#include "core/lab_states.hpp"

#include <atomic>

namespace mmlab {

namespace {

LabStates& process_states() {
  static LabStates states;
  return states;
}

// Not thread-local: an engine may run on a worker thread of the run (out_of_core's).
std::atomic<LabStates*> g_current{nullptr};

}  // namespace

LabStates& current_lab_states() {
  LabStates* s = g_current.load();
  return s ? *s : process_states();
}

LabScope::LabScope(LabStates& states) : previous_(g_current.exchange(&states)) {}
LabScope::~LabScope() { g_current.store(previous_); }

}  // namespace mmlab
