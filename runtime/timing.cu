// Timing with CUDA events behind a blocking kernel (GPU algorithms) or the steady clock (host
// algorithms); timing.hpp tells the method.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/timing.hpp"

namespace mmlab {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Holds its stream until the host sets release[0], or until `timeout_ns` of the global timer have
// passed; then it says which (timed_out[0] = 1) in host-mapped memory. One thread: it must not keep
// the work queued behind it from the SMs once it returns, and it reads the flag over the bus, so it
// naps between reads.
__global__ void block_stream(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns) {
  unsigned long long t0, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (!*release) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - t0 > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
    __nanosleep(500);
  }
}

// How many of c's entries are no longer NaN (the poison), into *changed.
__global__ void count_changed(const float* __restrict__ c, std::size_t count, unsigned long long* changed) {
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    mine += !isnan(c[i]);
  if (mine) atomicAdd(changed, mine);
}

class Event {
 public:
  Event() { MMLAB_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

}  // namespace

StreamGate::StreamGate(double timeout_s) : timeout_ns_((unsigned long long)(timeout_s * 1e9)) {
  void* host = nullptr;
  MMLAB_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  flags_ = static_cast<int*>(host);
  void* device = nullptr;
  MMLAB_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flags_ = static_cast<int*>(device);
}

StreamGate::~StreamGate() { cudaFreeHost(const_cast<int*>(flags_)); }

void StreamGate::hold(CUstream_st* s) {
  flags_[0] = 0, flags_[1] = 0;
  block_stream<<<1, 1, 0, s>>>(device_flags_, device_flags_ + 1, timeout_ns_);
  MMLAB_CHECK_LAUNCH();
}

void StreamGate::release() { flags_[0] = 1; }
bool StreamGate::timed_out() const { return flags_[1] != 0; }
double StreamGate::timeout_ms() const { return double(timeout_ns_) * 1e-6; }

namespace {

// Releases the stream however the enqueueing ends (a run() that throws must not leave it held).
class Held {
 public:
  Held(StreamGate* b, cudaStream_t s) : b_(b) {
    if (b_) b_->hold(s);
  }
  ~Held() { release(); }
  void release() {
    if (b_) b_->release();
    b_ = nullptr;
  }

 private:
  StreamGate* b_;
};

class DeviceTimer final : public TrialTimer {
 public:
  explicit DeviceTimer(const DeviceTiming& t) : t_(t), blocker_(t.block_timeout_s), blocking_(t.blocking) {
    if (t_.scope == Scope::batched) capture_graph();
  }
  ~DeviceTimer() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  void untimed() override { trial(); }

  TrialTime trial() override {
    // A timeout the host did not cause (it released the stream in time: the GPU was held elsewhere)
    // is retried; one it caused (run() returned only after the timeout) ends the blocking.
    for (int attempt = 0;; ++attempt) {
      const bool blocked = blocking_;
      const TrialTime t = once(blocked);
      if (!blocked || !blocker_.timed_out()) return t;
      const double enqueue_ms = t.host_ms * (t_.scope == Scope::batched ? t_.repeats : 1);
      const bool host_late = enqueue_ms >= blocker_.timeout_ms();
      if (!host_late && attempt < 2) continue;
      blocking_ = false;
      char why[320];
      std::snprintf(why, sizeof why,
                    host_late ? "timed with events on an idle stream, the host's enqueue time included: run() "
                                "took %.0f ms to return behind the blocking kernel (timeout %.0f ms): it waits "
                                "for the GPU inside, or enqueues more than the launch queue holds"
                              : "timed with events on an idle stream, the host's enqueue time included: the "
                                "blocking kernel timed out three times (after %.0f ms of enqueueing; timeout "
                                "%.0f ms): the GPU was held by other work",
                    enqueue_ms, blocker_.timeout_ms());
      reason_ = why;
    }
  }

  Timer timer() const override {
    if (t_.scope == Scope::batched) return blocking_ ? Timer::blocked_graph : Timer::graph;
    return blocking_ ? Timer::blocked : Timer::events;
  }
  std::string unblocked_reason() const override { return reason_; }

 private:
  // One trial: the L2 flush, the start event, the work and the stop event, behind the blocking
  // kernel when `blocked`; the host's time to enqueue the work measured around it.
  TrialTime once(bool blocked) {
    cudaStream_t s = t_.stream;
    Held held(blocked ? &blocker_ : nullptr, s);
    if (t_.l2_flush) MMLAB_CHECK(cudaMemsetAsync(t_.l2_flush, 0, t_.l2_flush_bytes, s));
    MMLAB_CHECK(cudaEventRecord(start_.get(), s));
    const auto t0 = Clock::now();
    enqueue_work(s);
    const double host = ms_since(t0);
    MMLAB_CHECK(cudaEventRecord(stop_.get(), s));
    if (t_.after_stop) t_.after_stop();
    held.release();
    MMLAB_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    MMLAB_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    const double per = t_.scope == Scope::batched ? double(t_.repeats) : 1.0;
    return {double(ms) / per, host / per};
  }

  void enqueue_work(cudaStream_t s) {
    const Problem& p = t_.run->problem();
    switch (t_.scope) {
      case Scope::kernel: launch(); break;
      case Scope::batched: MMLAB_CHECK(cudaGraphLaunch(exec_, s)); break;
      case Scope::end_to_end:
        MMLAB_CHECK(cudaMemcpyAsync(const_cast<float*>(t_.io.a), t_.host_a, sizeof(float) * p.m * p.k,
                                    cudaMemcpyHostToDevice, s));
        MMLAB_CHECK(cudaMemcpyAsync(const_cast<float*>(t_.io.b), t_.host_b, sizeof(float) * p.k * p.n,
                                    cudaMemcpyHostToDevice, s));
        launch();
        MMLAB_CHECK(
            cudaMemcpyAsync(t_.host_c, t_.io.c, sizeof(float) * p.m * p.n, cudaMemcpyDeviceToHost, s));
        break;
    }
  }

  void launch() { t_.run->run(t_.io, t_.stream); }

  void capture_graph() {
    cudaStream_t s = t_.stream;
    MMLAB_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      for (int r = 0; r < t_.repeats; ++r) launch();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(s, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    MMLAB_CHECK(cudaStreamEndCapture(s, &graph_));
    MMLAB_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  DeviceTiming t_;
  Event start_, stop_;
  StreamGate blocker_;
  bool blocking_;
  std::string reason_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

class HostTimer final : public TrialTimer {
 public:
  HostTimer(const PreparedRun* run, const Buffers& io, CUstream_st* stream) : run_(run), io_(io), stream_(stream) {}
  void untimed() override { run_->run(io_, stream_); }
  TrialTime trial() override {
    const auto t0 = Clock::now();
    run_->run(io_, stream_);
    return {ms_since(t0), -1};
  }
  Timer timer() const override { return Timer::host; }

 private:
  const PreparedRun* run_;
  Buffers io_;
  CUstream_st* stream_;
};

}  // namespace

std::unique_ptr<TrialTimer> make_device_timer(const DeviceTiming& t) {
  return std::make_unique<DeviceTimer>(t);
}

std::unique_ptr<TrialTimer> make_host_timer(const PreparedRun* run, const Buffers& io, CUstream_st* stream) {
  return std::make_unique<HostTimer>(run, io, stream);
}

StreamAudit audit_stream(const std::function<void()>& enqueue, float* c, std::size_t count, CUstream_st* stream) {
  Buffer changed(sizeof(unsigned long long), Buffer::Kind::device);
  StreamGate blocker(kDefaultBlockTimeoutSeconds);
  // A check that itself met the timeout (its stream may share a hardware queue with the held one:
  // CUDA maps streams onto a few queues) says nothing: tried again, on a new stream, at most thrice.
  for (int attempt = 0;; ++attempt) {
    poison_device(c, count, stream);
    MMLAB_CHECK(cudaStreamSynchronize(stream));
    cudaStream_t check = nullptr;  // non-blocking: it waits for neither the held stream nor the legacy one
    MMLAB_CHECK(cudaStreamCreateWithFlags(&check, cudaStreamNonBlocking));
    // Loaded before the stream is held: a kernel's first launch loads its module (CUDA's lazy
    // loading), which waits for the GPU's work, the blocking kernel's too (a first audit did).
    count_changed<<<1, 32, 0, check>>>(c, 0, changed.as<unsigned long long>());
    MMLAB_CHECK_LAUNCH();
    MMLAB_CHECK(cudaStreamSynchronize(check));
    // C's entries no longer NaN, read on the check stream.
    const auto written = [&] {
      MMLAB_CHECK(cudaMemsetAsync(changed.get(), 0, sizeof(unsigned long long), check));
      count_changed<<<264, 256, 0, check>>>(c, count, changed.as<unsigned long long>());
      MMLAB_CHECK_LAUNCH();
      unsigned long long n = 0;
      MMLAB_CHECK(cudaMemcpyAsync(&n, changed.get(), sizeof n, cudaMemcpyDeviceToHost, check));
      MMLAB_CHECK(cudaStreamSynchronize(check));
      return n;
    };
    StreamAudit out;
    bool check_waited = false;
    {
      Held held(&blocker, stream);
      try {
        enqueue();
      } catch (...) {
        held.release();
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(check);
        throw;
      }
      if (blocker.timed_out()) {  // it waited for the GPU inside: the timer's own rule judges it
        out.waited = true;
      } else {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kStreamAuditSettleMs));
        out.changed = written();
        check_waited = blocker.timed_out();  // the held stream was let go before C was read
      }
    }
    MMLAB_CHECK(cudaStreamSynchronize(stream));
    if (!out.waited && !check_waited && out.changed == 0)  // the stream finished: C must be whole
      out.unfinished = count - written();
    MMLAB_CHECK(cudaDeviceSynchronize());  // work it left elsewhere ends here, not in a trial
    MMLAB_CHECK(cudaStreamDestroy(check));
    if (!check_waited) return out;
    if (attempt == 2) return StreamAudit{true, 0};  // no verdict
  }
}

double median_call_ms(const std::function<void()>& enqueue, CUstream_st* stream, int calls, double batch_ms) {
  const Event from, to;
  StreamGate blocker(kDefaultBlockTimeoutSeconds);
  bool blocking = false;  // the warm-up, unblocked: a first launch may load its module and wait
  const auto batch = [&](int n) {
    for (;;) {
      Held held(blocking ? &blocker : nullptr, stream);
      MMLAB_CHECK(cudaEventRecord(from.get(), stream));
      for (int i = 0; i < n; ++i) enqueue();
      MMLAB_CHECK(cudaEventRecord(to.get(), stream));
      held.release();
      MMLAB_CHECK(cudaEventSynchronize(to.get()));
      if (blocking && blocker.timed_out()) {  // the work waited inside: timed unblocked from here
        blocking = false;
        continue;
      }
      float ms = 0;
      MMLAB_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
      return double(ms) / n;
    }
  };
  const double first = batch(1);
  blocking = true;
  const int n = calls > 0 ? calls : int(std::clamp(batch_ms / std::max(first, 1e-3), 1.0, 64.0));
  double t[3] = {batch(n), batch(n), batch(n)};
  std::sort(t, t + 3);
  return t[1];
}

}  // namespace mmlab
