// What the harness knows of a distributed algorithm (Backend::distributed): it makes a run for
// this rank, the run multiplies (collectively, across the job's ranks), and reports this rank's
// part of C, the time its phases took, and the terms of the analytic model. CUDA- and MPI-free:
// the job itself (ranks, collectives) is a runtime service, runtime/job.hpp.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/grid.hpp"

namespace mmlab {

// Where this rank's share of C lies, and a host copy of it (empty when the rank holds none).
struct CBlock {
  long row0 = 0, col0 = 0, rows = 0, cols = 0;
  std::vector<float> values;  // rows x cols, row-major
};

// Time this rank spent in its phases during the last run(), in ms (summed over steps); layout_ms is
// the part of comm_ms that moved A and B from the starting layout and C back to it.
struct PhaseTimes {
  double compute_ms = 0, comm_ms = 0, layout_ms = 0;
};

// The analytic model: the steps of one product on this rank. A pipelined schedule overlaps step
// s's product with the communication that feeds step s + 1; otherwise the steps run in turn.
struct ModelStep {
  double flop = 0;       // local product of this step
  double bytes_in = 0;   // received (or broadcast to it) before this step can compute
  double bytes_out = 0;  // sent/reduced after it (a reduction of C)
  // The part of each that crosses to another link domain (a machine of NVLink domains joined by a
  // slower fabric); 0 within one domain. Near and far bytes move at once, on different links.
  double far_in = 0, far_out = 0;
};
struct Model {
  std::vector<ModelStep> steps;
  bool pipelined = false;
  // Pipelined, and step s's output (bytes_out) moves while step s + 1 computes (DNS's slabs); else
  // each step's output moves after its product, exposed.
  bool outputs_overlap = false;
  // The redistribution from the starting layout before the first step (A and B) and back to it after
  // the last (C): the larger of the bytes this rank sends and receives, and its messages. Zero for a
  // rank whose blocks are where its schedule wants them.
  double layout_in_bytes = 0, layout_out_bytes = 0;
  // Pipelined, what the first step waits for (the moves of A and B from the starting layout and its
  // own input) in this many slabs, the first step's product of each slab following it while the next
  // moves (Cannon's skew in slabs, `direct`'s first fetch); 1: all of it, then the steps.
  int first_step_slabs = 1;
  // Pipelined with the communication running ahead (dist_cannon's `pipelined`): the steps come in
  // groups of this many slabs (one k block); a slab's move starts once the one before it has moved and
  // the products of the group two before have run (the buffer it fills), and its product once it has
  // moved and the product before it has run. 0: step s's move overlaps step s - 1's product only.
  int run_ahead_group = 0;
  // ms at `gflops` per rank and `gbytes_per_s` per rank on its links (`far_gbytes_per_s` between
  // domains; 0: the same), each phase that moves data paying `latency_ms` once (its messages go
  // together).
  double predict_ms(double gflops, double gbytes_per_s, double far_gbytes_per_s = 0, double latency_ms = 0) const;

  // What no order of this rank's work avoids (the row's bound, least_ms): the bytes its GPU must
  // receive and send in all (its steps' inputs, what it broadcasts or shifts on, its share of the
  // reductions, the moves from and to the starting layout), what must arrive before its first product
  // can start (at the schedule's finest grain: a slab, the panel it owns most of) and what must leave
  // after its last (its share of the last slab's reduction). Filled with the steps.
  struct Least {
    double in_bytes = 0, out_bytes = 0, first_bytes = 0, last_bytes = 0;  // of the steps
    long c_rows = 0, c_cols = 0;  // the block of C its products write (their work as one product)
    // The first product waits for a slab (1 / first_step_slabs) of the move from the starting layout
    // (Cannon's skew); else the moves count in the port's bytes only.
    bool first_waits_for_layout = false;
    // The moves from the starting layout (A and B) and back to it (C), as add_layout_terms finds them.
    double layout_received = 0, layout_sent = 0, layout_in_received = 0;
  } least;
  // A least time, ms: this rank's products at `gflops` (the engine's best measured rate on its
  // shapes) after its first input and before its last output move, or its port's bytes (the larger of
  // ingress and egress) at `gbytes_per_s` (the links' best measured rate, per peer or all at once),
  // whichever is longer, each message path paying `latency_ms` once. No schedule of the rank's work
  // on those links is faster; the row's bound is the slowest rank's.
  double least_ms(double gflops, double gbytes_per_s, double latency_ms) const;
};

// The lab's engine names: the `engine` axis's values of an algorithm that runs another's products (the
// distributed algorithms' local blocks, out_of_core's tiles) and the engine spec ("algorithm:variant",
// core/invocation.hpp) each names, the one list of them; each axis offers its own subset
// (kDistributedEngineValues; out_of_core's). A value is the name the same engine has everywhere in the
// lab (`tensor_cores`: the flagship's FP32-accurate dispatcher, as the flagship's variant is named).
// The analysis reads rows of schema 7 and older, which recorded the value, as the spec.
struct EngineName {
  const char* value;
  const char* spec;
};
inline constexpr EngineName kEngineNames[] = {{"cublas", "cublas:default"},
                                              {"cublas_tf32", "cublas:tf32"},
                                              {"register_tiled", "register_tiled:tuned"},
                                              {"cuda_cores", "flagship:cuda_cores"},
                                              {"tensor_cores", "flagship:tensor_cores"},
                                              {"eigen", "eigen:default"}};
// The distributed algorithms' engines (distributed/engines.cu makes them).
inline constexpr const char* kDistributedEngineValues[] = {"cublas", "cublas_tf32", "register_tiled", "tensor_cores",
                                                           "eigen"};
// The spec an engine value names ("" for none).
inline std::string engine_spec_of(const std::string& value) {
  for (const EngineName& e : kEngineNames)
    if (value == e.value) return e.spec;
  return {};
}
// Older names of those values, read as the current ones wherever rows are read (a row written before
// the rename keeps its words in its file): {older, current}.
inline constexpr EngineName kEngineAliases[] = {{"tf32x3", "tensor_cores"}};

// The current name of an `engine` value (itself if it has no older one).
inline std::string current_engine_value(const std::string& value) {
  for (const EngineName& e : kEngineAliases)
    if (value == e.value) return e.spec;
  return value;
}
// The spec a distributed algorithm's `engine` value names, older names included ("" for none).
inline std::string distributed_engine_spec(const std::string& value) {
  const std::string current = current_engine_value(value);
  for (const char* v : kDistributedEngineValues)
    if (current == v) return engine_spec_of(current);
  return {};
}
// A parameters text ("grid=2x2;engine=tf32x3;transport=nccl") with its engine's older name replaced
// by the current one; every other character as it was.
inline std::string with_current_engine(const std::string& params) {
  const std::string key = "engine=";
  std::size_t at = 0;
  while ((at = params.find(key, at)) != std::string::npos) {
    if (at == 0 || params[at - 1] == ';') break;
    at += key.size();
  }
  if (at == std::string::npos) return params;
  const std::size_t from = at + key.size(), to = std::min(params.find(';', from), params.size());
  return params.substr(0, from) + current_engine_value(params.substr(from, to - from)) + params.substr(to);
}

struct DistributedSetup {
  Problem problem;
  const Params* params = nullptr;  // resolved
  const Params* asked = nullptr;   // as the sweep gave them (null: the same)
  unsigned long long seed = 0;
  const DeviceInfo* device = nullptr;
};

// A distributed configuration prepared on this rank: A, B and C in the starting layout (2D blocks
// over the ranks, core/layout.hpp's home_layout), made from the seed once. Each run() moves A and B
// to the schedule's layout, multiplies, and moves C back, so every method is timed from the same
// layout (the moves in PhaseTimes::layout_ms).
class DistributedRun {
 public:
  virtual ~DistributedRun() = default;
  virtual void poison() = 0;  // fill this rank's C (and the schedule's own) with NaN
  virtual void run() = 0;     // one product, collective; complete on this rank when it returns
  // This rank's A and B of the starting layout made again in place from `seed` (the setup's the
  // verification's; a timed trial's its own, issue #81), complete when it returns; false where the run
  // cannot (its trials then repeat the verification's inputs).
  virtual bool use_inputs(unsigned long long seed) {
    (void)seed;
    return false;
  }
  // The next run() timed on the GPU (runs on GPUs only; false elsewhere: the host's clock times them):
  // its streams held behind the blocking kernel from its start until every one of its operations is
  // enqueued and `all_enqueued` (collective: every rank has enqueued too) has returned, with events
  // around its work. gpu_ms() is then this rank's time between them; gate_timed_out() says the
  // blocking kernel gave up before it was released (the time is then not the GPU's alone).
  virtual bool hold_next_run(const std::function<void()>& all_enqueued) {
    (void)all_enqueued;
    return false;
  }
  virtual double gpu_ms() const { return -1; }
  virtual bool gate_timed_out() const { return false; }
  virtual PhaseTimes phases() const = 0;
  virtual CBlock c_block() = 0;  // this rank's block of C in the starting layout, copied to the host
  // That block where it lives (device memory for GPU engines, host memory for the CPU backend).
  virtual const float* c_data() const = 0;
  virtual Model model() const = 0;
  // What runs the local products, as a full engine spec ("cublas:default", the flagship's pick, ...).
  virtual std::string engine() = 0;
  // One local product of the first step's shape, timed alone (the model's local rate).
  virtual double local_gflops() = 0;
  // The engine's best rate on this rank's work: the larger of local_gflops() and the rate of all of
  // its products as one product (the bound's rate: no split of the work runs faster).
  virtual double best_local_gflops() { return local_gflops(); }
  // A ring shift of `bytes` per rank on this run's links, timed (the model's bandwidth), GB/s.
  virtual double link_gbytes_per_s(double bytes) = 0;
  // Every rank sending `bytes` in all, split evenly over every other rank, at once: GB/s received per
  // rank (the links' aggregate rate, the bound's beside the ring shift's). 0 where not measured.
  virtual double all_to_all_gbytes_per_s(double bytes) {
    (void)bytes;
    return 0;
  }
  // The time of a ring shift of one float on this run's links: a message's fixed cost, ms.
  virtual double latency_ms() = 0;
  virtual std::size_t bytes_per_rank() const = 0;  // memory this run holds
  // Frees the run's blocks and buffers once its trials are done and its C audited (nothing but
  // model(), phases(), note() and the measurements above may be called after), so that the
  // measurements' scratch has its memory while the problem's other runs are still held. Collective
  // where peers mapped its memory.
  virtual void release_memory() {}
  // What the row should say of how it ran when that differs from what was asked (e.g. a transport
  // that fell back), else empty. The same on every rank.
  virtual std::string note() const { return {}; }
  // Why the last run (or the set-up) failed on this rank, where a library reports it by a status
  // instead of an exception (cuBLASMp); "" when it did not. The pipeline agrees on it over ranks.
  virtual std::string failure() const { return {}; }
};

}  // namespace mmlab
