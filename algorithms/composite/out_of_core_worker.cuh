// out_of_core's streaming pipeline (algorithms/composite/out_of_core.cu is the algorithm: its plan, its
// checks and its run): on each GPU three streams (copies in, products, copies out), two buffers of
// each kind and the events that order them; a tile product runs on the engine (a lab algorithm) into
// a tile that a kernel adds into its C panel. Each operation is timed by events, read after the run.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "algorithms/launch/common.cuh"
#include "algorithms/models/out_of_core_plan.hpp"
#include "core/invocation.hpp"
#include "runtime/gpu.hpp"

namespace mmlab::out_of_core {


// The lab algorithm and variant each engine multiplies a tile with.
struct EngineAlgorithm {
  const Algorithm& algorithm;
  const char* variant;
};

// The engine's workspace for one tile product, its configuration resolved as the harness would.
std::size_t engine_workspace(const EngineAlgorithm& e, const Problem& tile, const DeviceInfo& d) {
  const Invocation engine(e.algorithm, d);
  return engine.workspace(tile, engine.resolve(tile, default_params(e.algorithm, e.variant)));
}

// C(r, c0 + j) = (or +=) T(r, j): the tile product added into its panel.
__global__ void add_tile(const float* __restrict__ t, float* __restrict__ panel, long ld, int rows, int cols,
                         bool accumulate) {
  const long count = long(rows) * cols;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    float* c = panel + (e / cols) * ld + e % cols;
    *c = accumulate ? *c + t[e] : t[e];
  }
}

// What one run measured, summed on one GPU; the state keeps each GPU's rates for the model.
struct Totals {
  double compute_ms = 0, copy_ms = 0;
};

// The per-run state: the engines' states (per GPU), measured rates per (GPU, plan, engine), the last report.
struct State {
  StateCache engines;
  std::map<std::string, StreamRates> rates;
  StreamedReport last;
};

// Events timing each operation of a run, read once it is over.
class Stopwatch {
 public:
  ~Stopwatch() {
    for (auto& [a, b] : pairs_) cudaEventDestroy(a), cudaEventDestroy(b);
  }
  std::size_t start(cudaStream_t s) {
    if (used_ == pairs_.size()) {
      cudaEvent_t a, b;
      MMLAB_CHECK(cudaEventCreate(&a));
      MMLAB_CHECK(cudaEventCreate(&b));
      pairs_.push_back({a, b});
    }
    MMLAB_CHECK(cudaEventRecord(pairs_[used_].first, s));
    return used_++;
  }
  void stop(std::size_t i, cudaStream_t s) { MMLAB_CHECK(cudaEventRecord(pairs_[i].second, s)); }
  double total_ms(const std::vector<std::size_t>& which) const {
    double sum = 0;
    for (std::size_t i : which) {
      float ms = 0;
      MMLAB_CHECK(cudaEventElapsedTime(&ms, pairs_[i].first, pairs_[i].second));
      sum += ms;
    }
    return sum;
  }

 private:
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> pairs_;
  std::size_t used_ = 0;
};

// One GPU's share: its panels (every gpus-th), its streams, buffers and events.
class Worker {
 public:
  Worker(const RunArgs& r, const StreamPlan& plan, int device, State& state, EngineAlgorithm engine)
      : r_(r), p_(r.problem), s_(plan), device_(device), gpu_(with_ordinal(*r.device, device)), state_(state),
        engine_(engine), invocation_(engine.algorithm, gpu_), asked_(default_params(engine.algorithm, engine.variant)) {
    MMLAB_CHECK(cudaSetDevice(device));
    for (cudaStream_t* s : {&in_, &compute_, &out_}) MMLAB_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    for (auto* set : {&a_ready_, &a_free_, &b_ready_, &b_free_, &c_done_, &c_free_})
      for (cudaEvent_t& e : *set) MMLAB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const std::size_t f = sizeof(float);
    for (int i = 0; i < 2; ++i) {
      MMLAB_CHECK(cudaMalloc(&c_[i], f * s_.rows * s_.cols));
      MMLAB_CHECK(cudaMalloc(&a_[i], f * s_.rows * s_.depth));
      MMLAB_CHECK(cudaMalloc(&b_[i], f * s_.depth * s_.tile));
    }
    MMLAB_CHECK(cudaMalloc(&t_, f * s_.rows * s_.tile));
    std::size_t ws = 0;  // the largest any tile shape needs (edges may pick other kernels)
    for (long rows : {s_.rows, p_.m % s_.rows})
      for (long cols : {s_.tile, p_.n % s_.cols % s_.tile, s_.cols % s_.tile})
        for (long depth : {s_.depth, p_.k % s_.depth})
          if (rows && cols && depth) ws = std::max(ws, engine_workspace(engine_, {rows, cols, depth, p_.inputs}, gpu_));
    if (ws) MMLAB_CHECK(cudaMalloc(&workspace_, ws));
  }
  ~Worker() {
    cudaSetDevice(device_);
    for (float* b : {c_[0], c_[1], a_[0], a_[1], b_[0], b_[1], t_}) cudaFree(b);
    cudaFree(workspace_);
    for (auto* set : {&a_ready_, &a_free_, &b_ready_, &b_free_, &c_done_, &c_free_})
      for (cudaEvent_t e : *set) cudaEventDestroy(e);
    for (cudaStream_t s : {in_, compute_, out_}) cudaStreamDestroy(s);
  }

  // Panels first, first + step, ...; returns when their C is in host memory.
  Totals run(long first, long step) {
    MMLAB_CHECK(cudaSetDevice(device_));
    const long across = (p_.n + s_.cols - 1) / s_.cols, panels = (p_.m + s_.rows - 1) / s_.rows * across;
    for (long i = first, n = 0; i < panels; i += step, ++n) panel(i / across * s_.rows, i % across * s_.cols, n % 2);
    for (cudaStream_t s : {in_, compute_, out_}) MMLAB_CHECK(cudaStreamSynchronize(s));
    return {watch_.total_ms(products_), watch_.total_ms(copies_)};
  }

  // The model's rates on this GPU: one full tile product, one A slice in and one panel out, timed.
  StreamRates measure() {
    MMLAB_CHECK(cudaSetDevice(device_));
    const long rows = std::min(s_.rows, p_.m), cols = std::min(s_.cols, p_.n), depth = std::min(s_.depth, p_.k),
               tile = std::min(s_.tile, p_.n);
    Stopwatch w;  // each alone, the fastest of three
    std::vector<std::size_t> in, product, out;
    for (int i = 0; i < 3; ++i) {
      in.push_back(w.start(in_));
      copy_in(a_[0], r_.a, p_.k, 0, rows, depth);
      w.stop(in.back(), in_);
      MMLAB_CHECK(cudaStreamSynchronize(in_));
      product.push_back(w.start(compute_));
      multiply(0, 0, rows, tile, depth, 0, false);
      w.stop(product.back(), compute_);
      MMLAB_CHECK(cudaStreamSynchronize(compute_));
      out.push_back(w.start(out_));
      MMLAB_CHECK(cudaMemcpy2DAsync(r_.c, sizeof(float) * p_.n, c_[0], sizeof(float) * cols, sizeof(float) * cols,
                                    rows, cudaMemcpyDeviceToHost, out_));
      w.stop(out.back(), out_);
      MMLAB_CHECK(cudaStreamSynchronize(out_));
    }
    const auto fastest = [&](const std::vector<std::size_t>& v) {
      double best = 1e300;
      for (std::size_t i : v) best = std::min(best, w.total_ms({i}));
      return best;
    };
    StreamRates r;
    r.in_gbs = 4e-6 * double(rows) * depth / fastest(in);
    r.gflops = 2e-6 * double(rows) * tile * depth / fastest(product);
    r.out_gbs = 4e-6 * double(rows) * cols / fastest(out);
    return r;
  }

 private:
  // Rows x cols of a row-major host matrix (leading dimension ld) from (row0, col0) into dense device rows.
  void copy_in(float* to, const float* from, long ld, long offset, long rows, long cols) {
    MMLAB_CHECK(cudaMemcpy2DAsync(to, sizeof(float) * cols, from + offset, sizeof(float) * ld, sizeof(float) * cols,
                                  rows, cudaMemcpyHostToDevice, in_));
  }

  // T = A slice (rows x depth) * B tile (depth x cols), added into panel slot `c` at column `at`.
  void multiply(int a, int b, long rows, long cols, long depth, long at, bool accumulate, int c = 0,
                long panel_cols = 0) {
    const Problem tile{rows, cols, depth, p_.inputs};
    const Params q = invocation_.resolve(tile, asked_);
    RunArgs e = r_;
    e.a = a_[a], e.b = b_[b], e.c = t_, e.problem = tile, e.params = &q;
    e.workspace = workspace_, e.stream = compute_;
    invocation_.run(e, state_.engines);
    add_tile<<<unsigned(std::min<long>(ceil_div(rows * cols, 256), 1024)), 256, 0, compute_>>>(
        t_, c_[c] + at, panel_cols ? panel_cols : cols, int(rows), int(cols), accumulate);
    MMLAB_CHECK_LAUNCH();
  }

  // One C panel: for each k step its A slice in, then each B tile in and multiplied; then out.
  void panel(long row0, long col0, int c) {
    const long rows = std::min(s_.rows, p_.m - row0), width = std::min(s_.cols, p_.n - col0);
    MMLAB_CHECK(cudaStreamWaitEvent(compute_, c_free_[c]));  // its last copy out is done
    for (long k0 = 0; k0 < p_.k; k0 += s_.depth) {
      const long depth = std::min(s_.depth, p_.k - k0);
      const int a = int(a_used_++ % 2);
      MMLAB_CHECK(cudaStreamWaitEvent(in_, a_free_[a]));
      const std::size_t ca = watch_.start(in_);
      copy_in(a_[a], r_.a, p_.k, row0 * p_.k + k0, rows, depth);
      watch_.stop(ca, in_), copies_.push_back(ca);
      MMLAB_CHECK(cudaEventRecord(a_ready_[a], in_));
      MMLAB_CHECK(cudaStreamWaitEvent(compute_, a_ready_[a]));
      for (long j = 0; j < width; j += s_.tile) {
        const long cols = std::min(s_.tile, width - j);
        const int b = int(b_used_++ % 2);
        MMLAB_CHECK(cudaStreamWaitEvent(in_, b_free_[b]));
        const std::size_t cb = watch_.start(in_);
        copy_in(b_[b], r_.b, p_.n, k0 * p_.n + col0 + j, depth, cols);
        watch_.stop(cb, in_), copies_.push_back(cb);
        MMLAB_CHECK(cudaEventRecord(b_ready_[b], in_));
        MMLAB_CHECK(cudaStreamWaitEvent(compute_, b_ready_[b]));
        const std::size_t m = watch_.start(compute_);
        multiply(a, b, rows, cols, depth, j, k0 > 0, c, width);
        watch_.stop(m, compute_), products_.push_back(m);
        MMLAB_CHECK(cudaEventRecord(b_free_[b], compute_));
      }
      MMLAB_CHECK(cudaEventRecord(a_free_[a], compute_));
    }
    MMLAB_CHECK(cudaEventRecord(c_done_[c], compute_));
    MMLAB_CHECK(cudaStreamWaitEvent(out_, c_done_[c]));
    const std::size_t co = watch_.start(out_);
    MMLAB_CHECK(cudaMemcpy2DAsync(r_.c + row0 * p_.n + col0, sizeof(float) * p_.n, c_[c], sizeof(float) * width,
                                  sizeof(float) * width, rows, cudaMemcpyDeviceToHost, out_));
    watch_.stop(co, out_), copies_.push_back(co);
    MMLAB_CHECK(cudaEventRecord(c_free_[c], out_));
  }

  // This worker's GPU as the engine sees it (the run's device description, this GPU's ordinal).
  static DeviceInfo with_ordinal(DeviceInfo d, int ordinal) {
    d.ordinal = ordinal;
    return d;
  }

  RunArgs r_;
  Problem p_;
  StreamPlan s_;
  int device_;
  DeviceInfo gpu_;
  State& state_;
  EngineAlgorithm engine_;
  Invocation invocation_;  // the engine on gpu_: its choice per tile shape, checked and run
  Params asked_;
  cudaStream_t in_ = nullptr, compute_ = nullptr, out_ = nullptr;
  cudaEvent_t a_ready_[2], a_free_[2], b_ready_[2], b_free_[2], c_done_[2], c_free_[2];
  float *c_[2] = {}, *a_[2] = {}, *b_[2] = {}, *t_ = nullptr;
  void* workspace_ = nullptr;
  unsigned long a_used_ = 0, b_used_ = 0;
  Stopwatch watch_;
  std::vector<std::size_t> products_, copies_;
};

// Host memory the copies can overlap: pinned already, or registered for the run.
class Pinned {
 public:
  Pinned(const void* p, std::size_t bytes) {
    cudaPointerAttributes at{};
    if (cudaPointerGetAttributes(&at, p) == cudaSuccess && at.type != cudaMemoryTypeUnregistered) return;
    cudaGetLastError();  // a pointer CUDA does not know is not an error here
    MMLAB_CHECK(cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterPortable));
    registered_ = const_cast<void*>(p);
  }
  ~Pinned() {
    if (registered_) cudaHostUnregister(registered_);
  }

 private:
  void* registered_ = nullptr;
};

}  // namespace mmlab::out_of_core
