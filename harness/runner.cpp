// The plan: resume, open the outputs, and per configuration run it, write its samples and row,
// and report progress. A sticky CUDA error stops the run after recording where it happened.
#include "harness/runner.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>

#include "harness/cuda_check.hpp"
#include "harness/progress.hpp"
#include "harness/record.hpp"
#include "harness/schema.hpp"

namespace mmlab {

int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted) {
  std::vector<Configuration> todo;
  std::set<std::string> done;
  if (plan.resume) done = recorded_keys(plan);
  for (const Configuration& c : plan.configurations)
    if (!done.count(c.key())) todo.push_back(c);

  if (plan.not_compiled)
    std::fprintf(stderr,
                 "mmlab: %zu combinations of the asked axis values have no compiled kernel and are left out "
                 "(`mmlab list` shows what is compiled)\n",
                 plan.not_compiled);
  if (plan.dry_run) {
    for (const Configuration& c : todo) std::cout << describe(c) << '\n';
    std::cout << todo.size() << " configurations";
    if (!done.empty()) std::cout << " (" << plan.configurations.size() - todo.size() << " already recorded)";
    std::cout << '\n';
    return 0;
  }

  const OpenMode mode = plan.overwrite ? OpenMode::overwrite : OpenMode::append;
  CsvWriter rows(plan.output, result_columns(), mode);
  CsvWriter samples(plan.samples_output, sample_columns(), mode);

  if (device.present) {
    std::fprintf(stderr, "mmlab: %s (%d SMs, %s, %s, driver %s)\n", device.name.c_str(), device.sm_count,
                 compute_capability_text(device).c_str(), cuda_version_text(device.cuda_runtime).c_str(),
                 device.driver_version.empty() ? "?" : device.driver_version.c_str());
  } else {
    std::fprintf(stderr,
                 "mmlab: %s. GPU algorithms are recorded as skipped; host algorithms run.\n"
                 "       Results measured on an H100 are in data/ (see README, Results).\n",
                 device.absent_reason.c_str());
  }
  if (!done.empty())
    std::fprintf(stderr, "mmlab: resuming: %zu of %zu configurations already in %s\n",
                 plan.configurations.size() - todo.size(), plan.configurations.size(), plan.output.c_str());

  char session[64];
  std::snprintf(session, sizeof session, "%lx-%d", long(std::time(nullptr)), int(getpid()));
  AlgorithmStates states;
  Progress progress(todo, device);
  std::unique_ptr<Workbench> bench;
  std::size_t counts[4] = {};
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const Configuration& cfg = todo[i];
    const std::string run_id = std::string(session) + "-" + std::to_string(i);
    if (!bench || !(bench->problem() == cfg.problem)) {
      bench.reset();  // free the last problem's buffers first
      bench = std::make_unique<Workbench>(cfg.problem, device, plan.seed);
    }
    progress.start(i);
    Outcome o;
    try {
      o = run_configuration(*bench, cfg, device, states, &plan.timing, &interrupted);
    } catch (const CudaError& e) {
      o.status = Status::failed;
      o.reason = e.what();
      if (device.present && cudaDeviceSynchronize() != cudaSuccess) {
        // A sticky error: the context is gone; record what happened and stop.
        rows.write(make_row(run_id, plan, device, cfg, o));
        std::fprintf(stderr, "\nmmlab: fatal CUDA error in %s: %s\n", describe(cfg).c_str(), e.what());
        return 1;
      }
    } catch (const std::logic_error& e) {  // e.g. a point with no compiled kernel: a bug, recorded
      o.status = Status::failed;
      o.reason = std::string("internal error: ") + e.what();
    }
    if (o.status == Status::interrupted || interrupted.load()) {
      std::fprintf(stderr, "\nmmlab: interrupted; %zu rows written to %s. Rerun with --resume to complete.\n",
                   counts[0] + counts[1] + counts[2], plan.output.c_str());
      return 130;
    }
    if (!o.samples.empty()) {
      std::vector<CsvRow> lines;
      for (std::size_t t = 0; t < o.samples.size(); ++t)
        lines.push_back({run_id, std::to_string(t), format_double(o.samples[t])});
      samples.write_lines(lines);  // samples first: a row implies its samples are complete
    }
    rows.write(make_row(run_id, plan, device, cfg, o));
    ++counts[int(o.status)];
    progress.finish(i, o);
  }
  std::fprintf(stderr, "mmlab: %zu ok, %zu skipped, %zu failed; rows in %s, samples in %s\n", counts[0],
               counts[1], counts[2], plan.output.c_str(), plan.samples_output.c_str());
  return counts[int(Status::failed)] ? 1 : 0;
}

}  // namespace mmlab
