// The plan: open the outputs (resuming), and per configuration run it, write its samples and row,
// and report progress. A sticky CUDA error stops the run after recording where it happened.
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
#include "harness/record.hpp"
#include "core/plugin.hpp"
#include "harness/resume.hpp"
#include "harness/sink.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

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
  std::string list;
  if (job().rank == 0) try {
      const std::set<std::string> done = open();
      std::size_t other = 0;
      for (std::size_t i = 0; i < plan.configurations.size(); ++i) {
        if (for_other_jobs(plan.configurations[i]))
          ++other;
        else if (!done.count(plan.configurations[i].key()))
          list += std::to_string(i) + ",";
      }
      if (other)
        std::fprintf(stderr,
                     "mmlab: %zu distributed configuration%s grids for other rank counts than %d; "
                     "left to their own mpirun -np jobs\n",
                     other, other == 1 ? " has" : "s have", job().size);
    } catch (const UsageError& e) {
      list = std::string("!") + e.what();
    }
  broadcast_text(list);
  if (!list.empty() && list[0] == '!') throw UsageError(list.substr(1));
  std::vector<std::size_t> todo;
  for (std::size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1)
    todo.push_back(std::stoul(list.substr(at, comma - at)));
  std::size_t other = 0;
  for (const Configuration& c : plan.configurations) other += for_other_jobs(c);
  *recorded = plan.configurations.size() - other - todo.size();
  return todo;
}

}  // namespace

namespace {

// A run's id, unique across the runs of a process (a counter: runs called in a loop or from threads
// within one second), its processes (the pid) and the pids a host reuses (the time, and random bits
// for processes of other hosts or containers that share a file): seconds-pid-counter-random, in hex.
std::string new_session() {
  static std::atomic<unsigned> runs{0};
  static const unsigned nonce = std::random_device{}() & 0xffffu;
  char session[80];
  std::snprintf(session, sizeof session, "%lx-%d-%x%04x", long(std::time(nullptr)), int(getpid()), runs++, nonce);
  return session;
}

// One run of a plan, in the steps execute() names: open the outputs and agree on what is left,
// announce, then per configuration run, record and report; stop early on an interrupt or a lost
// CUDA context. Rank 0 alone writes; the other ranks take part in distributed configurations only.
class Run {
 public:
  Run(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted, RowSink* sink)
      : plan_(plan), device_(device), interrupted_(interrupted), sink_(sink), clocks_(device),
        progress_(todo_, device) {
    session_ = new_session();
  }

  // The rows file first (locked and repaired before --resume reads it), then the samples (which
  // --resume may have rewritten); every rank learns the same list of what is left to run.
  void open_outputs_and_agree() {
    const OpenMode mode = plan_.overwrite ? OpenMode::overwrite : OpenMode::append;
    const auto numbers = [](const CsvRow& header) {
      return [&header](const CsvRow& row, const std::string& where) {
        check_existing_row(header, row, where);
      };
    };
    const auto open = [&] {
      if (files()) {
        files_.emplace(plan_.output, plan_.samples_output, mode, numbers(result_columns()), numbers(sample_columns()));
        rows_.add(&*files_);
      }
      rows_.add(sink_);  // after the files: a row the caller sees is on disk
      std::set<std::string> done;
      if (plan_.resume) done = recorded_keys(plan_);
      if (files()) files_->open_samples();
      if (plan_.resume && files()) record_in_flight(done);
      return done;
    };
    for (std::size_t i : agree_on_todo(plan_, &recorded_, open)) todo_.push_back(plan_.configurations[i]);
    if (job().rank != 0) rows_.add(sink_);  // rank 0's tee was made with its files (open)
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
      // --stop-after: past it (rank 0's clock) no configuration starts. Before a collective group every
      // rank agrees (the other ranks reach only those); before rank 0's own, rank 0 alone decides.
      if (plan_.stop_after_s > 0 && (collective || root())) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const bool past = root() && s > plan_.stop_after_s;
        if (collective ? max_over_ranks(past ? 1 : 0) > 0 : past) {
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
  // Whether the run writes CSV files (a plan without an output hands its rows to the sink alone).
  bool files() const { return !plan_.dry_run && !plan_.output.empty(); }
  std::string where() const {
    return plan_.output.empty() ? std::string("the caller's sink") : plan_.output;
  }

  // A configuration's samples and then its row, to the files and the caller's sink (the tee).
  void emit(const Row& row, const std::vector<Row>& lines = {}) {
    rows_.samples(lines);
    rows_.row(row);
  }

  // The configurations being prepared or timed, named in <output>.inflight while they run, so that a
  // job that ends inside one (a library's abort, a crash, or a kill from outside) leaves word of it:
  // --resume runs such a configuration once more, marked as a second try, and records one that a job
  // ended inside on its second try as a failed row with that reason, then goes on (an experiment's
  // script reruns the job with --resume until it completes).
  // (The marker itself is the files' sink's, sink.hpp's CsvFiles.)
  void mark_in_flight(const std::vector<std::size_t>& which) {
    if (!root() || !files()) return;
    std::vector<std::pair<std::string, bool>> keys;
    for (std::size_t i : which) keys.emplace_back(todo_[i].key(), retried_.count(todo_[i].key()) > 0);
    files_->mark_in_flight(keys);
  }
  void clear_in_flight() {
    if (root() && files()) files_->clear_in_flight();
  }
  void record_in_flight(std::set<std::string>& done) {
    const CsvFiles::InFlight left = files_->read_in_flight();
    retried_.insert(left.once.begin(), left.once.end());  // run again, as a second try
    for (std::size_t i = 0; i < plan_.configurations.size(); ++i) {
      const Configuration& cfg = plan_.configurations[i];
      if (!left.twice.count(cfg.key()) || done.count(cfg.key())) continue;
      Outcome o;
      o.status = Status::failed;
      o.reason = "two jobs ended while this configuration ran (" + std::to_string(left.named) +
                 " in flight the second time: an abort or crash, in a library or the lab); recorded by --resume";
      emit(make_row(session_ + "-inflight-" + std::to_string(i), plan_, device_, cfg, o));
      ++counts_[int(Status::failed)];
      done.insert(cfg.key());
      std::fprintf(stderr, "mmlab: recorded as failed (two jobs ended inside it): %s\n", describe(cfg).c_str());
    }
    files_->clear_in_flight();
  }
  bool alone() const { return job().size == 1; }
  std::string run_id(std::size_t i) const { return session_ + "-" + std::to_string(i); }

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
      emit(make_row(run_id(i), plan_, device_, todo_[i], o));
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
    ++counts_[int(o.status)];
    if (root()) record(i, o);
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
      ++counts_[int(o.status)];
      if (root()) record(i, o);
    }
    return time_and_record(held, index, collective);
  }

  // The held configurations' trials, interleaved, then their rows: the exit status, or -1.
  int time_and_record(std::vector<std::unique_ptr<Timed>>& held, const std::vector<std::size_t>& index,
                      bool collective) {
    if (held.empty()) return -1;
    std::vector<Timed*> group;
    for (auto& p : held) group.push_back(p.get());
    const std::string id = session_ + "-" + std::to_string(index.front());
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
      ++counts_[int(o.status)];
      if (root()) record(index[g], o, share);
    }
    return -1;
  }

  // Samples first: a row implies its samples are complete.
  void record(std::size_t i, const Outcome& o, double seconds = -1) {
    std::vector<Row> lines;  // in sample_columns()' order
    if (!o.samples.empty()) {
      const bool host = o.host_samples.size() == o.samples.size();
      for (std::size_t t = 0; t < o.samples.size(); ++t) {
        const ClockSample* c = t < o.clocks.size() ? &o.clocks[t] : nullptr;
        lines.push_back({Cell::of_text(run_id(i)), Cell::of_whole((long long)t), Cell::of_number(o.samples[t]),
                         c && c->sm_mhz > 0 ? Cell::of_number(c->sm_mhz, 6) : Cell{},
                         host ? Cell::of_number(o.host_samples[t]) : Cell{},
                         c && c->energy_j >= 0 ? Cell::of_number(c->energy_j, 6) : Cell{}});
      }
    }
    emit(make_row(run_id(i), plan_, device_, todo_[i], o), lines);
    progress_.finish(i, o, seconds);
  }

  int stop_interrupted() {
    clear_in_flight();  // an interrupt is not a crash: --resume runs them again
    if (!root()) return MMLAB_INTERRUPTED;
    std::fprintf(stderr, "\nmmlab: interrupted; %zu rows written to %s.%s\n", counts_[0] + counts_[1] + counts_[2],
                 where().c_str(), plan_.output.empty() ? "" : " Rerun with --resume to complete.");
    if (!alone()) abort_job(MMLAB_INTERRUPTED);
    return MMLAB_INTERRUPTED;
  }

  int finish() {
    clear_in_flight();
    if (root())
      std::fprintf(stderr, "mmlab: %zu ok, %zu skipped, %zu failed; rows in %s%s%s\n", counts_[0], counts_[1],
                   counts_[2], where().c_str(), plan_.output.empty() ? "" : ", samples in ",
                   plan_.samples_output.c_str());
    return max_over_ranks(double(counts_[int(Status::failed)])) > 0 ? 1 : 0;
  }

  const RunPlan& plan_;
  const DeviceInfo& device_;
  const std::atomic<bool>& interrupted_;
  RowSink* sink_;  // the caller's, or null
  std::optional<CsvFiles> files_;  // --output's
  RowTee rows_;                    // the files, then the caller's sink
  std::vector<Configuration> todo_;
  std::size_t recorded_ = 0;
  std::string session_;
  StateCache states_;
  ClockMonitor clocks_;
  Progress progress_;
  std::unique_ptr<Workbench> bench_;
  static constexpr std::size_t kHeldRuns = 12;
  std::size_t counts_[4] = {};
  std::set<std::string> retried_;  // configurations a job ended inside once: this is their second try
};

}  // namespace

int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted, RowSink* sink) {
  Run run(plan, device, interrupted, sink);
  run.open_outputs_and_agree();
  run.report_left_out();
  if (plan.dry_run) return run.dry_run();
  run.announce();
  return run.run_all();
}

}  // namespace mmlab
