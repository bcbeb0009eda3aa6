// Timing with CUDA events (GPU algorithms) or the steady clock (host algorithms).
#include <chrono>

#include "runtime/cuda_check.hpp"
#include "runtime/timing.hpp"

namespace mmlab {

namespace {

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

class DeviceTimer final : public TrialTimer {
 public:
  explicit DeviceTimer(const DeviceTiming& t) : t_(t) {
    if (t_.scope == Scope::batched) capture_graph();
  }
  ~DeviceTimer() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  void untimed() override {
    if (exec_)
      MMLAB_CHECK(cudaGraphLaunch(exec_, t_.args.stream));
    else
      launch();
    MMLAB_CHECK(cudaStreamSynchronize(t_.args.stream));
  }

  double trial_ms() override {
    cudaStream_t s = t_.args.stream;
    if (t_.l2_flush) MMLAB_CHECK(cudaMemsetAsync(t_.l2_flush, 0, t_.l2_flush_bytes, s));
    const Problem& p = t_.args.problem;
    MMLAB_CHECK(cudaEventRecord(start_.get(), s));
    switch (t_.scope) {
      case Scope::kernel: launch(); break;
      case Scope::batched: MMLAB_CHECK(cudaGraphLaunch(exec_, s)); break;
      case Scope::end_to_end:
        MMLAB_CHECK(cudaMemcpyAsync(const_cast<float*>(t_.args.a), t_.host_a, sizeof(float) * p.m * p.k,
                                    cudaMemcpyHostToDevice, s));
        MMLAB_CHECK(cudaMemcpyAsync(const_cast<float*>(t_.args.b), t_.host_b, sizeof(float) * p.k * p.n,
                                    cudaMemcpyHostToDevice, s));
        launch();
        MMLAB_CHECK(
            cudaMemcpyAsync(t_.host_c, t_.args.c, sizeof(float) * p.m * p.n, cudaMemcpyDeviceToHost, s));
        break;
    }
    MMLAB_CHECK(cudaEventRecord(stop_.get(), s));
    MMLAB_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    MMLAB_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return t_.scope == Scope::batched ? double(ms) / t_.repeats : double(ms);
  }

 private:
  void launch() { t_.algorithm->run(t_.args); }

  void capture_graph() {
    cudaStream_t s = t_.args.stream;
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
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

class HostTimer final : public TrialTimer {
 public:
  HostTimer(const Algorithm* a, const RunArgs& args) : a_(a), args_(args) {}
  void untimed() override { a_->run(args_); }
  double trial_ms() override {
    const auto t0 = std::chrono::steady_clock::now();
    a_->run(args_);
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

 private:
  const Algorithm* a_;
  RunArgs args_;
};

}  // namespace

std::unique_ptr<TrialTimer> make_device_timer(const DeviceTiming& t) {
  return std::make_unique<DeviceTimer>(t);
}

std::unique_ptr<TrialTimer> make_host_timer(const Algorithm* a, const RunArgs& args) {
  return std::make_unique<HostTimer>(a, args);
}

}  // namespace mmlab
