// What every distributed run shares: its context, its C block, its model (core/decompositions.hpp),
// the probes of the model's local rate and link bandwidth. An algorithm file adds its blocks and its
// schedule.
#pragma once

#include <chrono>
#include <cmath>
#include <limits>

#include "distributed/context.hpp"
#include "core/random.hpp"

namespace mmlab::dist {

class RunBase : public DistributedRun {
 public:
  RunBase(const DistributedSetup& s, Decomposition kind)
      : ctx_(context(s.params->text("engine"), transport_of(s.params->text("transport")), *s.device)),
        grid_(parse_grid(s.params->text("grid"))),
        p_(s.problem),
        shape_{kind, s.problem, grid_, s.params->has("panel") ? long(s.params->integer("panel")) : 4096},
        seed_(s.seed),
        ctas_(s.params->has("comm_ctas") && s.params->text("comm_ctas") != "auto"
                  ? std::stoi(s.params->text("comm_ctas"))
                  : 0) {
    // Asked for copy_engine, resolved to NCCL (ranks on more than one host): the row says why.
    if (s.asked && s.asked->text("transport") != s.params->text("transport")) note_ = copy_engine_unavailable();
  }
  // Peers may have mapped this run's memory: every rank unmaps before any frees it.
  ~RunBase() override { ctx_.release_peers(); }

  Model model() const override { return shape_.model(job().rank); }
  std::string note() const override { return note_; }

  void poison() override {
    if (c_rows_ * c_cols_ > 0) ctx_.fill_nan(c_, std::size_t(c_rows_ * c_cols_));
  }
  PhaseTimes phases() const override { return ctx_.phases(); }
  std::size_t bytes_per_rank() const override { return bytes_; }

  CBlock c_block() override {
    CBlock b;
    if (!c_) return b;
    b.row0 = c_row0_, b.col0 = c_col0_, b.rows = c_rows_, b.cols = c_cols_;
    b.values.resize(std::size_t(c_rows_ * c_cols_));
    ctx_.copy_to_host(b.values.data(), c_, b.values.size());
    return b;
  }

  // One product of the first step's shape on scratch inputs, the best of three.
  double local_gflops() override {
    if (first_m_ * first_n_ * first_k_ == 0) return std::numeric_limits<double>::infinity();  // no work here
    auto a = ctx_.allocate(std::size_t(first_m_ * first_k_)),
         b = ctx_.allocate(std::size_t(first_k_ * first_n_)),
         c = ctx_.allocate(std::size_t(first_m_ * first_n_));
    const Problem scratch{first_m_, first_n_, first_k_};
    ctx_.fill(a->get(), first_m_, first_k_, 0, 0, scratch, seed_, kMatrixA);
    ctx_.fill(b->get(), first_k_, first_n_, 0, 0, scratch, seed_, kMatrixB);
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4; ++i) {  // the first is a warm-up
      ctx_.start();
      ctx_.compute([&] { ctx_.product(a->get(), b->get(), c->get(), first_m_, first_n_, first_k_, false); });
      ctx_.finish();
      if (i) best = std::min(best, ctx_.phases().compute_ms);
    }
    return 2.0 * first_m_ * first_n_ * first_k_ / (best * 1e6);
  }

  // A ring shift (send to the next rank, receive from the previous) of `bytes` per rank.
  double link_gbytes_per_s(double bytes) override {
    Comm& world = comm("world", 0, job().rank);
    if (world.size() == 1 || bytes <= 0) return std::numeric_limits<double>::infinity();
    const std::size_t count = std::size_t(bytes / sizeof(float));
    auto send = ctx_.allocate(count), recv = ctx_.allocate(count);
    const int next = (world.rank() + 1) % world.size(),
              prev = (world.rank() + world.size() - 1) % world.size();
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4; ++i) {
      barrier();
      ctx_.start();
      ctx_.communicate([&] { world.exchange({{send->get(), count, next, recv->get(), count, prev}}); });
      ctx_.finish();
      if (i) best = std::min(best, max_over_ranks(ctx_.phases().comm_ms));
    }
    ctx_.release_peers();  // before `send` and `recv` are freed
    return double(count * sizeof(float)) / (best * 1e6);
  }

 protected:
  Comm& comm(const std::string& name, int color, int key) { return ctx_.comm(name, color, key, ctas_); }
  float* keep(std::size_t count) {  // memory that lives as long as the run
    memory_.push_back(ctx_.allocate(count));
    bytes_ += count * sizeof(float);
    return memory_.back()->get();
  }
  void set_c(float* c, long row0, long col0, long rows, long cols) {
    c_ = c, c_row0_ = row0, c_col0_ = col0, c_rows_ = rows, c_cols_ = cols;
  }
  void set_first_step(long m, long n, long k) { first_m_ = m, first_n_ = n, first_k_ = k; }

  Context& ctx_;
  Grid grid_;
  Problem p_;
  Decomposed shape_;
  unsigned long long seed_;
  int ctas_;

 private:
  std::vector<std::shared_ptr<Memory>> memory_;
  std::size_t bytes_ = 0;
  std::string note_;
  float* c_ = nullptr;
  long c_row0_ = 0, c_col0_ = 0, c_rows_ = 0, c_cols_ = 0;
  long first_m_ = 0, first_n_ = 0, first_k_ = 0;
};

}  // namespace mmlab::dist

namespace mmlab::dist {

// What a configuration is, as core/decompositions.hpp describes it.
inline Decomposed decomposed(Decomposition kind, const Problem& p, const Params& q) {
  return {kind, p, parse_grid(q.text("grid")), q.has("panel") ? long(q.integer("panel")) : 4096};
}

// The descriptor parts every distributed algorithm shares: the backend, the grid, engine, transport
// and comm_ctas axes (then its own), the precision its engine gives, copy_engine resolved to NCCL
// where ranks span hosts, its checks, its memory per rank, and its run.
template <class Run>
void describe_distributed(Algorithm& a, Decomposition kind, Axis grid, std::vector<Axis> own) {
  a.backend = Backend::distributed;
  a.axes = {std::move(grid), engine_axis(), transport_axis(), comm_ctas_axis()};
  a.axes.insert(a.axes.end(), own.begin(), own.end());
  a.precision_by = [](const Params& q) {  // its engine's
    const EngineSpec e = engine_spec(q.text("engine"));
    return e.algorithm->precision_of(e.params);
  };
  a.resolve = [](const Problem&, const Params& q, const DeviceInfo&) {
    Params r = q;
    // The CPU backend moves host blocks with MPI, whatever was asked (copy_engine is refused by supports).
    if (q.text("engine") == "eigen" && q.text("transport") == "nccl") r.set("transport", "mpi");
    if (q.text("transport") == "copy_engine" && !copy_engine_unavailable().empty()) r.set("transport", "nccl");
    return r;
  };
  a.supports = [kind](const Problem&, const Params& q, const DeviceInfo& d) -> Reason {
    const Grid g = parse_grid(q.text("grid"));
    if (std::string why = grid_problem(kind, g); !why.empty()) return why;
    return check_job(g, q, d);
  };
  a.workspace_bytes = [kind](const Problem& p, const Params& q) { return decomposed(kind, p, q).bytes_per_rank(); };
  a.make_distributed = [](const DistributedSetup& s) -> std::unique_ptr<DistributedRun> {
    return std::make_unique<Run>(s);
  };
}

}  // namespace mmlab::dist
