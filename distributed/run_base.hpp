// What every distributed run shares: its context, its C block, the probes of the model's local
// rate and link bandwidth. An algorithm file adds its blocks, its schedule and its model.
#pragma once

#include <chrono>
#include <cmath>
#include <limits>

#include "distributed/context.hpp"
#include "core/random.hpp"

namespace mmlab::dist {

class RunBase : public DistributedRun {
 public:
  explicit RunBase(const DistributedSetup& s)
      : ctx_(context(s.params->text("engine"), *s.device)),
        grid_(parse_grid(s.params->text("grid"))),
        p_(s.problem),
        seed_(s.seed),
        ctas_(s.params->has("comm_ctas") && s.params->text("comm_ctas") != "auto"
                  ? std::stoi(s.params->text("comm_ctas"))
                  : 0) {}

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
  unsigned long long seed_;
  int ctas_;

 private:
  std::vector<std::shared_ptr<Memory>> memory_;
  std::size_t bytes_ = 0;
  float* c_ = nullptr;
  long c_row0_ = 0, c_col0_ = 0, c_rows_ = 0, c_cols_ = 0;
  long first_m_ = 0, first_n_ = 0, first_k_ = 0;
};

}  // namespace mmlab::dist

namespace mmlab::dist {

// The descriptor parts every distributed algorithm shares: the backend, the grid, engine and
// comm_ctas axes (then its own), its checks, its memory per rank, and its run.
template <class Run>
void describe_distributed(Algorithm& a, Axis grid, std::vector<Axis> own,
                          std::function<Reason(const Problem&, const Params&, const DeviceInfo&)> supports,
                          std::function<std::size_t(const Problem&, const Params&)> bytes_per_rank) {
  a.backend = Backend::distributed;
  a.axes = {std::move(grid), engine_axis(), comm_ctas_axis()};
  a.axes.insert(a.axes.end(), own.begin(), own.end());
  a.supports = std::move(supports);
  a.workspace_bytes = std::move(bytes_per_rank);
  a.make_distributed = [](const DistributedSetup& s) -> std::unique_ptr<DistributedRun> {
    return std::make_unique<Run>(s);
  };
}

}  // namespace mmlab::dist
