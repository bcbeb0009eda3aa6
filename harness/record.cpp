#include "harness/record.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include "core/distributed.hpp"
#include "core/schema.hpp"
#include "harness/pipelines.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return "cpu: " + line.substr(colon + 2);
    }
  return "cpu";
}

// The clock columns from the samples taken after each trial (GPU rows with a clock source).
void set_clocks(Record& r, const Outcome& o) {
  std::vector<double> mhz, watts, joules;
  double hottest = -1;
  unsigned long long reasons = 0;
  for (const ClockSample& c : o.clocks) {
    if (c.sm_mhz > 0) mhz.push_back(c.sm_mhz);
    if (c.power_w >= 0) watts.push_back(c.power_w);
    if (c.energy_j >= 0) joules.push_back(c.energy_j);
    hottest = std::max(hottest, c.temperature_c);
    reasons |= c.throttle;
  }
  if (mhz.empty()) return;
  std::size_t slow = 0;
  for (double v : mhz) slow += v < ClockMonitor::kSlowFraction * o.reference_mhz;
  r.set(Col::clock_source, o.clock_source).set(Col::ref_clock_mhz, o.reference_mhz, 6);
  r.set(Col::clock_mhz, summarize(mhz).median, 6);
  r.set(Col::clock_min_mhz, *std::min_element(mhz.begin(), mhz.end()), 6);
  r.set(Col::slow_trials, (long long)slow);
  if (!watts.empty()) r.set(Col::power_w, summarize(watts).median, 5);
  // The mean, not the median: NVML's counter moves in steps, which only a sum over trials evens out.
  if (!joules.empty() && joules.size() == o.clocks.size())
    r.set(Col::energy_j, summarize(joules).mean, 6);
  if (hottest >= 0) r.set(Col::temp_c, hottest, 4);
  r.set(Col::throttle, throttle_names(reasons));
}

}  // namespace

std::string compute_capability_text(const DeviceInfo& d) {
  return "sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
}

std::string cuda_version_text(int v) {
  return v ? "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) : "";
}

Row make_row(const std::string& run_id, const RunPlan& plan, const DeviceInfo& device,
                const Configuration& cfg, const Outcome& o) {
  Record r(result_columns());
  const Pipeline& pipeline = cfg.pipeline();
  const bool on_device = uses_gpus(cfg);
  r.set(Col::schema, kSchemaVersionNumber).set(Col::run_id, run_id).set(Col::timestamp, utc_now());
  r.set(Col::git_revision, git_revision()).set(Col::host, hostname()).set(Col::seed, plan.seed);
  if (on_device) {
    r.set(Col::device, device.present ? device.name : "none");
    if (device.present)
      r.set(Col::sm_count, device.sm_count)
          .set(Col::compute_capability, compute_capability_text(device))
          .set(Col::cuda_driver, cuda_version_text(device.cuda_driver))
          .set(Col::driver, device.driver_version);
    r.set(Col::cuda_runtime, cuda_version_text(device.cuda_runtime));
  } else {
    r.set(Col::device, cpu_name() + " (" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " threads)");
  }
  r.set(Col::algorithm, cfg.algorithm->name)
      .set(Col::variant, cfg.params.variant())
      .set(Col::params, cfg.params.canonical());
  // What ran: the resolved parameters, whenever the check got as far as resolving them.
  if (!o.resolved.variant().empty()) r.set(Col::resolved, o.resolved.canonical());
  if (!cfg.algorithm->plugin_hash.empty())  // what ran, exactly: the library and its bytes' hash
    r.set(Col::plugin, cfg.algorithm->source).set(Col::plugin_hash, cfg.algorithm->plugin_hash);
  const LaunchConfig& lc = o.launch;
  if (on_device && o.launch_known) {
    r.set(Col::block_x, lc.block.x).set(Col::block_y, lc.block.y).set(Col::block_z, lc.block.z);
    r.set(Col::grid_x, lc.grid.x).set(Col::grid_y, lc.grid.y).set(Col::grid_z, lc.grid.z);
    r.set(Col::cluster_x, lc.cluster.x).set(Col::cluster_y, lc.cluster.y).set(Col::cluster_z, lc.cluster.z);
    r.set(Col::shared_bytes, (long long)lc.shared_bytes);
  }
  r.set(Col::device_bytes, (long long)o.device_bytes);
  r.set(Col::m, cfg.problem.m).set(Col::n, cfg.problem.n).set(Col::k, cfg.problem.k);
  r.set(Col::inputs, inputs_name(cfg.problem.inputs));
  r.set(Col::precision, precision_name(cfg.algorithm->precision_of(cfg.params)));
  r.set(Col::scope, scope_name(cfg.scope)).set(Col::l2_flush, l2_flush_name(cfg.l2_flush));
  if (o.own_inputs && !o.samples.empty()) r.set(Col::trial_inputs, kTrialInputsValues[*o.own_inputs ? 1 : 0]);
  r.set(Col::repeats, cfg.scope == Scope::batched ? plan.timing.repeats : 1).set(Col::warmup, plan.timing.warmup);
  if (!pipeline.collective) {
    r.set(Col::ranks, 1).set(Col::gpus, o.distributed ? o.distributed->gpus : on_device ? 1 : 0);
    const Params& q = o.resolved.variant().empty() ? cfg.params : o.resolved;
    if (q.has("engine")) r.set(Col::engine, q.text("engine"));  // a streamed algorithm's
  } else {
    const Params& q = o.resolved.variant().empty() ? cfg.params : o.resolved;
    r.set(Col::ranks, job().size).set(Col::gpus, pipeline_uses_gpus(pipeline, *cfg.algorithm, q) ? job().size : 0);
    if (q.has("grid")) r.set(Col::grid, q.text("grid"));
    // What ran the local products (a full spec) once the run was made; before, the spec the axis names.
    if (o.distributed && !o.distributed->engine.empty())
      r.set(Col::engine, o.distributed->engine);
    else if (q.has("engine"))
      r.set(Col::engine, distributed_engine_spec(q.text("engine")));
  }
  if (o.predicted_ms > 0) r.set(Col::predicted_ms, o.predicted_ms);  // a single-GPU algorithm's own model
  if (const auto& d = o.distributed) {
    if (o.status == Status::ok && d->phases) {
      r.set(Col::compute_ms, d->compute_ms).set(Col::comm_ms, d->comm_ms).set(Col::wait_ms, d->wait_ms);
      r.set(Col::overlap, d->overlap).set(Col::predicted_ms, d->predicted_ms).set(Col::link_gbs, d->link_gbs);
      r.set(Col::local_gflops, d->local_gflops);
      if (pipeline.collective) r.set(Col::layout_ms, d->layout_ms);
      if (d->bound_ms > 0) r.set(Col::bound_ms, d->bound_ms);
      if (pipeline.collective) r.set(Col::latency_ms, d->latency_ms);
    }
    if (o.verdict) r.set(Col::verified_entries, d->verified_entries);
  }
  if (o.status == Status::ok) {
    const Stats& s = o.stats;
    r.set(Col::trials, (long long)s.trials).set(Col::min_ms, s.min).set(Col::max_ms, s.max).set(Col::mean_ms, s.mean);
    if (s.trials > 1) r.set(Col::std_ms, s.std);
    r.set(Col::median_ms, s.median);
    if (s.trials >= kMinTrialsForCi)
      r.set(Col::ci_lo_ms, s.ci_lo).set(Col::ci_hi_ms, s.ci_hi).set(Col::ci_coverage, s.ci_coverage, 4);
    r.set(Col::gflops, cfg.algorithm->flop_count(cfg.problem) / (s.median * 1e-3) / 1e9);
    r.set(Col::order, order_name(o.interleaved)).set(Col::interleave_group, o.interleave_group);
    if (o.timer) r.set(Col::timer, timer_name(*o.timer));
    if (!o.host_samples.empty()) r.set(Col::host_ms, summarize(o.host_samples).median);
    set_clocks(r, o);
  } else {
    r.set(Col::trials, 0LL);
  }
  // An ok row's reason is a note on how it ran (a distributed run's, or why its GPU time could not be
  // held apart from the host's).
  std::string reason = o.reason;
  if (o.status == Status::ok && !o.timer_note.empty()) reason += (reason.empty() ? "" : "; ") + o.timer_note;
  r.set(Col::status, status_name(o.status)).set(Col::reason, reason);
  if (o.verdict) {  // verified: 1 passed, 0 failed, empty when nothing ran (skipped)
    r.set(Col::verified, o.verdict->ok ? 1LL : 0LL).set(Col::max_rel_err, o.verdict->max_rel_err);
    r.set(Col::max_abs_err, o.verdict->max_abs_err).set(Col::mse, o.verdict->mse);
    r.set(Col::frac_err_over_1e_3, o.verdict->frac_over_1e3);
    r.set(Col::max_sumabs_err, o.verdict->max_sumabs_err).set(Col::mean_sumabs_err, o.verdict->mean_sumabs_err);
  }
  return r.values();
}

}  // namespace mmlab
