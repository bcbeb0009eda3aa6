// out_of_core's streaming pipeline (algorithms/composite/out_of_core.cu is the algorithm: its plan, its
// checks and its run): on each GPU three streams (copies in, products, copies out), two buffers of
// each kind and the events that order them; a tile product runs on the engine (a lab algorithm) into
// its C panel in place where the engine accumulates (else into a tile that a kernel adds in). Each
// operation is timed by events, read after the run.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/launch/common.cuh"
#include "algorithms/models/out_of_core_plan.hpp"
#include "core/invocation.hpp"
#include "runtime/engine.hpp"
#include "runtime/gpu.hpp"

namespace mmlab::out_of_core {


// The engine's workspace for one tile product, its configuration resolved as the harness would (what
// the plan counts; a worker's engine adds its partial product where the plan has a tile to add in).
inline std::size_t engine_workspace(const EngineSpec& e, const Problem& tile, const DeviceInfo& d) {
  const Invocation engine(*e.algorithm, d);
  return engine.workspace(tile, engine.resolve(tile, e.params));
}

// Rows x cols floats between a matrix of leading dimension `ld_from` and one of `ld_to`, on `s`: one
// copy of contiguous memory when both are dense rows of the same length.
inline void copy_rows(float* to, long ld_to, const float* from, long ld_from, long rows, long cols,
                      cudaMemcpyKind kind, cudaStream_t s) {
  const std::size_t f = sizeof(float);
  if (ld_to == cols && ld_from == cols)
    MMLAB_CHECK(cudaMemcpyAsync(to, from, f * rows * cols, kind, s));
  else
    MMLAB_CHECK(cudaMemcpy2DAsync(to, f * ld_to, from, f * ld_from, f * cols, rows, kind, s));
}

// What one run measured on one GPU: the products' summed time, the copies' (the span of time in
// which any copy ran: in and out overlap), and the bytes they moved.
struct Totals {
  double compute_ms = 0, copy_ms = 0, bytes = 0;
};

// The per-run state: the engines' states (per GPU), the calibrated rates per (GPU, engine), the last report.
struct State {
  StateCache engines;
  StreamedReport last;
};

// Events timing each operation of a run, read once it is over, each as an interval from the run's start.
class Stopwatch {
 public:
  struct Interval {
    double from = 0, to = 0;
  };
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
  cudaEvent_t started() const { return pairs_[0].first; }  // the first event recorded
  Interval interval(std::size_t i) const {  // from the first event recorded
    float from = 0, to = 0;
    MMLAB_CHECK(cudaEventElapsedTime(&from, pairs_[0].first, pairs_[i].first));
    MMLAB_CHECK(cudaEventElapsedTime(&to, pairs_[0].first, pairs_[i].second));
    return {from, to};
  }
  double total_ms(const std::vector<std::size_t>& which) const {
    double sum = 0;
    for (std::size_t i : which) {
      const Interval t = interval(i);
      sum += t.to - t.from;
    }
    return sum;
  }
  double span_ms(const std::vector<std::size_t>& which) const {  // the time in which any of them ran
    std::vector<Interval> v;
    for (std::size_t i : which) v.push_back(interval(i));
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.from < b.from; });
    double sum = 0, end = -1e300;
    for (const Interval& t : v) sum += std::max(0.0, t.to - std::max(t.from, end)), end = std::max(end, t.to);
    return sum;
  }

 private:
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> pairs_;
  std::size_t used_ = 0;
};

// One GPU's share: its panels (every gpus-th), its streams, buffers and events.
class Worker {
 public:
  Worker(const RunArgs& r, const StreamPlan& plan, int device, State& state, const EngineSpec& engine)
      : r_(r), p_(r.problem), s_(plan), device_(device), gpu_(with_ordinal(*r.device, device)),
        engine_(engine, gpu_, state.engines, !plan.in_place) {
    MMLAB_CHECK(cudaSetDevice(device));
    for (cudaStream_t* s : {&in_, &compute_, &out_}) MMLAB_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    for (auto* set : {&a_ready_, &a_free_, &b_ready_, &b_free_, &c_free_})
      for (cudaEvent_t& e : *set) MMLAB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    MMLAB_CHECK(cudaEventCreateWithFlags(&tile_done_, cudaEventDisableTiming));
    const std::size_t f = sizeof(float);
    for (int i = 0; i < 2; ++i) {
      MMLAB_CHECK(cudaMalloc(&c_[i], f * s_.rows * s_.cols));
      MMLAB_CHECK(cudaMalloc(&a_[i], f * s_.rows * s_.depth));
      MMLAB_CHECK(cudaMalloc(&b_[i], f * s_.depth * s_.tile));
    }
    std::size_t ws = 0;  // the largest any tile shape needs (edges may pick other kernels)
    for (long rows : {s_.rows, p_.m % s_.rows})
      for (long cols : {s_.tile, p_.n % s_.cols % s_.tile, s_.cols % s_.tile})
        for (long depth : {s_.depth, p_.k % s_.depth, s_.ramp, std::min(s_.depth, p_.k) - s_.ramp})
          if (rows && cols && depth) ws = std::max(ws, engine_.workspace_bytes({rows, cols, depth, p_.inputs}));
    if (ws) MMLAB_CHECK(cudaMalloc(&workspace_, ws));
  }
  ~Worker() {
    cudaSetDevice(device_);
    for (float* b : {c_[0], c_[1], a_[0], a_[1], b_[0], b_[1]}) cudaFree(b);
    cudaFree(workspace_);
    for (auto* set : {&a_ready_, &a_free_, &b_ready_, &b_free_, &c_free_})
      for (cudaEvent_t e : *set) cudaEventDestroy(e);
    cudaEventDestroy(tile_done_);
    for (cudaStream_t s : {in_, compute_, out_}) cudaStreamDestroy(s);
  }

  // Panels first, first + step, ...; returns when their C is in host memory. Each panel's k steps
  // in order (the first panel's first step split at the plan's ramp, so the first product starts
  // after a shallower A slice and B tile); the next step's A slice comes in in pieces between this
  // step's B tiles, once the products that read its buffer last are done.
  Totals run(long first, long step) {
    MMLAB_CHECK(cudaSetDevice(device_));
    const long across = (p_.n + s_.cols - 1) / s_.cols, panels = (p_.m + s_.rows - 1) / s_.rows * across;
    std::vector<Step> steps;
    for (long i = first, n = 0; i < panels; i += step, ++n)
      for (const auto& [k0, depth] : k_steps(s_, p_.k, n == 0))
        steps.push_back({i / across * s_.rows, i % across * s_.cols, k0, depth, int(n % 2)});
    watch_.start(in_);  // the run's start: every interval is read from it
    load_a(steps[0], 0, 0, 1);
    for (std::size_t i = 0; i < steps.size(); ++i)
      multiply_step(steps[i], int(i % 2), i + 1 < steps.size() ? &steps[i + 1] : nullptr);
    for (cudaStream_t s : {in_, compute_, out_}) MMLAB_CHECK(cudaStreamSynchronize(s));
    std::vector<std::size_t> copies = ins_;
    copies.insert(copies.end(), outs_.begin(), outs_.end());
    return {watch_.total_ms(products_), watch_.span_ms(copies), bytes_};
  }

  // Each operation of the last run as "kind,start_ms,end_ms" from the run's start (kind: in, product, out).
  std::string timeline() const {
    std::string out;
    for (const auto& [kind, which] : {std::pair{"in", &ins_}, {"product", &products_}, {"out", &outs_}})
      for (std::size_t i : *which) {
        const Stopwatch::Interval t = watch_.interval(i);
        out += std::string(kind) + "," + std::to_string(t.from) + "," + std::to_string(t.to) + "\n";
      }
    return out;
  }

 private:
  void copy_in(float* to, const float* from, long ld, long offset, long rows, long cols) {
    const std::size_t i = watch_.start(in_);
    copy_rows(to, cols, from + offset, ld, rows, cols, cudaMemcpyHostToDevice, in_);
    watch_.stop(i, in_), ins_.push_back(i), bytes_ += 4.0 * rows * cols;
  }

  // A slice (rows x depth) times B tile (depth x cols) into panel slot `c` at column `at` (leading
  // dimension `width`), added in after the panel's first step: in place by an engine that
  // accumulates, else through the engine's partial product (where the plan is not one product a panel).
  void multiply(int a, int b, long rows, long cols, long depth, long at, bool accumulate, int c, long width) {
    Buffers io;
    io.a = a_[a], io.b = b_[b], io.c = c_[c] + at, io.ldc = width, io.accumulate = accumulate;
    io.workspace = workspace_;
    engine_.run({rows, cols, depth, p_.inputs}, io, compute_);
  }

  // A C panel's k step: C(row0.., col0..) (+)= A(row0.., k0..k0 + depth) B(k0.., col0..) in panel slot c.
  struct Step {
    long row0, col0, k0, depth;
    int c;
  };

  // Piece `piece` of `pieces` (by rows) of a step's A slice into buffer a: the first waits until the
  // products that read the buffer last are done, the last says the slice is ready.
  void load_a(const Step& s, int a, long piece, long pieces) {
    const long rows = std::min(s_.rows, p_.m - s.row0), from = rows * piece / pieces, to = rows * (piece + 1) / pieces;
    if (piece == 0) MMLAB_CHECK(cudaStreamWaitEvent(in_, a_free_[a]));
    if (to > from) copy_in(a_[a] + from * s.depth, r_.a, p_.k, (s.row0 + from) * p_.k + s.k0, to - from, s.depth);
    if (piece == pieces - 1) MMLAB_CHECK(cudaEventRecord(a_ready_[a], in_));
  }

  // A step's B tiles in (each followed by a piece of the next step's A slice) and multiplied by its A
  // slice (buffer a); at the panel's last step each tile of C goes back to the host as soon as its
  // product is done.
  void multiply_step(const Step& s, int a, const Step* next) {
    const long rows = std::min(s_.rows, p_.m - s.row0), width = std::min(s_.cols, p_.n - s.col0);
    const bool last = s.k0 + s.depth == p_.k;
    const long tiles = (width + s_.tile - 1) / s_.tile;
    if (s.k0 == 0) MMLAB_CHECK(cudaStreamWaitEvent(compute_, c_free_[s.c]));  // its last copy out is done
    MMLAB_CHECK(cudaStreamWaitEvent(compute_, a_ready_[a]));
    for (long t = 0; t < tiles; ++t) {
      const long j = t * s_.tile, cols = std::min(s_.tile, width - j);
      const int b = int(b_used_++ % 2);
      MMLAB_CHECK(cudaStreamWaitEvent(in_, b_free_[b]));
      copy_in(b_[b], r_.b, p_.n, s.k0 * p_.n + s.col0 + j, s.depth, cols);
      MMLAB_CHECK(cudaEventRecord(b_ready_[b], in_));
      if (next) load_a(*next, 1 - a, t, tiles);
      MMLAB_CHECK(cudaStreamWaitEvent(compute_, b_ready_[b]));
      const std::size_t m = watch_.start(compute_);
      multiply(a, b, rows, cols, s.depth, j, s.k0 > 0, s.c, width);
      watch_.stop(m, compute_), products_.push_back(m);
      MMLAB_CHECK(cudaEventRecord(b_free_[b], compute_));
      if (!last) continue;
      MMLAB_CHECK(cudaEventRecord(tile_done_, compute_));
      MMLAB_CHECK(cudaStreamWaitEvent(out_, tile_done_));
      const std::size_t co = watch_.start(out_);
      copy_rows(r_.c + (s.row0 * p_.n + s.col0 + j), p_.n, c_[s.c] + j, width, rows, cols, cudaMemcpyDeviceToHost, out_);
      watch_.stop(co, out_), outs_.push_back(co), bytes_ += 4.0 * rows * cols;
    }
    MMLAB_CHECK(cudaEventRecord(a_free_[a], compute_));
    if (last) MMLAB_CHECK(cudaEventRecord(c_free_[s.c], out_));
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
  Engine engine_;  // on gpu_: each tile shape's product prepared once
  cudaStream_t in_ = nullptr, compute_ = nullptr, out_ = nullptr;
  cudaEvent_t a_ready_[2], a_free_[2], b_ready_[2], b_free_[2], c_free_[2], tile_done_ = nullptr;
  float *c_[2] = {}, *a_[2] = {}, *b_[2] = {};
  void* workspace_ = nullptr;
  unsigned long b_used_ = 0;
  Stopwatch watch_;
  std::vector<std::size_t> products_, ins_, outs_;
  double bytes_ = 0;
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
