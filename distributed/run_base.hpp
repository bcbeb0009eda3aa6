// What every distributed run shares: its context; A, B and C in the starting layout (2D blocks over
// the ranks, made from the seed once) and the moves between it and the schedule's layouts; its model
// (core/decompositions.hpp); the probes of the model's local rate, link bandwidth and latency. An
// algorithm file adds its layouts, its blocks and its schedule.
#pragma once

#include <chrono>
#include <functional>
#include <cmath>
#include <limits>
#include <optional>

#include "distributed/context.hpp"
#include "distributed/redistribute.hpp"
#include "core/random.hpp"

namespace mmlab::dist {

// What a configuration is, as core/decompositions.hpp describes it.
inline Decomposed decomposed(Decomposition kind, const Problem& p, const Params& q) {
  return {kind, p, parse_grid(q.text("grid")), q.has("panel") ? long(q.integer("panel")) : 4096,
          q.has("slabs") ? long(q.integer("slabs")) : 1};
}

class RunBase : public DistributedRun {
 public:
  RunBase(const DistributedSetup& s, Decomposed shape)
      : ctx_(context(s.params->text("engine"), transport_of(s.params->text("transport")), *s.device)),
        grid_(shape.grid),
        p_(s.problem),
        shape_(std::move(shape)),
        seed_(s.seed),
        ctas_(s.params->has("comm_ctas") && s.params->text("comm_ctas") != "auto"
                  ? std::stoi(s.params->text("comm_ctas"))
                  : 0) {
    // Asked for copy_engine, resolved to NCCL (ranks on more than one host): the row says why.
    if (s.asked && s.asked->has("transport") && s.asked->text("transport") != s.params->text("transport"))
      note_ = copy_engine_unavailable();
  }
  // Peers may have mapped this run's memory: every rank unmaps before any frees it.
  ~RunBase() override { ctx_.release_peers(); }

  // One product from the starting layout back to it: A and B moved to the schedule's layout (on the
  // communication stream; the first product waits for them), the schedule, C moved back. Where the
  // algorithm asked for bands (move_in_bands), A and B move band by band and the first step's share
  // of each band is enqueued as soon as that band is in (first_step_band).
  void run() final {
    Comm& world = comm("world", 0, job().rank);
    ctx_.start();
    if (bands_a_.empty()) {
      ctx_.relayout([&] {
        in_a_->run(world, home_a_, a_to_);
        in_b_->run(world, home_b_, b_to_);
      });
      ctx_.compute_waits_for_communication();
    }
    for (std::size_t t = 0; t < bands_a_.size(); ++t) {
      ctx_.relayout([&] {
        bands_a_[t].run(world, home_a_, a_to_);
        bands_b_[t].run(world, home_b_, b_to_);
      });
      ctx_.compute_waits_for_communication();
      first_step_band(int(t));
    }
    schedule();
    ctx_.communication_waits_for_compute();
    ctx_.relayout([&] { out_c_->run(world, c_out_, home_c_); });
    ctx_.finish();
  }

  Model model() const override {  // the cuBLASMp run adds to it
    Model m = shape_.model(job().rank);
    add_layout_terms(m, layout_a_, layout_b_, layout_c_, p_, job().rank);
    return m;
  }
  std::string note() const override { return note_; }
  std::string engine() override { return ctx_.engine().resolved(first_m_, first_n_, first_k_); }

  bool use_inputs(unsigned long long seed) override {
    if (seed == inputs_seed_) return true;
    if (home_a_) ctx_.fill(home_a_, home_a_rect_.rows, home_a_rect_.cols, home_a_rect_.row0, home_a_rect_.col0, p_, seed, kMatrixA);
    if (home_b_) ctx_.fill(home_b_, home_b_rect_.rows, home_b_rect_.cols, home_b_rect_.row0, home_b_rect_.col0, p_, seed, kMatrixB);
    inputs_seed_ = seed;
    return true;
  }

  void poison() override {
    if (home_c_count_) ctx_.fill_nan(home_c_, home_c_count_);
    if (c_out_ && c_out_ != home_c_ && c_out_count_) ctx_.fill_nan(c_out_, c_out_count_);
  }
  PhaseTimes phases() const override { return ctx_.phases(); }
  bool hold_next_run(const std::function<void()>& all_enqueued) override { return ctx_.hold_next_run(all_enqueued); }
  double gpu_ms() const override { return ctx_.gpu_ms(); }
  bool gate_timed_out() const override { return ctx_.gate_timed_out(); }
  void release_memory() override {
    ctx_.release_peers();  // every rank unmaps its peers' blocks before any frees them
    in_a_.reset(), in_b_.reset(), out_c_.reset();
    bands_a_.clear(), bands_b_.clear();
    memory_.clear();
    ctx_.engine().release();
    home_a_ = home_b_ = home_c_ = a_to_ = b_to_ = c_out_ = nullptr;
    a_in_ = b_in_ = nullptr;
    home_c_count_ = c_out_count_ = 0;
  }
  std::size_t bytes_per_rank() const override { return bytes_; }
  const float* c_data() const override { return home_c_; }

  CBlock c_block() override {
    CBlock b;
    if (!home_c_count_) return b;
    b.row0 = home_c_block_.row0, b.col0 = home_c_block_.col0, b.rows = home_c_block_.rows, b.cols = home_c_block_.cols;
    b.values.resize(home_c_count_);
    ctx_.copy_to_host(b.values.data(), home_c_, b.values.size());
    return b;
  }

  // One product of the first step's shape on scratch inputs, the best of three; measured once per
  // engine and shape in a job (the context's engine is this process's for that engine).
  double local_gflops() override { return gflops_of(first_m_, first_n_, first_k_); }

  // The first step's shape, and all of the rank's products as one: the block of C they write, as deep
  // as their FLOPs make it (the model's), where that is another shape.
  double best_local_gflops() override {
    const double first = local_gflops();
    const Model m = model();
    double flop = 0;
    for (const ModelStep& s : m.steps) flop += s.flop;
    const long rows = m.least.c_rows, cols = m.least.c_cols;
    const long depth = rows * cols > 0 ? long(flop / (2.0 * double(rows) * double(cols)) + 0.5) : 0;
    if (depth <= 0 || (rows == first_m_ && cols == first_n_ && depth == first_k_)) return first;
    const double whole = gflops_of(rows, cols, depth);
    return std::isfinite(first) ? std::max(first, whole) : whole;
  }

 private:
  double gflops_of(long m, long n, long k) {
    if (m * n * k == 0) return std::numeric_limits<double>::infinity();  // no work here
    double& rate = ctx_.measured_gflops(m, n, k);
    if (rate == 0) rate = measure_gflops(m, n, k);
    return rate;
  }

  double measure_gflops(long m, long n, long k) {
    auto a = ctx_.allocate(std::size_t(m * k)), b = ctx_.allocate(std::size_t(k * n)),
         c = ctx_.allocate(std::size_t(m * n));
    const Problem scratch{m, n, k};
    ctx_.fill(a->get(), m, k, 0, 0, scratch, seed_, kMatrixA);
    ctx_.fill(b->get(), k, n, 0, 0, scratch, seed_, kMatrixB);
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4; ++i) {  // the first is a warm-up
      ctx_.start();
      ctx_.compute([&] { ctx_.product(a->get(), b->get(), c->get(), m, n, k, false); });
      ctx_.finish();
      if (i) best = std::min(best, ctx_.phases().compute_ms);
    }
    ctx_.engine().release();
    return 2.0 * m * n * k / (best * 1e6);
  }

 public:
  // A ring shift (send to the next rank, receive from the previous) of `bytes` per rank: its GB/s.
  double link_gbytes_per_s(double bytes) override {
    const double ms = ring_shift_ms(bytes);
    return std::isfinite(ms) ? double(std::size_t(bytes / sizeof(float)) * sizeof(float)) / (ms * 1e6) : ms;
  }
  double latency_ms() override { return ring_shift_ms(sizeof(float)); }
  double all_to_all_gbytes_per_s(double bytes) override {
    Comm& world = comm("world", 0, job().rank);
    const int ranks = world.size();
    if (ranks == 1 || bytes <= 0) return 0;
    const std::size_t each = std::max<std::size_t>(std::size_t(bytes / sizeof(float)) / std::size_t(ranks - 1), 1);
    auto send = ctx_.allocate(each * std::size_t(ranks - 1)), recv = ctx_.allocate(each * std::size_t(ranks - 1));
    std::vector<Transfer> all;
    for (int peer = 0, slot = 0; peer < ranks; ++peer)
      if (peer != world.rank()) {
        all.push_back({send->get() + slot * each, each, peer, recv->get() + slot * each, each, peer});
        ++slot;
      }
    const double ms = exchange_ms(world, all);
    return double(each * (ranks - 1) * sizeof(float)) / (ms * 1e6);
  }

 protected:
  // The schedule, enqueued: A and B in the schedule's layout at a_in_ and b_in_ (read only: they may
  // be the starting layout's own blocks), C to leave at c_out_ in its layout.
  virtual void schedule() = 0;
  // With bands: band t of A and B is in (at a_in_ and b_in_); enqueue the first step's share of it.
  virtual void first_step_band(int) {}

  // A and B moved to the schedule's layouts in `bands` moves instead of one: move t takes each rank's
  // share of A inside a_band(t, rank) and of B inside b_band(t, rank) (global rectangles), into the
  // same buffers as the whole move. Called by the constructor after set_layouts.
  void move_in_bands(int bands, const std::function<Rect(int band, int rank)>& a_band,
                     const std::function<Rect(int band, int rank)>& b_band) {
    const int ranks = job().size, me = job().rank;
    const Layout home_a = home_layout(p_.m, p_.k, ranks), home_b = home_layout(p_.k, p_.n, ranks);
    auto moves = [&](const Layout& home, const Layout& to, const std::function<Rect(int, int)>& band, bool in_place,
                     std::vector<Mover>& out) {
      for (int t = 0; t < bands; ++t) {
        Redistribution plan = plan_redistribution(home, restrict_layout(to, [&](int r) { return band(t, r); }), me);
        if (in_place) plan.local.clear();  // its share is where it starts: the same buffer
        out.emplace_back(ctx_, std::move(plan), home[me].cols, to[me].cols);
        bytes_ += out.back().staging_bytes();
      }
    };
    moves(home_a, layout_a_, a_band, in_a_->plan().in_place, bands_a_);
    moves(home_b, layout_b_, b_band, in_b_->plan().in_place, bands_b_);
  }

  // The schedule's layouts of A, B (where it starts) and C (where it leaves it); called once by the
  // algorithm's constructor. Makes the starting blocks (A and B from the seed), the moves, and where
  // A and B land and C is left: the starting blocks themselves where a rank's block is the same.
  void set_layouts(Layout a, Layout b, Layout c) {
    const int ranks = job().size, me = job().rank;
    layout_a_ = std::move(a), layout_b_ = std::move(b), layout_c_ = std::move(c);
    const Layout home_a = home_layout(p_.m, p_.k, ranks), home_b = home_layout(p_.k, p_.n, ranks),
                 home_c = home_layout(p_.m, p_.n, ranks);
    home_a_ = home_block(home_a[me], kMatrixA, &home_a_rect_);
    home_b_ = home_block(home_b[me], kMatrixB, &home_b_rect_);
    home_c_ = home_block(home_c[me], 0);
    home_c_count_ = home_c[me].count();
    if (!home_c[me].pieces.empty()) home_c_block_ = home_c[me].pieces.front().global;
    in_a_.emplace(ctx_, plan_redistribution(home_a, layout_a_, me), home_a[me].cols, layout_a_[me].cols);
    in_b_.emplace(ctx_, plan_redistribution(home_b, layout_b_, me), home_b[me].cols, layout_b_[me].cols);
    out_c_.emplace(ctx_, plan_redistribution(layout_c_, home_c, me), layout_c_[me].cols, home_c[me].cols);
    a_in_ = a_to_ = in_a_->plan().in_place ? home_a_ : landing(layout_a_[me]);
    b_in_ = b_to_ = in_b_->plan().in_place ? home_b_ : landing(layout_b_[me]);
    c_out_ = out_c_->plan().in_place ? home_c_ : landing(layout_c_[me]);
    c_out_count_ = layout_c_[me].count();
    bytes_ += in_a_->staging_bytes() + in_b_->staging_bytes() + out_c_->staging_bytes();
  }

  Comm& comm(const std::string& name, int color, int key) { return ctx_.comm(name, color, key, ctas_); }
  float* keep(std::size_t count) {  // memory that lives as long as the run
    memory_.push_back(ctx_.allocate(std::max<std::size_t>(count, 1)));
    bytes_ += count * sizeof(float);
    return memory_.back()->get();
  }
  void set_first_step(long m, long n, long k) { first_m_ = m, first_n_ = n, first_k_ = k; }

  Context& ctx_;
  Grid grid_;
  Problem p_;
  Decomposed shape_;
  unsigned long long seed_;
  unsigned long long inputs_seed_ = seed_;  // what the starting blocks of A and B hold
  int ctas_;
  const float *a_in_ = nullptr, *b_in_ = nullptr;  // A and B where the schedule starts
  float* c_out_ = nullptr;                         // C where the schedule leaves it (null: none here)

 private:
  // This rank's block of the starting layout, made from the seed (`id` 0: C, left as it is).
  float* home_block(const Share& s, unsigned long long id, Rect* where = nullptr) {
    if (!s.count()) return nullptr;
    float* x = keep(s.count());
    const Rect& g = s.pieces.front().global;
    if (id) ctx_.fill(x, g.rows, g.cols, g.row0, g.col0, p_, seed_, id);
    if (where) *where = g;
    return x;
  }
  float* landing(const Share& s) { return s.count() ? keep(s.count()) : nullptr; }

  double ring_shift_ms(double bytes) {
    Comm& world = comm("world", 0, job().rank);
    if (world.size() == 1 || bytes <= 0) return std::numeric_limits<double>::infinity();
    const std::size_t count = std::max<std::size_t>(std::size_t(bytes / sizeof(float)), 1);
    auto send = ctx_.allocate(count), recv = ctx_.allocate(count);
    const int next = (world.rank() + 1) % world.size(),
              prev = (world.rank() + world.size() - 1) % world.size();
    return exchange_ms(world, {{send->get(), count, next, recv->get(), count, prev}});
  }

  // One grouped exchange on `world`, every rank starting together: the slowest rank's time, the best
  // of three after a warm-up. Its buffers' peers unmap them before it returns (they are then freed).
  double exchange_ms(Comm& world, const std::vector<Transfer>& transfers) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4; ++i) {
      barrier();
      ctx_.start();
      ctx_.communicate([&] { world.exchange(transfers); });
      ctx_.finish();
      if (i) best = std::min(best, max_over_ranks(ctx_.phases().comm_ms));
    }
    ctx_.release_peers();
    return best;
  }

  std::vector<std::shared_ptr<Memory>> memory_;
  std::size_t bytes_ = 0;
  std::string note_;
  Layout layout_a_, layout_b_, layout_c_;
  std::optional<Mover> in_a_, in_b_, out_c_;
  std::vector<Mover> bands_a_, bands_b_;  // move_in_bands' moves, in order
  float *home_a_ = nullptr, *home_b_ = nullptr, *home_c_ = nullptr;
  float *a_to_ = nullptr, *b_to_ = nullptr;  // where the moves leave A and B (a_in_, b_in_)
  std::size_t home_c_count_ = 0, c_out_count_ = 0;
  Rect home_c_block_, home_a_rect_, home_b_rect_;
  long first_m_ = 0, first_n_ = 0, first_k_ = 0;
};

}  // namespace mmlab::dist

namespace mmlab::dist {

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
  a.engine_of = [](const Params& q) { return engine_spec(q.text("engine")).algorithm; };
  a.resolve = [](const Problem&, const Params& q, const DeviceInfo&) {
    Params r = q;
    // The CPU backend moves host blocks with MPI, whatever was asked (copy_engine is refused by supports).
    if (Engine::on_host(engine_spec(q.text("engine"))) && q.text("transport") == "nccl")
      r.set("transport", "mpi");
    if (q.text("transport") == "copy_engine" && !copy_engine_unavailable().empty()) r.set("transport", "nccl");
    return r;
  };
  a.supports = [kind](const Problem&, const Params& q, const DeviceInfo& d) -> Reason {
    const Grid g = parse_grid(q.text("grid"));
    if (std::string why = grid_problem(kind, g); !why.empty()) return why;
    return check_job(g, q, d);
  };
  a.workspace_bytes = [kind](const Problem& p, const Params& q) {
    const Decomposed d = decomposed(kind, p, q);
    return d.bytes_per_rank() + d.padded_bytes(engine_row_alignment(q.text("engine")));
  };
  a.make_distributed = [](const DistributedSetup& s) -> std::unique_ptr<DistributedRun> {
    return std::make_unique<Run>(s);
  };
}

}  // namespace mmlab::dist
