// Trial timing. A timer owns what one configuration needs to be timed (events, a captured graph, the
// blocking kernel's flags) and returns, for each trial, the GPU's milliseconds per launch and the
// host's own milliseconds to enqueue the work.
//
// On the GPU a trial is timed behind a blocking kernel (nvbench's method): a one-thread kernel spins
// on a flag in host-mapped memory while the L2 flush, the start event, run() and the stop event are
// enqueued behind it; then the host sets the flag. The interval holds the GPU's work only, however
// long the host took to enqueue it; that time is measured on its own (host_ms). The spin gives up
// after `block_timeout_s`: a run() that waits for the GPU inside (it would wait for the blocking
// kernel) or enqueues more than the launch queue holds is found out that way, and the configuration
// is timed from then on with events on an idle stream (Timer::events), the row saying why.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/algorithm.hpp"
#include "core/invocation.hpp"
#include "core/scope.hpp"

namespace mmlab {

struct TrialTime {
  double ms = 0;        // the GPU's time per launch (the host's steady clock for host timers)
  double host_ms = -1;  // the host's time to enqueue the work, per launch; < 0: not measured
};

class TrialTimer {
 public:
  virtual ~TrialTimer() = default;
  virtual void untimed() = 0;       // a warm-up launch (timed as a trial is, the result dropped)
  virtual TrialTime trial() = 0;    // one timed trial
  virtual Timer timer() const = 0;  // how the trials so far were timed (the last one's way)
  // Why a GPU trial was not timed behind the blocking kernel ("" when it was).
  virtual std::string unblocked_reason() const { return {}; }
};

inline constexpr double kDefaultBlockTimeoutSeconds = 1.0;

// The blocking kernel itself, for a timer of its own (the distributed trials hold every rank's streams
// until all ranks have enqueued their work): its two flags in pinned host memory, read and written by
// the GPU through the bus. hold() enqueues it; it spins until release(), or gives up after the
// timeout and says so (timed_out(), read once the work behind it has completed).
class StreamGate {
 public:
  explicit StreamGate(double timeout_s);
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  void hold(CUstream_st* s);
  void release();
  bool timed_out() const;
  double timeout_ms() const;

 private:
  unsigned long long timeout_ns_;
  volatile int* flags_ = nullptr;  // [0] release (host -> GPU), [1] timed out (GPU -> host)
  int* device_flags_ = nullptr;
};

struct DeviceTiming {
  const PreparedRun* run = nullptr;  // outlives the timer
  Buffers io;                        // device buffers
  CUstream_st* stream = nullptr;     // the stream to run on
  Scope scope = Scope::kernel;
  int repeats = 1;           // launches per trial in the batched scope
  void* l2_flush = nullptr;  // overwritten before each trial when not null
  std::size_t l2_flush_bytes = 0;
  const float* host_a = nullptr;  // end_to_end: pinned host copies to copy in
  const float* host_b = nullptr;
  float* host_c = nullptr;  // and the pinned host output to copy back to
  double block_timeout_s = kDefaultBlockTimeoutSeconds;  // the blocking kernel gives up after this
  bool blocking = true;  // false: events on an idle stream from the start (Timer::events / graph)
  // Enqueued on the stream right behind each trial's stop event, before the blocking kernel lets it
  // go (the harness's audit of C): work that reaches the stream after the call returned (another
  // thread's) lands behind it.
  std::function<void()> after_stop;
};

std::unique_ptr<TrialTimer> make_device_timer(const DeviceTiming& t);

// A quick time for a choice, not a trial (the flagship's measured choice): what one `enqueue` takes
// on `stream`, after one call as a warm-up: the median of three batches of `calls` calls each, or,
// with calls = 0, of as many as last about `batch_ms` (1 to 64). Each batch is enqueued behind the
// blocking kernel, so the events time the GPU's work back to back: enqueued as it ran, a batch of
// 5-8 us kernels timed the host's launches instead (7.33 and 7.35 us for two kernels whose trials
// took 7.9 and 6.9 us, issue #46). Work that waits inside is timed unblocked. Synchronizes the stream.
double median_call_ms(const std::function<void()>& enqueue, CUstream_st* stream, int calls = 1,
                      double batch_ms = 0.5);
// The stream audit (issue #60): a configuration's work must be on the stream it is given, or wait for
// it. C (count floats on the device) is poisoned, `stream` held by the blocking kernel, `enqueue` (its
// run() on `stream`) called; kStreamAuditSettleMs after it returns, C is read from a stream of its own:
// an entry that is no longer NaN was written by work that ran while the given stream was held (on
// another stream, the legacy or per-thread default stream, or by a host thread). Fork-join work that
// waits on `stream` writes nothing yet and passes. A run() that waits for the GPU inside meets the
// blocking kernel's timeout: `waited`, and no verdict (the timer's own rule times it unblocked); so
// does a check that met the timeout itself three times (its stream sharing the held one's queue).
// Then, once the given stream has finished (the blocking kernel let go), every entry of C must be
// written: `unfinished` counts those still NaN, work that the stream did not wait for (another
// stream's, queued behind the held one on a hardware queue the two share, so the first check could
// not see it).
// The wait, by arithmetic, not measured: a product on an idle GPU writes its first tiles after one
// tile's k-loop (a 128 x 128 tile at k = 32768 is 1.1 GFLOP, about 2 ms on one H100 SM at its FP32
// peak of 0.5 TFLOP/s); 20 ms covers that and the launch, and a sweep pays it once per configuration.
inline constexpr double kStreamAuditSettleMs = 20;
struct StreamAudit {
  bool waited = false;              // run() waited for the GPU inside: no verdict
  unsigned long long changed = 0;  // entries of C written while the stream was held
  unsigned long long unfinished = 0;  // entries of C still NaN once the stream had finished
};
StreamAudit audit_stream(const std::function<void()>& enqueue, float* c, std::size_t count, CUstream_st* stream);
// Host and streamed algorithms: the steady clock around run(io, stream).
std::unique_ptr<TrialTimer> make_host_timer(const PreparedRun* run, const Buffers& io, CUstream_st* stream);

}  // namespace mmlab
