// A distributed configuration on every rank: memory check, inputs, one verified product (C
// poisoned first; every entry of small problems, a sample of every rank's block for large ones,
// against float64 dot products of the regenerated inputs), trials (the slowest rank's time), and
// the analytic model with the local rate and link bandwidth measured in the same job.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/distributed.hpp"
#include "core/random.hpp"
#include "harness/pipeline.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

double host_free_bytes() { return double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)); }

}  // namespace

Outcome run_distributed(const Configuration& cfg, const DeviceInfo& device, const TimingOptions* timing,
                        const std::atomic<bool>* interrupted, unsigned long long seed, Outcome out,
                        ClockMonitor* clocks) {
  const Algorithm& alg = *cfg.algorithm;
  const Problem& p = cfg.problem;
  const Params& q = out.resolved;
  // What this rank is doing, for the watchdog's message should a wait time out.
  const std::string what = alg.name + " " + cfg.params.canonical() + " " + std::to_string(p.m) + "x" +
                           std::to_string(p.n) + "x" + std::to_string(p.k) + ": ";
  job_step(what + "the memory check");
  DistributedOutcome d;
  d.ranks = job().size;
  d.engine = q.text("engine");
  d.grid = q.text("grid");
  d.gpus = d.engine == "eigen" ? 0 : d.ranks;

  // Every rank must agree before anything is allocated: a rank short of memory skips for all.
  const double need = double(alg.workspace(p, q));
  const double free = d.gpus ? double(free_device_bytes()) - double(kDeviceReserve) : host_free_bytes() * 0.8;
  if (max_over_ranks(need > free ? 1 : 0) > 0) {
    out.status = Status::skipped;
    out.reason = "needs " + gib(need) + " per rank; a rank has " + gib(std::max(free, 0.0)) + " free";
    return out;
  }
  DistributedSetup setup{p, &q, &cfg.params, seed, &device};
  std::unique_ptr<DistributedRun> run = alg.make_distributed(setup);

  // Verify once, C poisoned first.
  job_step(what + "the verified product");
  run->poison();
  barrier();
  run->run();
  const CBlock block = run->c_block();
  ErrorStats e = check_entries(block.values.data(), block.cols, block.row0, block.col0, block.rows, block.cols,
                               p.m, p.n, p.k, p.inputs, seed, &d.verified_entries);
  ErrorStats all;
  all.max_abs_err = max_over_ranks(e.max_abs_err);
  all.max_abs_ref = max_over_ranks(e.max_abs_ref);
  all.max_sumabs_err = max_over_ranks(e.max_sumabs_err);
  all.sum_sumabs_err = sum_over_ranks(e.sum_sumabs_err);
  all.sum_sq_err = sum_over_ranks(e.sum_sq_err);
  all.over_1e3 = std::size_t(sum_over_ranks(double(e.over_1e3)));
  all.nonfinite = std::size_t(sum_over_ranks(double(e.nonfinite)));
  all.count = std::size_t(sum_over_ranks(double(e.count)));
  d.verified_entries = sum_over_ranks(d.verified_entries);
  out.verdict = judge(all, p.k, p.inputs, alg.precision_of(q));
  out.distributed = d;
  if (!out.verdict->ok) {
    out.status = Status::failed;
    out.reason = out.verdict->reason;
    return out;
  }
  if (!timing) return out;

  out.timer = Timer::host;  // the slowest rank's steady clock, every rank's work started by a barrier
  std::vector<double> compute, comm, wait, hidden;
  const auto warmup = [&] {
    job_step(what + "a warm-up run");
    barrier();
    run->run();
  };
  const auto trial = [&] {  // the slowest rank's time
    job_step(what + "trial " + std::to_string(out.samples.size()));
    barrier();
    const auto t0 = std::chrono::steady_clock::now();
    run->run();
    const double local =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double total = max_over_ranks(local);
    const PhaseTimes ph = run->phases();
    const double c = max_over_ranks(ph.compute_ms), m = max_over_ranks(ph.comm_ms);
    // Time not spent in products is communication not hidden, then waiting (skew, synchronisation).
    const double exposed = std::max(0.0, total - c), comm_exposed = std::min(exposed, m);
    compute.push_back(c), comm.push_back(m), wait.push_back(exposed - comm_exposed);
    hidden.push_back(m > 0 ? 1 - comm_exposed / m : 1);
    if (clocks && d.gpus) {  // the slowest rank's clock, the hottest and most power-hungry rank
      ClockSample c = clocks->sample(nullptr);
      c.sm_mhz = -max_over_ranks(-c.sm_mhz);
      c.power_w = max_over_ranks(c.power_w);
      c.temperature_c = max_over_ranks(c.temperature_c);
      out.clocks.push_back(c);
      out.clock_source = clocks->source();
      out.reference_mhz = clocks->reference_mhz();
    }
    return total;
  };
  if (!run_trials(warmup, trial, *timing, interrupted, true, out.samples)) {
    out.status = Status::interrupted;
    return out;
  }
  out.stats = summarize(out.samples);
  d.compute_ms = summarize(compute).median, d.comm_ms = summarize(comm).median;
  d.wait_ms = summarize(wait).median, d.overlap = summarize(hidden).median;

  // The model, with this job's own local rate and link bandwidth.
  job_step(what + "the model's rate and link measurements");
  const Model model = run->model();
  double largest = 0;
  for (const ModelStep& s : model.steps) largest = std::max({largest, s.bytes_in, s.bytes_out});
  const double mine = run->local_gflops();
  d.local_gflops = -max_over_ranks(-mine);  // the slowest rank's rate
  d.link_gbs = run->link_gbytes_per_s(max_over_ranks(std::min(largest, double(1 << 30))));
  d.predicted_ms = max_over_ranks(model.predict_ms(d.local_gflops, d.link_gbs));
  if (!std::isfinite(d.link_gbs)) d.link_gbs = 0;          // one rank: no link
  if (!std::isfinite(d.local_gflops)) d.local_gflops = 0;  // no rank had work
  out.distributed = d;
  out.reason = run->note();
  return out;
}

}  // namespace mmlab
