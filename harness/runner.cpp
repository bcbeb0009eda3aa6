#include "harness/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "harness/cuda_check.hpp"
#include "harness/random.hpp"
#include "harness/timing.hpp"

namespace mmlab {

const char* git_revision();  // generated at build time

const CsvRow& result_columns() {
  static const CsvRow columns = {
      // identity
      "run_id", "timestamp", "git_revision", "host", "device", "sm_count", "compute_capability",
      "cuda_runtime", "driver", "seed",
      // what ran
      "algorithm", "variant", "params", "block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z",
      "cluster_x", "cluster_y", "cluster_z", "shared_bytes", "device_bytes", "m", "n", "k", "scope",
      "repeats", "l2_flush", "warmup",
      // statistics (ms per launch)
      "trials", "min_ms", "max_ms", "mean_ms", "std_ms", "median_ms", "ci_lo_ms", "ci_hi_ms", "gflops",
      // outcome
      "status", "reason", "verified", "max_rel_err", "max_abs_err", "mse", "frac_err_over_1e-3"};
  return columns;
}

const CsvRow& sample_columns() {
  static const CsvRow columns = {"run_id", "trial", "ms"};
  return columns;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::failed: return "failed";
    case Status::interrupted: return "interrupted";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Workbench

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Above this many multiply-adds the reference is computed on the GPU, below it by Eigen.
constexpr double kHostReferenceLimit = 256.0 * 256.0 * 256.0;
// Device memory kept free for the CUDA context, cuBLAS and the comparison.
constexpr std::size_t kDeviceReserve = std::size_t(512) << 20;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
  return buf;
}
}  // namespace

Workbench::Workbench(const Problem& p, const DeviceInfo& d, unsigned long long seed)
    : problem_(p), device_(d), seed_(seed) {
  if (device_.present) {
    cudaStream_t s;
    MMLAB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_ = s;
  }
}

Workbench::~Workbench() {
  if (stream_) cudaStreamDestroy(stream_);
}

bool Workbench::reference_on_device() const {
  const Problem& p = problem_;
  return device_.present && double(p.m) * double(p.n) * double(p.k) > kHostReferenceLimit;
}

Reason Workbench::prepare_device() {
  if (d_a_.get()) return std::nullopt;
  const Problem& p = problem_;
  const double bytes = 4.0 * (double(p.m) * p.k + double(p.k) * p.n + double(p.m) * p.n) +
                       (reference_on_device() ? 8.0 * double(p.m) * p.n : 0.0);
  const std::size_t free = free_device_bytes();
  if (bytes + kDeviceReserve > double(free))
    return "problem needs " + gib(bytes) + " of device memory (A, B, C" +
           (reference_on_device() ? ", float64 reference" : "") + "), " + gib(double(free)) + " free";
  d_a_ = Buffer(sizeof(float) * p.m * p.k, Buffer::Kind::device);
  d_b_ = Buffer(sizeof(float) * p.k * p.n, Buffer::Kind::device);
  d_c_ = Buffer(sizeof(float) * p.m * p.n, Buffer::Kind::device);
  fill_random_device(d_a_.as<float>(), std::size_t(p.m) * p.k, seed_, kMatrixA, stream_);
  fill_random_device(d_b_.as<float>(), std::size_t(p.k) * p.n, seed_, kMatrixB, stream_);
  MMLAB_CHECK(cudaStreamSynchronize(stream_));
  return std::nullopt;
}

void Workbench::prepare_host() {
  if (h_a_) return;
  const Problem& p = problem_;
  const std::size_t na = std::size_t(p.m) * p.k, nb = std::size_t(p.k) * p.n, nc = std::size_t(p.m) * p.n;
  float* base;
  if (device_.present) {  // pinned, so end_to_end copies run at full speed
    pinned_ = Buffer(sizeof(float) * (na + nb + nc), Buffer::Kind::pinned_host);
    base = pinned_.as<float>();
  } else {
    host_storage_.resize(na + nb + nc);
    base = host_storage_.data();
  }
  h_a_ = base;
  h_b_ = base + na;
  h_c_ = base + na + nb;
  fill_random_host(h_a_, na, seed_, kMatrixA);
  fill_random_host(h_b_, nb, seed_, kMatrixB);
}

void Workbench::ensure_reference() {
  if (reference_ready_) return;
  const Problem& p = problem_;
  if (reference_on_device()) {
    if (auto why = prepare_device()) throw CudaError("float64 reference: " + *why);
    d_ref_ = Buffer(sizeof(double) * p.m * p.n, Buffer::Kind::device);
    reference_device(device_a(), device_b(), d_ref_.as<double>(), p.m, p.n, p.k, stream_);
    MMLAB_CHECK(cudaStreamSynchronize(stream_));
  } else {
    prepare_host();
    h_ref_.resize(std::size_t(p.m) * p.n);
    reference_host(h_a_, h_b_, h_ref_.data(), p.m, p.n, p.k);
  }
  reference_ready_ = true;
}

Verdict Workbench::verify_device_output(const float* c_device) {
  ensure_reference();
  const std::size_t count = std::size_t(problem_.m) * problem_.n;
  if (reference_on_device())
    return judge(compare_device(c_device, d_ref_.as<double>(), count, stream_), problem_.k);
  prepare_host();
  MMLAB_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(h_c_, c_device, count * sizeof(float));
  return judge(compare_host(h_c_, h_ref_.data(), count), problem_.k);
}

Verdict Workbench::verify_host_output(const float* c_host) {
  ensure_reference();
  const std::size_t count = std::size_t(problem_.m) * problem_.n;
  if (!reference_on_device()) return judge(compare_host(c_host, h_ref_.data(), count), problem_.k);
  MMLAB_CHECK(cudaMemcpyAsync(device_c(), c_host, count * sizeof(float), cudaMemcpyHostToDevice, stream_));
  return judge(compare_device(device_c(), d_ref_.as<double>(), count, stream_), problem_.k);
}

void* AlgorithmStates::get(const Algorithm& a) {
  if (!a.make_state) return nullptr;
  auto it = states_.find(&a);
  if (it == states_.end()) it = states_.emplace(&a, a.make_state()).first;
  return it->second.get();
}

// ---------------------------------------------------------------------------------------------
// One configuration

namespace {

// The checks the harness makes for every GPU algorithm, from its launch configuration.
Reason launch_limits(const LaunchConfig& lc, const DeviceInfo& d) {
  const auto threads = lc.block.volume();
  if (threads == 0) return "empty block";
  if (threads > (unsigned long long)d.max_threads_per_block)
    return "block " + std::to_string(lc.block.x) + "x" + std::to_string(lc.block.y) + "x" +
           std::to_string(lc.block.z) + " has " + std::to_string(threads) + " threads; the device allows " +
           std::to_string(d.max_threads_per_block);
  if (lc.shared_bytes > d.shared_per_block_optin)
    return "needs " + std::to_string(lc.shared_bytes) +
           " bytes of shared memory per block; the device allows " + std::to_string(d.shared_per_block_optin);
  if (lc.grid.y > d.max_grid_y || lc.grid.z > d.max_grid_z)
    return "grid " + std::to_string(lc.grid.x) + "x" + std::to_string(lc.grid.y) + "x" +
           std::to_string(lc.grid.z) + " exceeds the device's grid limits";
  return std::nullopt;
}

Outcome skipped(std::string why, Outcome o = {}) {
  o.status = Status::skipped;
  o.reason = std::move(why);
  return o;
}

}  // namespace

Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          AlgorithmStates& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted) {
  const Algorithm& alg = *cfg.algorithm;
  const Problem& p = cfg.problem;
  const bool on_device = alg.backend == Backend::device;
  Outcome out;

  if (on_device && !device.present) return skipped(device.absent_reason);
  if (alg.supports)
    if (Reason why = alg.supports(p, cfg.params, device)) return skipped(*why);
  if (alg.launch_config) {
    out.launch = alg.launch_config(p, cfg.params);
    out.launch_known = true;
    if (on_device)
      if (Reason why = launch_limits(out.launch, device)) return skipped(*why, out);
  }
  if (!on_device && cfg.scope != Scope::kernel)
    return skipped(std::string("host algorithm: scope ") + scope_name(cfg.scope) + " does not apply", out);
  if (!on_device && cfg.l2_flush) return skipped("host algorithm: the L2 flush does not apply", out);

  const std::size_t workspace_bytes = alg.workspace(p, cfg.params);
  Buffer workspace, flush;
  if (on_device) {
    if (Reason why = bench.prepare_device()) return skipped(*why, out);
    if (workspace_bytes + kDeviceReserve > free_device_bytes())
      return skipped("workspace of " + gib(double(workspace_bytes)) + " does not fit in free device memory",
                     out);
    workspace = Buffer(workspace_bytes, Buffer::Kind::device);
    out.device_bytes = sizeof(float) * std::size_t(p.m * p.k + p.k * p.n + p.m * p.n) + workspace_bytes;
  } else {
    bench.prepare_host();
  }

  RunArgs args;
  args.problem = p;
  args.params = &cfg.params;
  args.workspace = workspace.get();
  args.state = states.get(alg);
  const std::size_t c_count = std::size_t(p.m) * p.n;
  if (on_device) {
    args.a = bench.device_a();
    args.b = bench.device_b();
    args.c = bench.device_c();
    args.stream = bench.stream();
    poison_device(args.c, c_count, args.stream);
    alg.run(args);
    MMLAB_CHECK(cudaStreamSynchronize(args.stream));
    out.verdict = bench.verify_device_output(args.c);
  } else {
    args.a = bench.host_a();
    args.b = bench.host_b();
    args.c = bench.host_c();
    std::fill(args.c, args.c + c_count, std::nanf(""));
    alg.run(args);
    out.verdict = bench.verify_host_output(args.c);
  }
  if (!out.verdict->ok) {
    out.status = Status::failed;
    out.reason = out.verdict->reason;
    return out;
  }
  if (!timing) return out;

  std::unique_ptr<TrialTimer> timer;
  if (on_device) {
    DeviceTiming t;
    t.algorithm = &alg;
    t.args = args;
    t.scope = cfg.scope;
    t.repeats = cfg.scope == Scope::batched ? timing->repeats : 1;
    if (cfg.l2_flush) {
      flush = Buffer(std::max<std::size_t>(2 * device.l2_bytes, 1 << 20), Buffer::Kind::device);
      t.l2_flush = flush.get();
      t.l2_flush_bytes = flush.bytes();
    }
    if (cfg.scope == Scope::end_to_end) {
      bench.prepare_host();
      t.host_a = bench.host_a();
      t.host_b = bench.host_b();
      t.host_c = bench.host_c();
    }
    timer = make_device_timer(t);
  } else {
    timer = make_host_timer(&alg, args);
  }
  for (int w = 0; w < timing->warmup; ++w) timer->untimed();
  const auto start = std::chrono::steady_clock::now();
  while (!should_stop(out.samples, timing->stop)) {
    if (interrupted && interrupted->load()) {
      out.status = Status::interrupted;
      return out;
    }
    out.samples.push_back(timer->trial_ms());
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timing->stop.adaptive && elapsed > timing->max_seconds && !out.samples.empty()) break;
  }
  out.stats = summarize(out.samples);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The plan

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

std::string version_text(int v) {
  return v ? std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) : "";
}

std::string duration_text(double seconds) {
  const long s = long(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

CsvRow make_row(const std::string& run_id, const RunPlan& plan, const DeviceInfo& device,
                const Configuration& cfg, const Outcome& o) {
  Record r(result_columns());
  const bool on_device = cfg.algorithm->backend == Backend::device;
  r.set("run_id", run_id).set("timestamp", utc_now()).set("git_revision", git_revision());
  r.set("host", hostname()).set("seed", (long long)plan.seed);
  if (on_device) {
    r.set("device", device.present ? device.name : "none");
    if (device.present) {
      r.set("sm_count", device.sm_count)
          .set("compute_capability", std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor))
          .set("driver", version_text(device.driver));
    }
    r.set("cuda_runtime", version_text(device.cuda_runtime));
  } else {
    r.set("device", cpu_name() + " (" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " threads)");
  }
  const LaunchConfig& lc = o.launch;
  r.set("algorithm", cfg.algorithm->name)
      .set("variant", cfg.params.variant())
      .set("params", cfg.params.canonical());
  if (on_device && o.launch_known) {
    r.set("block_x", lc.block.x).set("block_y", lc.block.y).set("block_z", lc.block.z);
    r.set("grid_x", lc.grid.x).set("grid_y", lc.grid.y).set("grid_z", lc.grid.z);
    r.set("cluster_x", lc.cluster.x).set("cluster_y", lc.cluster.y).set("cluster_z", lc.cluster.z);
    r.set("shared_bytes", (long long)lc.shared_bytes);
  }
  r.set("device_bytes", (long long)o.device_bytes);
  r.set("m", cfg.problem.m).set("n", cfg.problem.n).set("k", cfg.problem.k);
  r.set("scope", scope_name(cfg.scope)).set("l2_flush", cfg.l2_flush ? "1" : "0");
  r.set("repeats", cfg.scope == Scope::batched ? plan.timing.repeats : 1).set("warmup", plan.timing.warmup);
  if (o.status == Status::ok) {
    const Stats& s = o.stats;
    r.set("trials", (long long)s.trials).set("min_ms", s.min).set("max_ms", s.max).set("mean_ms", s.mean);
    r.set("std_ms", s.std).set("median_ms", s.median).set("ci_lo_ms", s.ci_lo).set("ci_hi_ms", s.ci_hi);
    r.set("gflops", cfg.algorithm->flop_count(cfg.problem) / (s.median * 1e-3) / 1e9);
  } else {
    r.set("trials", 0LL);
  }
  r.set("status", status_name(o.status)).set("reason", o.reason);
  if (o.verdict) {
    r.set("verified", o.verdict->ok ? "1" : "0").set("max_rel_err", o.verdict->max_rel_err);
    r.set("max_abs_err", o.verdict->max_abs_err).set("mse", o.verdict->mse);
    r.set("frac_err_over_1e-3", o.verdict->frac_over_1e3);
  } else {
    r.set("verified", "0");
  }
  return r.values();
}

// --resume: the keys already recorded, and the samples file rewritten without the samples of
// configurations whose row was never written (an interrupted run).
std::set<std::string> recorded_keys(const RunPlan& plan) {
  std::set<std::string> keys, run_ids;
  std::ifstream probe(plan.output);
  if (!probe) return keys;
  probe.close();
  const CsvTable t = read_csv(plan.output);
  if (t.header.empty()) return keys;
  if (t.header != result_columns())
    throw UsageError(plan.output + ": existing file has a different header; cannot resume into it");
  auto col = [&](const char* name) { return std::size_t(t.column(name)); };
  for (const CsvRow& r : t.rows) {
    keys.insert(configuration_key(r[col("algorithm")], r[col("variant")], r[col("params")],
                                  std::stol(r[col("m")]), std::stol(r[col("n")]), std::stol(r[col("k")]),
                                  r[col("scope")], r[col("l2_flush")]));
    run_ids.insert(r[col("run_id")]);
  }
  std::ifstream sp(plan.samples_output);
  if (sp) {
    sp.close();
    const CsvTable s = read_csv(plan.samples_output);
    std::vector<CsvRow> keep;
    for (const CsvRow& r : s.rows)
      if (run_ids.count(r[0])) keep.push_back(r);
    if (keep.size() != s.rows.size()) {
      const std::string tmp = plan.samples_output + ".tmp";
      {
        std::ofstream o(tmp, std::ios::trunc);
        o << csv_line(sample_columns());
        for (const CsvRow& r : keep) o << csv_line(r);
        if (!o) throw UsageError(tmp + ": cannot be written");
      }
      std::rename(tmp.c_str(), plan.samples_output.c_str());
      std::fprintf(stderr, "mmlab: dropped %zu samples of unfinished configurations from %s\n",
                   s.rows.size() - keep.size(), plan.samples_output.c_str());
    }
  }
  return keys;
}

std::string describe(const Configuration& c) {
  std::ostringstream os;
  os << c.algorithm->name << ' ' << c.params.variant();
  if (!c.params.canonical().empty()) os << ' ' << c.params.canonical();
  os << ' ' << c.problem.m << 'x' << c.problem.n << 'x' << c.problem.k << ' ' << scope_name(c.scope);
  if (c.l2_flush) os << " l2-flush";
  return os.str();
}

}  // namespace

int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted) {
  std::vector<Configuration> todo;
  std::set<std::string> done;
  if (plan.resume) done = recorded_keys(plan);
  for (const Configuration& c : plan.configurations)
    if (!done.count(c.key())) todo.push_back(c);

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
    std::fprintf(stderr, "mmlab: %s (%d SMs, compute capability %d.%d, CUDA %s, driver %s)\n",
                 device.name.c_str(), device.sm_count, device.cc_major, device.cc_minor,
                 version_text(device.cuda_runtime).c_str(), version_text(device.driver).c_str());
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
  std::unique_ptr<Workbench> bench;
  std::size_t counts[4] = {};
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const Configuration& cfg = todo[i];
    if (!bench || !(bench->problem() == cfg.problem)) {
      bench.reset();  // free the last problem's buffers first
      bench = std::make_unique<Workbench>(cfg.problem, device, plan.seed);
    }
    Outcome o;
    try {
      o = run_configuration(*bench, cfg, device, states, &plan.timing, &interrupted);
    } catch (const CudaError& e) {
      o.status = Status::failed;
      o.reason = e.what();
      if (device.present && cudaDeviceSynchronize() != cudaSuccess) {
        // A sticky error: the context is gone; record what happened and stop.
        rows.write(make_row(std::string(session) + "-" + std::to_string(i), plan, device, cfg, o));
        std::fprintf(stderr, "mmlab: fatal CUDA error in %s: %s\n", describe(cfg).c_str(), e.what());
        return 1;
      }
    }
    if (o.status == Status::interrupted || interrupted.load()) {
      std::fprintf(stderr, "\nmmlab: interrupted; %zu rows written to %s. Rerun with --resume to complete.\n",
                   counts[0] + counts[1] + counts[2], plan.output.c_str());
      return 130;
    }
    const std::string run_id = std::string(session) + "-" + std::to_string(i);
    if (!o.samples.empty()) {
      std::vector<CsvRow> lines;
      for (std::size_t t = 0; t < o.samples.size(); ++t)
        lines.push_back({run_id, std::to_string(t), format_double(o.samples[t])});
      samples.write_lines(lines);  // samples first: a row implies its samples are complete
    }
    rows.write(make_row(run_id, plan, device, cfg, o));
    ++counts[int(o.status)];

    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = elapsed / double(i + 1) * double(todo.size() - i - 1);
    std::string result;
    if (o.status == Status::ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.1f GFLOP/s (median %.4g ms, %zu trials; max |err| %.2g, mse %.2g)",
                    cfg.algorithm->flop_count(cfg.problem) / (o.stats.median * 1e6), o.stats.median,
                    o.stats.trials, o.verdict->max_abs_err, o.verdict->mse);
      result = buf;
    } else {
      result = std::string(o.status == Status::failed ? "FAILED: " : "skipped: ") + o.reason;
    }
    std::fprintf(stderr, "[%zu/%zu] %s -> %s  (ETA %s)\n", i + 1, todo.size(), describe(cfg).c_str(),
                 result.c_str(), duration_text(eta).c_str());
  }
  std::fprintf(stderr, "mmlab: %zu ok, %zu skipped, %zu failed; rows in %s, samples in %s\n", counts[0],
               counts[1], counts[2], plan.output.c_str(), plan.samples_output.c_str());
  return counts[int(Status::failed)] ? 1 : 0;
}

}  // namespace mmlab
