// The plan: resume, open the outputs, and per configuration run it, write its samples and row,
// and report progress. A sticky CUDA error stops the run after recording where it happened.
#include "harness/runner.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <optional>

#include "core/distributed.hpp"
#include "core/schema.hpp"
#include "harness/pipeline.hpp"
#include "harness/progress.hpp"
#include "harness/record.hpp"
#include "harness/resume.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

// A distributed configuration whose grid needs another number of ranks than this job has.
bool for_other_jobs(const Configuration& c) {
  return c.algorithm->backend == Backend::distributed && c.params.has("grid") &&
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
                     "mmlab: %zu distributed configurations have grids for other rank counts than %d; "
                     "left to their own mpirun -np jobs\n",
                     other, job().size);
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

int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted) {
  const bool root = job().rank == 0, alone = job().size == 1;
  // Rank 0 alone writes; the others take part in the distributed configurations only. The rows
  // file first (locked and repaired before --resume reads it), then the samples (which --resume
  // may have rewritten).
  const OpenMode mode = plan.overwrite ? OpenMode::overwrite : OpenMode::append;
  std::optional<CsvWriter> rows, samples;
  const auto open = [&] {
    if (!plan.dry_run) rows.emplace(plan.output, result_columns(), mode);
    std::set<std::string> done;
    if (plan.resume) done = recorded_keys(plan);
    if (!plan.dry_run) samples.emplace(plan.samples_output, sample_columns(), mode);
    return done;
  };
  std::size_t recorded = 0;
  std::vector<Configuration> todo;
  for (std::size_t i : agree_on_todo(plan, &recorded, open)) todo.push_back(plan.configurations[i]);

  if (root && plan.not_compiled)
    std::fprintf(stderr,
                 "mmlab: %zu combinations of the asked axis values have no compiled kernel and are left out "
                 "(`mmlab list` shows what is compiled)\n",
                 plan.not_compiled);
  if (plan.dry_run) {
    if (!root) return 0;
    for (const Configuration& c : todo) std::cout << describe(c) << '\n';
    std::cout << todo.size() << " configurations";
    if (recorded) std::cout << " (" << recorded << " already recorded)";
    std::cout << '\n';
    return 0;
  }

  if (root) {
    if (device.present) {
      std::fprintf(stderr, "mmlab: %s (%d SMs, %s, %s, driver %s)%s\n", device.name.c_str(), device.sm_count,
                   compute_capability_text(device).c_str(), cuda_version_text(device.cuda_runtime).c_str(),
                   device.driver_version.empty() ? "?" : device.driver_version.c_str(),
                   alone ? "" : (", rank 0 of " + std::to_string(job().size)).c_str());
    } else {
      std::fprintf(stderr,
                   "mmlab: %s. GPU algorithms are recorded as skipped; host algorithms run.\n"
                   "       Results measured on GPUs are in data/ (see README, Results).\n",
                   device.absent_reason.c_str());
    }
    if (recorded)
      std::fprintf(stderr, "mmlab: resuming: %zu of %zu configurations already in %s\n", recorded,
                   plan.configurations.size(), plan.output.c_str());
  }

  char session[64];
  std::snprintf(session, sizeof session, "%lx-%d", long(std::time(nullptr)), int(getpid()));
  AlgorithmStates states;
  Progress progress(todo, device);
  std::unique_ptr<Workbench> bench;
  std::size_t counts[4] = {};
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const Configuration& cfg = todo[i];
    const bool collective = cfg.algorithm->backend == Backend::distributed;
    if (!root && !collective) continue;  // single-process configurations run on rank 0 only
    const std::string run_id = std::string(session) + "-" + std::to_string(i);
    if (!bench || !(bench->problem() == cfg.problem)) {
      bench.reset();  // free the last problem's buffers first
      bench = std::make_unique<Workbench>(cfg.problem, device, plan.seed);
    }
    if (root) progress.start(i);
    Outcome o;
    try {
      o = run_configuration(*bench, cfg, device, states, &plan.timing, &interrupted);
    } catch (const CudaError& e) {
      if (collective && !alone) {  // the other ranks would wait for this one forever
        std::fprintf(stderr, "\nmmlab: rank %d: fatal error in %s: %s\n", job().rank, describe(cfg).c_str(),
                     e.what());
        abort_job(1);
      }
      o.status = Status::failed;
      o.reason = e.what();
      if (device.present && cudaDeviceSynchronize() != cudaSuccess) {
        // A sticky error: the context is gone; record what happened and stop.
        rows->write(make_row(run_id, plan, device, cfg, o));
        std::fprintf(stderr, "\nmmlab: fatal CUDA error in %s: %s\n", describe(cfg).c_str(), e.what());
        if (!alone) abort_job(1);
        return 1;
      }
    } catch (const std::logic_error& e) {  // e.g. a point with no compiled kernel: a bug, recorded
      if (collective && !alone) {
        std::fprintf(stderr, "\nmmlab: rank %d: internal error in %s: %s\n", job().rank,
                     describe(cfg).c_str(), e.what());
        abort_job(1);
      }
      o.status = Status::failed;
      o.reason = std::string("internal error: ") + e.what();
    }
    if (o.status == Status::interrupted || (root && interrupted.load())) {
      if (!root) return 130;
      std::fprintf(stderr, "\nmmlab: interrupted; %zu rows written to %s. Rerun with --resume to complete.\n",
                   counts[0] + counts[1] + counts[2], plan.output.c_str());
      if (!alone) abort_job(130);
      return 130;
    }
    ++counts[int(o.status)];
    if (!root) continue;
    if (!o.samples.empty()) {
      std::vector<CsvRow> lines;
      for (std::size_t t = 0; t < o.samples.size(); ++t)
        lines.push_back({run_id, std::to_string(t), format_double(o.samples[t])});
      samples->write_lines(lines);  // samples first: a row implies its samples are complete
    }
    rows->write(make_row(run_id, plan, device, cfg, o));
    progress.finish(i, o);
  }
  if (root)
    std::fprintf(stderr, "mmlab: %zu ok, %zu skipped, %zu failed; rows in %s, samples in %s\n", counts[0],
                 counts[1], counts[2], plan.output.c_str(), plan.samples_output.c_str());
  const double failed = max_over_ranks(double(counts[int(Status::failed)]));
  return failed > 0 ? 1 : 0;
}

}  // namespace mmlab
