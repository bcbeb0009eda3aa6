// How a trial is timed (the `scope` axis of a sweep and column of a row), and the L2 setting's names.
#pragma once

#include <iterator>
#include <string>

#include "core/columns.hpp"
#include "core/params.hpp"

namespace mmlab {

enum class Scope {
  kernel,      // one launch per trial, event-timed
  batched,     // a CUDA graph of `repeats` launches per trial; time / repeats
  end_to_end,  // copy A and B in, launch, copy C out (as the 2013 paper timed)
};

// The `scope` column's values (core/columns.hpp), in the order of the enum.
inline const char* scope_name(Scope s) { return kScopeValues[static_cast<int>(s)]; }
static_assert(std::size(kScopeValues) == static_cast<std::size_t>(Scope::end_to_end) + 1, "a name for each scope");

inline Scope parse_scope(const std::string& text) {  // throws UsageError
  for (Scope s : {Scope::kernel, Scope::batched, Scope::end_to_end})
    if (text == scope_name(s)) return s;
  std::string valid;  // the column's values, as written once (core/columns.hpp)
  for (const char* v : kScopeValues) valid += (valid.empty() ? "" : ", ") + std::string(v);
  throw UsageError("scope: unknown value '" + text + "' (valid: " + valid + ")");
}

inline const char* l2_flush_name(bool on) { return kL2FlushValues[on ? 1 : 0]; }  // as the CLI and the CSV say it

// How a row's trials were timed (its `timer` column). On the GPU the interval of a trial is held to
// the GPU's own work: a blocking kernel holds the stream while the start event, the work and the stop
// event are enqueued, then the host releases it (nvbench's method), so the host's launch latency
// stays outside. Where that cannot be done (run() waits for the GPU inside, or enqueues past the
// blocking kernel's timeout) the trial falls back to events on an idle stream, host time included.
enum class Timer {
  blocked,        // events behind a blocking kernel: the GPU's time only (kernel, end_to_end scopes)
  blocked_graph,  // the batched scope's graph launched behind a blocking kernel, time / repeats
  events,         // events on an idle stream: the host's enqueue time is inside the interval
  graph,          // the batched scope's graph on an idle stream (the graph launch's latency inside)
  host,           // the host's steady clock: host algorithms, streamed and distributed ones
};

// The `timer` column's values (core/columns.hpp), in the order of the enum.
inline const char* timer_name(Timer t) { return kTimerValues[static_cast<int>(t)]; }
static_assert(std::size(kTimerValues) == static_cast<std::size_t>(Timer::host) + 1, "a name for each timer");

inline constexpr Timer kAllTimers[] = {Timer::blocked, Timer::blocked_graph, Timer::events, Timer::graph,
                                       Timer::host};

}  // namespace mmlab
