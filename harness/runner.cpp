// A run of a plan, in three parts: its output (run_output.hpp: the files, the caller's sink, each row's
// id), the job's agreement (below: what every rank of an mpirun job must decide alike) and the
// scheduling (Schedule: the configurations in turn, a problem's as one interleaved group, recorded and
// reported as they finish). A sticky CUDA error stops the run after recording where it happened.
#include "harness/runner.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <optional>
#include <random>

#include "core/distributed.hpp"
#include "core/exit_status.hpp"
#include "core/random.hpp"
#include "core/schema.hpp"
#include "harness/pipeline.hpp"
#include "harness/progress.hpp"
#include "core/plugin.hpp"
#include "harness/record.hpp"  // the device's words
#include "harness/run_output.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

// The job's agreement: what the ranks of an mpirun job decide alike, each at one place (a rank alone
// agrees with itself). What is left to run (rank 0's reading of the files), whether the run stops
// (--stop-after: past rank 0's clock), and whether any rank failed a row.

// A distributed configuration whose grid needs another number of ranks than this job has.
bool for_other_jobs(const Configuration& c) {
  return c.pipeline().collective && c.params.has("grid") &&
         parse_grid(c.params.text("grid")).volume() != job().size;
}

// Rank 0 opens the outputs (`open`: locks them, repairs a torn row, and with --resume says what
// they hold) and decides what is left to run; every rank learns the same list, or rank 0's input
// error, which every rank then throws (so none waits for the others). Distributed configurations
// for other rank counts are left to the jobs they fit (one experiment runs under mpirun -np 1, 2,
// 4 ... in turn).
std::vector<std::size_t> agree_on_todo(const RunPlan& plan, std::size_t* recorded,
                                       const std::function<std::set<std::string>()>& open) {
  std::string error;
  std::vector<std::size_t> todo;
  if (job().rank == 0) try {
      const std::set<std::string> done = open();
      std::size_t other = 0;
      for (std::size_t i = 0; i < plan.configurations.size(); ++i) {
        if (for_other_jobs(plan.configurations[i]))
          ++other;
        else if (!done.count(plan.configurations[i].key()))
          todo.push_back(i);
      }
      if (other)
        std::fprintf(stderr,
                     "mmlab: %zu distributed configuration%s grids for other rank counts than %d; "
                     "left to their own mpirun -np jobs\n",
                     other, other == 1 ? " has" : "s have", job().size);
    } catch (const UsageError& e) {
      error = *e.what() ? e.what() : "a usage error";
    }
  broadcast_text(error);
  if (!error.empty()) throw UsageError(error);
  broadcast_indices(todo);
  std::size_t other = 0;
  for (const Configuration& c : plan.configurations) other += for_other_jobs(c);
  *recorded = plan.configurations.size() - other - todo.size();
  return todo;
}

// Whether rank 0's clock is past --stop-after: agreed over ranks before a collective group; before
// rank 0's own, rank 0 alone decides.
bool agree_past(bool past, bool collective) { return collective ? max_over_ranks(past ? 1 : 0) > 0 : past; }

// Whether any rank recorded a failed row (the exit status: every rank's alike).
bool agree_any_failed(std::size_t failed) { return max_over_ranks(double(failed)) > 0; }


// The scheduling: one run of a plan in the steps execute() names (open the output and agree on what
// is left, announce, then per configuration run, record and report; stop early on an interrupt or a
// lost CUDA context). Rank 0 alone writes; the other ranks take part in distributed configurations only.
class Schedule {
 public:
  Schedule(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted, RowSink* sink)
      : plan_(plan), device_(device), interrupted_(interrupted), output_(plan, device, sink), clocks_(device),
        progress_(todo_, device) {}

  // Every rank learns the same list of what is left to run (rank 0's files read).
  void open_output_and_agree() {
    for (std::size_t i : agree_on_todo(plan_, &recorded_, [&] { return output_.open(); }))
      todo_.push_back(plan_.configurations[i]);
    if (!root()) output_.open_sink_only();  // rank 0's tee was made with its files (open)
  }

  int dry_run() const {
    if (!root()) return 0;
    for (const Configuration& c : todo_) std::cout << describe(c) << '\n';
    std::cout << todo_.size() << (todo_.size() == 1 ? " configuration" : " configurations");
    if (recorded_) std::cout << " (" << recorded_ << " already recorded)";
    std::cout << '\n';
    return 0;
  }

  void report_left_out() const {
    if (root() && plan_.not_compiled)
      std::fprintf(
          stderr,
          "mmlab: %zu combinations of the asked axis values have no compiled kernel and are left out "
          "(`mmlab list` shows what is compiled)\n",
          plan_.not_compiled);
  }

  // The device (or why there is none) and what --resume found, on stderr.
  void announce() const {
    if (!root()) return;
    if (device_.present) {
      std::fprintf(stderr, "mmlab: %s (%d SMs, %s, %s, driver %s)%s\n", device_.name.c_str(),
                   device_.sm_count, compute_capability_text(device_).c_str(),
                   cuda_version_text(device_.cuda_runtime).c_str(),
                   device_.driver_version.empty() ? "?" : device_.driver_version.c_str(),
                   alone() ? "" : (", rank 0 of " + std::to_string(job().size)).c_str());
    } else if (static std::atomic<bool> told{false}; !told.exchange(true)) {
      // Once a process: a library caller running plans in a loop is told once.
      std::fprintf(stderr,
                   "mmlab: %s. GPU algorithms are recorded as skipped; host algorithms run.\n"
                   "       Results measured on GPUs are in data/ (see README, Results).\n",
                   device_.absent_reason.c_str());
    }
    if (recorded_)
      std::fprintf(stderr, "mmlab: resuming: %zu of %zu configurations already in %s\n", recorded_,
                   plan_.configurations.size(), plan_.output.c_str());
  }

  // Every configuration in turn (a problem's single-process ones as one group when interleaved);
  // the exit status.
  int run_all() {
    const auto started = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < todo_.size();) {
      const Configuration& cfg = todo_[i];
      const bool collective = cfg.pipeline().collective;
      // A problem's single-process configurations form a group, its distributed ones another (timed
      // by every rank: a collective group).
      std::size_t end = i + 1;
      if (plan_.interleaved)
        while (end < todo_.size() && todo_[end].problem == cfg.problem &&
               todo_[end].pipeline().collective == collective)
          ++end;
      // --stop-after: past it (rank 0's clock) no configuration starts.
      if (plan_.stop_after_s > 0 && (collective || root())) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (agree_past(root() && s > plan_.stop_after_s, collective)) {
          if (root()) std::fprintf(stderr, "\nmmlab: --stop-after %g s reached\n", plan_.stop_after_s);
          return stop_interrupted();
        }
      }
      // Single-process configurations run on rank 0 only, the other ranks waiting for them unwatched.
      if (collective || root()) {
        const int status = end - i > 1 ? run_group(i, end, collective) : run_alone(i, collective);
        if (status >= 0) return status;
      }
      if (!collective && !alone()) barrier_after_rank0_alone();
      i = end;
    }
    return finish();
  }

 private:
  bool root() const { return job().rank == 0; }
  bool alone() const { return job().size == 1; }

  void mark_in_flight(const std::vector<std::size_t>& which) {
    if (!root()) return;
    std::vector<const Configuration*> configurations;
    for (std::size_t i : which) configurations.push_back(&todo_[i]);
    output_.mark_in_flight(configurations);
  }
  void clear_in_flight() {
    if (root()) output_.clear_in_flight();
  }

  // This problem's workbench, made anew when the problem changes.
  Workbench& bench_for(const Problem& p) {
    if (!bench_ || !(bench_->problem() == p)) {
      bench_.reset();  // free the last problem's buffers first
      bench_ = std::make_unique<Workbench>(p, device_, plan_.seed);
    }
    return *bench_;
  }

  // `work`, with a CUDA error or a bug made a `failed` outcome; in a distributed configuration
  // either ends the job, since the other ranks would wait for this one forever. False when the CUDA
  // context is lost (a sticky error).
  template <class Work>
  bool guarded(const Configuration& cfg, bool collective, Outcome& o, Work work) {
    const auto fail = [&](const char* kind, const std::string& what) {
      if (collective && !alone()) {
        std::fprintf(stderr, "\nmmlab: rank %d: %s in %s: %s\n", job().rank, kind, describe(cfg).c_str(),
                     what.c_str());
        abort_job(1);
      }
      o.status = Status::failed;
      o.reason = what;
    };
    try {
      work();
    } catch (const CudaError& e) {
      fail("fatal error", e.what());
      return !(device_.present && cudaDeviceSynchronize() != cudaSuccess);
    } catch (const PluginError& e) {  // a plugin's supports() or run() said it failed
      fail("plugin error", e.what());
    } catch (const std::logic_error& e) {  // e.g. a point with no compiled kernel: a bug, recorded
      fail("internal error", std::string("internal error: ") + e.what());
    }
    return true;
  }

  // What ends the run after a configuration: its exit status, or -1 to go on.
  int stop_after(std::size_t i, const Outcome& o, bool context_ok) {
    if (!context_ok) {  // a sticky error: the context is gone; record what happened and stop
      output_.record(i, todo_[i], o, /*samples=*/false);
      clear_in_flight();
      std::fprintf(stderr, "\nmmlab: fatal CUDA error in %s: %s\n", describe(todo_[i]).c_str(),
                   o.reason.c_str());
      if (!alone()) abort_job(1);
      return 1;
    }
    if (o.status == Status::interrupted || (root() && interrupted_.load())) return stop_interrupted();
    return -1;
  }

  // One configuration, its trials alone (a distributed one on every rank).
  int run_alone(std::size_t i, bool collective) {
    const Configuration& cfg = todo_[i];
    if (root()) progress_.start(i);
    mark_in_flight({i});
    Outcome o;
    const bool context_ok = guarded(cfg, collective, o, [&] {
      o = run_configuration(bench_for(cfg.problem), cfg, device_, states_, &plan_.timing, &interrupted_,
                            &clocks_);
    });
    if (const int status = stop_after(i, o, context_ok); status >= 0) return status;
    record(i, o);
    return -1;
  }

  // A problem's configurations [begin, end): each checked, prepared and verified (a skipped or
  // failed one recorded at once), then the ready ones timed round-robin and recorded. One short of
  // device memory while others hold theirs has those timed and released first, then tries again.
  // `collective`: distributed configurations, every rank taking each step in the same order.
  int run_group(std::size_t begin, std::size_t end, bool collective) {
    std::vector<std::unique_ptr<Timed>> held;
    std::vector<std::size_t> index;
    for (std::size_t i = begin; i < end; ++i) {
      const Configuration& cfg = todo_[i];
      std::unique_ptr<Timed> p;
      Outcome o;
      bool context_ok = true;
      for (int attempt = 0; attempt < 2 && context_ok; ++attempt) {
        if (attempt == 1) {
          if (!p || !p->short_of_memory || held.empty()) break;
          p.reset();
          if (const int status = time_and_record(held, index, collective); status >= 0) return status;
          held.clear(), index.clear();
        }
        if (root()) progress_.start(i, /*waits=*/true);
        mark_in_flight({i});
        context_ok = guarded(cfg, collective, o, [&] {
          p = collective ? prepare_distributed(bench_for(cfg.problem), cfg, device_, states_)
                         : prepare(bench_for(cfg.problem), cfg, device_, states_, plan_.timing);
        });
        if (p) o = p->outcome();
        if (root() && p && p->short_of_memory && !held.empty())
          progress_.note("short of device memory beside the others held: after their trials");
      }
      if (!context_ok && !held.empty())  // verified, not yet timed: left for --resume
        std::fprintf(stderr,
                     "\nmmlab: %zu verified configurations of this problem were not timed; rerun with "
                     "--resume to time them\n",
                     held.size());
      if (const int status = stop_after(i, o, context_ok); status >= 0) return status;
      if (p && p->ready()) {
        if (root()) progress_.verified(i, end - begin);
        held.push_back(std::move(p));
        index.push_back(i);
        // A distributed group holds at most kHeldRuns runs at once: each holds NCCL's, the copy engines'
        // and the libraries' own memory beside its blocks, which no workspace estimate counts (a four-GPU
        // group of 77 ran out of memory and hung a library's set-up).
        if (collective && held.size() >= kHeldRuns) {
          if (const int status = time_and_record(held, index, collective); status >= 0) return status;
          held.clear(), index.clear();
        }
        continue;
      }
      record(i, o);
    }
    return time_and_record(held, index, collective);
  }

  // The held configurations' trials, interleaved, then their rows: the exit status, or -1.
  int time_and_record(std::vector<std::unique_ptr<Timed>>& held, const std::vector<std::size_t>& index,
                      bool collective) {
    if (held.empty()) return -1;
    std::vector<Timed*> group;
    for (auto& p : held) group.push_back(p.get());
    const std::string id = output_.run_id(index.front());
    for (Timed* p : group) p->outcome().interleave_group = group.size() > 1 ? id : "";
    mark_in_flight(index);
    const auto t0 = std::chrono::steady_clock::now();
    Outcome error;
    const bool context_ok = guarded(group.front()->configuration(), collective, error, [&] {
      time_interleaved(group, plan_.timing, &interrupted_, &clocks_, plan_.seed ^ splitmix64(index.front()),
                       collective);
    });
    const double share =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / double(group.size());
    for (std::size_t g = 0; g < group.size(); ++g) {
      Outcome& o = group[g]->outcome();
      if (error.status == Status::failed) {  // which configuration's trial failed is not known
        o.status = Status::failed;
        o.reason = error.reason + " (during the interleaved trials of its problem)";
      }
      if (const int status = stop_after(index[g], o, context_ok); status >= 0) return status;
      record(index[g], o, share);
    }
    return -1;
  }

  // Counted on every rank (the exit status is agreed); written and reported by rank 0.
  void record(std::size_t i, const Outcome& o, double seconds = -1) {
    output_.count(o.status);
    if (!root()) return;
    output_.record(i, todo_[i], o);
    progress_.finish(i, o, seconds);
  }

  int stop_interrupted() {
    clear_in_flight();  // an interrupt is not a crash: --resume runs them again
    if (!root()) return MMLAB_INTERRUPTED;
    std::fprintf(stderr, "\nmmlab: interrupted; %zu rows written to %s.%s\n", output_.rows(),
                 output_.where().c_str(), plan_.output.empty() ? "" : " Rerun with --resume to complete.");
    if (!alone()) abort_job(MMLAB_INTERRUPTED);
    return MMLAB_INTERRUPTED;
  }

  int finish() {
    clear_in_flight();
    if (root())
      std::fprintf(stderr, "mmlab: %zu ok, %zu skipped, %zu failed; rows in %s%s%s\n", output_.count_of(Status::ok),
                   output_.count_of(Status::skipped), output_.count_of(Status::failed), output_.where().c_str(),
                   plan_.output.empty() ? "" : ", samples in ", plan_.samples_output.c_str());
    return agree_any_failed(output_.count_of(Status::failed)) ? 1 : 0;
  }

  const RunPlan& plan_;
  const DeviceInfo& device_;
  const std::atomic<bool>& interrupted_;
  RunOutput output_;
  std::vector<Configuration> todo_;
  std::size_t recorded_ = 0;
  StateCache states_;
  ClockMonitor clocks_;
  Progress progress_;
  std::unique_ptr<Workbench> bench_;
  static constexpr std::size_t kHeldRuns = 12;
};

}  // namespace

int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted, RowSink* sink) {
  Schedule schedule(plan, device, interrupted, sink);
  schedule.open_output_and_agree();
  schedule.report_left_out();
  if (plan.dry_run) return schedule.dry_run();
  schedule.announce();
  return schedule.run_all();
}

}  // namespace mmlab
