// One configuration on one GPU or the host, in the four phases of pipeline.hpp, and the timing
// of one or of a group round-robin.
#include "harness/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <memory>
#include <random>

#include "core/invocation.hpp"
#include "runtime/audit.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"
#include "runtime/timing.hpp"

namespace mmlab {

// Phase 1: can this configuration run on this device? Prepares the run: resolved, checked, sized.
Reason check_configuration(const Configuration& cfg, const DeviceInfo& device, StateCache& states,
                           PreparedRun& run, Outcome& out) {
  const Algorithm& alg = *cfg.algorithm;
  const Pipeline& pipeline = cfg.pipeline();
  const Problem& p = cfg.problem;
  const Invocation invocation(alg, device);
  // A distributed algorithm makes its own checks (the grid, the engine, the job), on every rank.
  if (pipeline.gpu && !pipeline.by_engine && !device.present) {
    out.resolved = invocation.resolve(p, cfg.params);
    return device.absent_reason;
  }
  run = invocation.prepare(p, cfg.params, states);
  out.resolved = run.params();
  if (run.skip()) return run.skip();
  out.predicted_ms = run.predicted_ms();  // NaN: none (not recorded)
  out.launch_known = run.launch().has_value();
  if (out.launch_known) out.launch = *run.launch();
  if (pipeline.kernel_only && cfg.scope != Scope::kernel)
    return std::string("host algorithm: scope ") + scope_name(cfg.scope) + " does not apply";
  if (pipeline.kernel_only && cfg.l2_flush) return "host algorithm: the L2 flush does not apply";
  return std::nullopt;
}

namespace {

// A streamed row's audit per trial, off the clock: fewer entries than its verification's (256 dot
// products of length k from the seed); a C right on half its entries passes them with probability 2^-256.
constexpr std::size_t kStreamedAuditEntries = 256;

// FreshTrials::suspicious's rule: every trial on seen inputs below this share of the fastest trial on
// inputs of its own, at least kFromMemoryTrials of those, their median at least kFromMemoryFloorMs.
constexpr double kFromMemoryRatio = 0.9, kFromMemoryFloorMs = 0.05;
constexpr std::size_t kFromMemoryTrials = 5;

// The host's FP32 ceiling, an upper bound never reached: every logical CPU x two FMA units x its
// widest vectors' lanes (16 with AVX-512, 8 with AVX, 4 otherwise) x 2 FLOP x the highest clock the
// kernel reports (cpufreq's maximum; else twice /proc/cpuinfo's MHz, for turbo). 0 when unknown.
double host_peak_gflops() {
  static const double peak = [] {
    std::ifstream info("/proc/cpuinfo");
    std::string line;
    double mhz = 0, lanes = 4;
    long cpus = 0;
    while (std::getline(info, line)) {
      if (line.rfind("processor", 0) == 0) ++cpus;
      if (line.rfind("cpu MHz", 0) == 0) mhz = std::max(mhz, 2 * std::atof(line.substr(line.find(':') + 1).c_str()));
      if (line.rfind("flags", 0) == 0)
        lanes = line.find(" avx512f") != std::string::npos ? 16 : line.find(" avx") != std::string::npos ? 8 : 4;
    }
    std::ifstream max_khz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (double khz = 0; max_khz >> khz && khz > 0) mhz = khz / 1e3;
    return cpus > 0 && mhz > 0 ? double(cpus) * 2 * lanes * 2 * mhz * 1e-3 : 0.0;
  }();
  return peak;
}

// Every entry of a host C the NaN `bits` (std::nanf's by default: the verification's).
void poison_host(float* c, std::size_t count, std::uint32_t bits = 0x7FC00000u) {
  float nan;
  std::memcpy(&nan, &bits, sizeof nan);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < long(count); ++i) c[i] = nan;
}

// Phase 2: inputs, output and workspace; the buffers run() receives.
Reason prepare_buffers(Workbench& bench, const Configuration& cfg, const PreparedRun& run, Buffer& workspace,
                       Outcome& out, Buffers& io, bool* short_of_memory) {
  const Pipeline& pipeline = cfg.pipeline();
  const Problem& p = cfg.problem;
  if (pipeline.host_operands) {  // pinned when there is a GPU
    if (Reason why = bench.prepare_host()) return why;
    io.a = bench.host_a(), io.b = bench.host_b(), io.c = bench.host_c();
    if (pipeline.own_memory) out.device_bytes = run.workspace_bytes();
    return std::nullopt;
  }
  if (Reason why = bench.prepare_device()) return why;
  if (cfg.scope == Scope::end_to_end)  // copies from and to host memory
    if (Reason why = bench.prepare_host()) return why;
  const std::size_t workspace_bytes = run.workspace_bytes();
  if (workspace_bytes + kDeviceReserve > free_device_bytes()) {
    *short_of_memory = true;
    return "workspace of " + gib(double(workspace_bytes)) + " does not fit in free device memory";
  }
  workspace = Buffer(workspace_bytes, Buffer::Kind::device);
  out.device_bytes = sizeof(float) * std::size_t(p.m * p.k + p.k * p.n + p.m * p.n) + workspace_bytes;
  io.a = bench.device_a(), io.b = bench.device_b(), io.c = bench.device_c();
  io.workspace = workspace.get();
  return std::nullopt;
}

// Phase 3: one run on a NaN-poisoned output, compared with the float64 reference.
Verdict verify(Workbench& bench, const Pipeline& pipeline, const PreparedRun& run, const Buffers& io,
               double* checked) {
  const Algorithm& alg = run.algorithm();
  const Problem& p = run.problem();
  const std::size_t c_count = std::size_t(p.m) * p.n;
  const Precision precision = alg.precision_of(run.params());
  const Verification how = pipeline.verification;
  bench.use_device_inputs(bench.seed());  // a timed trial before may have left inputs of its own
  bench.use_host_inputs(bench.seed());
  if (how == Verification::host) {
    bench.ensure_reference();  // before the call: what is judged is C as run() left it
    std::fill(io.c, io.c + c_count, std::nanf(""));
    run.run(io, bench.stream());
    const std::vector<float> left(io.c, io.c + c_count);
    return bench.verify_host_output(left.data(), precision);
  }
  if (how == Verification::entries) {  // too large for a whole reference, perhaps: entries of it
    poison_host(io.c, c_count);
    run.run(io, bench.stream());
    const ErrorStats e = check_entries(io.c, p.n, 0, 0, p.m, p.n, p.m, p.n, p.k, p.inputs, bench.seed(), checked);
    return judge(e, p.k, p.inputs, precision);
  }
  poison_device(io.c, c_count, bench.stream());
  run.run(io, bench.stream());
  MMLAB_CHECK(cudaStreamSynchronize(bench.stream()));
  return bench.verify_device_output(io.c, precision);
}

// Phase 4's timer: CUDA events (and graphs, copies, the L2 flush) on the GPU, the steady clock on
// the host.
std::unique_ptr<TrialTimer> make_timer(Workbench& bench, const Configuration& cfg, const PreparedRun& run,
                                       const Buffers& io, const TimingOptions& timing,
                                       std::function<void()> after_stop) {
  if (!cfg.pipeline().device_timer) return make_host_timer(&run, io, bench.stream());
  DeviceTiming t;
  t.run = &run;
  t.io = io;
  t.stream = bench.stream();
  t.scope = cfg.scope;
  t.repeats = cfg.scope == Scope::batched ? timing.repeats : 1;
  t.block_timeout_s = timing.block_timeout_s;
  t.blocking = timing.blocking;
  t.after_stop = std::move(after_stop);
  if (cfg.l2_flush) {
    const Buffer& flush = bench.l2_flush_buffer();
    t.l2_flush = flush.get();
    t.l2_flush_bytes = flush.bytes();
  }
  if (cfg.scope == Scope::end_to_end) {  // prepare_buffers() made the host copies
    t.host_a = bench.host_a();
    t.host_b = bench.host_b();
    t.host_c = bench.host_c();
  }
  return make_device_timer(t);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Prepared::Prepared(const Configuration& cfg, Outcome outcome) : Timed(cfg, std::move(outcome)) {}
Prepared::~Prepared() = default;

void Prepared::warmup() { timer_->untimed(); }

unsigned long long FreshTrials::draw() {
  std::random_device device;
  const unsigned long long n = (static_cast<unsigned long long>(device()) << 32) ^ device();
  return n ? n : 1;
}

bool FreshTrials::repeated_before(std::size_t index) const {
  return nonce && (index == 1 + nonce % 2 || index == 3 + (nonce >> 8) % 2);
}

unsigned long long FreshTrials::seed(std::size_t index, unsigned long long verified) const {
  const unsigned long long s = splitmix64(nonce + 0x9E3779B97F4A7C15ull * (index + 1));
  return s == verified ? s + 1 : s;
}

bool FreshTrials::suspicious(const std::vector<double>& repeated, const std::vector<double>& fresh) {
  if (repeated.size() < 2 || fresh.size() < kFromMemoryTrials) return false;
  if (summarize(fresh).median < kFromMemoryFloorMs) return false;
  const double seen = *std::max_element(repeated.begin(), repeated.end());
  return seen < kFromMemoryRatio * *std::min_element(fresh.begin(), fresh.end());
}

Reason FreshTrials::confirm(std::vector<double>& repeated, std::vector<double>& fresh,
                            const std::function<double(bool fresh)>& one) {
  std::vector<double> seen, own;
  for (int i = 0; i < kConfirmPairs; ++i) {  // in turns: seen first, then own first
    const bool seen_first = i % 2 == 0;
    if (seen_first) seen.push_back(one(false));
    own.push_back(one(true));
    if (!seen_first) seen.push_back(one(false));
  }
  repeated.insert(repeated.end(), seen.begin(), seen.end());
  fresh.insert(fresh.end(), own.begin(), own.end());
  int inversions = 0;
  for (double s : seen)
    for (double o : own) inversions += s >= kFromMemoryRatio * o;
  if (inversions > kConfirmInversions) return std::nullopt;
  char why[640];
  std::snprintf(why, sizeof why,
                "answers from memory: on the inputs it was verified on faster than on inputs of their own (A and B "
                "made again outside the clock), as a C kept by its inputs' content or its calls is: %d trials of each "
                "in turns to confirm what its timed trials showed, the seen ones %.4g-%.4g ms (median %.4g), the own "
                "%.4g-%.4g ms (median %.4g), %d of %d pairs with the seen one within %.0f%% of the own",
                kConfirmPairs, *std::min_element(seen.begin(), seen.end()), *std::max_element(seen.begin(), seen.end()),
                summarize(seen).median, *std::min_element(own.begin(), own.end()),
                *std::max_element(own.begin(), own.end()), summarize(own).median, inversions,
                kConfirmPairs * kConfirmPairs, 100 * (1 - kFromMemoryRatio));
  return std::string(why);
}

// Every timed trial on inputs of its own (FreshTrials), where the configuration was given a nonce:
// A and B made again in place from the trial's seed, outside the clock (on the GPU, or on the host for
// host operands; an end_to_end trial's host copies made on the GPU and copied down), its C judged after
// the clock stopped at sampled entries against float64 of those inputs.
double Prepared::trial(ClockMonitor* clocks) {
  const Algorithm& alg = *cfg_.algorithm;
  const bool gpu = cfg_.pipeline().gpu;
  const std::size_t index = trials_++;
  if (fresh_.repeated_before(index)) repeated_ms_.push_back(timed_on(bench_->seed(), false).ms);
  // NVML's energy counter around the trial (a GPU trial's clock is the GPU's own: the host's calls
  // before it are not inside it).
  const double energy_before = clocks && gpu ? clocks->energy_j() : -1;
  const TrialTime t = timed_on(fresh_ ? fresh_.seed(index, bench_->seed()) : bench_->seed(), bool(fresh_));
  if (t.host_ms >= 0) outcome_.host_samples.push_back(t.host_ms);
  outcome_.timer = timer_->timer();
  outcome_.timer_note = timer_->unblocked_reason();
  const double ms = t.ms;
  if (cfg_.pipeline().reports && alg.streamed_report) reports_.push_back(alg.streamed_report(run_.args(io_, stream_)));
  if (clocks && gpu) {
    const double energy_after = clocks->energy_j();
    ClockSample c = clocks->sample(stream_);
    if (energy_before >= 0 && energy_after >= 0 && energy_resolved(ms)) c.energy_j = energy_after - energy_before;
    outcome_.clocks.push_back(c);
    outcome_.clock_source = clocks->source();
    outcome_.reference_mhz = clocks->reference_mhz();
  }
  return ms;
}

TrialTime Prepared::timed_on(unsigned long long seed, bool fresh) {
  const Pipeline& pipeline = cfg_.pipeline();
  const std::size_t c_count = std::size_t(cfg_.problem.m) * cfg_.problem.n;
  if (pipeline.host_operands || cfg_.scope == Scope::end_to_end) bench_->use_host_inputs(seed);
  if (!pipeline.host_operands) bench_->use_device_inputs(seed);
  // Every timed trial starts from a C of NaN (a NaN of its own, never the verification's), before the
  // clock starts (a GPU row's fill is enqueued ahead of its start event), and its C is judged after
  // the clock stopped (a GPU row's right behind its stop event, after_stop()): a kernel that
  // computes on some calls only, or leaves the verified C in place, fails.
  const std::uint32_t poison = trial_poison_bits(poisons_++);
  if (host_audit_ || streamed_audit_) poison_host(io_.c, c_count, poison);
  if (audit_) poison_device(io_.c, c_count, stream_, poison);
  fresh_now_ = fresh, seed_now_ = seed, auditing_ = true;
  const TrialTime t = timer_->trial();
  auditing_ = false;
  // A host C as run() left it, copied at once: a thread still writing after the return is not waited for.
  std::vector<float> left;
  if (pipeline.verification == Verification::host) left.assign(io_.c, io_.c + c_count);
  if (host_audit_) {  // after the clock stopped
    ++host_audited_;
    host_differed_ += !(fresh ? judge_own_inputs(left.data(), seed, true)
                              : host_audit_->verify_host_output(left.data(), cfg_.algorithm->precision_of(outcome_.resolved)).ok);
  }
  if (streamed_audit_) {  // sampled entries against float64 of the trial's inputs, made from its seed
    ++host_audited_;
    host_differed_ += !judge_own_inputs(io_.c, seed, false);
  }
  return t;
}

void Prepared::after_stop() {
  if (!auditing_ || !audit_) return;  // a warm-up
  const Problem& p = cfg_.problem;
  if (fresh_now_) audit_->after_fresh_trial(io_.c, stream_, p.m, p.n, p.k, p.inputs, seed_now_);
  else audit_->after_trial(io_.c, stream_);
}

bool Prepared::judge_own_inputs(const float* c, unsigned long long seed, bool scan) {
  const Problem& p = cfg_.problem;
  const std::size_t count = std::size_t(p.m) * p.n;
  if (scan && std::any_of(c, c + count, [](float x) { return std::isnan(x); })) return false;  // a poison left
  double checked = 0;
  const ErrorStats e = check_entries(c, p.n, 0, 0, p.m, p.n, p.m, p.n, p.k, p.inputs, seed, &checked, kStreamedAuditEntries);
  return judge(e, p.k, p.inputs, cfg_.algorithm->precision_of(outcome_.resolved)).ok;
}

void Prepared::finish() {
  // Trials on seen inputs faster than every trial on its own: confirmed by more of each, in turns,
  // every one audited as the timed trials are (before the audits below are read).
  Reason from_memory;
  if (outcome_.status == Status::ok && FreshTrials::suspicious(repeated_ms_, outcome_.samples)) {
    std::vector<double> fresh = outcome_.samples;
    from_memory = FreshTrials::confirm(repeated_ms_, fresh, [&](bool own) {
      return timed_on(own ? fresh_.seed(trials_++, bench_->seed()) : bench_->seed(), own).ms;
    });
  }
  if (host_differed_ > 0 && !outcome_.samples.empty()) {
    outcome_.status = Status::failed;
    outcome_.reason = "the C of " + std::to_string(host_differed_) + " of " + std::to_string(host_audited_) +
                      " timed trials is not the product (each trial's C poisoned before it and judged against "
                      "float64 after it" + std::string(fresh_ ? ", each on inputs of its own made again outside the clock" : "") +
                      "): C computed on some calls only, or kept from an earlier call";
    outcome_.verdict->ok = false;
    outcome_.samples.clear(), outcome_.host_samples.clear(), outcome_.clocks.clear();
    return;
  }
  if (audit_ && !outcome_.samples.empty()) {
    const OutputAudit::Result r = audit_->result(stream_);
    if (r.differed > 0) {
      outcome_.status = Status::failed;
      outcome_.reason = OutputAudit::describe(r, audit_->deterministic());
      outcome_.verdict->ok = false;
      outcome_.samples.clear(), outcome_.host_samples.clear(), outcome_.clocks.clear();
      return;
    }
  }
  if (!outcome_.samples.empty()) outcome_.stats = summarize(outcome_.samples);
  if (from_memory) {
    outcome_.status = Status::failed, outcome_.reason = *from_memory;
    outcome_.verdict->ok = false;
    outcome_.samples.clear(), outcome_.host_samples.clear(), outcome_.clocks.clear();
    return;
  }
  if (!outcome_.samples.empty() && peak_gflops_ > 0) {
    // Faster than the GPU (or host) can multiply: the work ran elsewhere (another stream) or not at all.
    const bool host = !cfg_.pipeline().gpu;
    const double gflops = cfg_.algorithm->flop_count(cfg_.problem) / (outcome_.stats.median * 1e-3) / 1e9;
    if (gflops > peak_gflops_) {
      char why[320];
      std::snprintf(why, sizeof why,
                    "not a measurement: a median of %.4g ms implies %.4g TFLOP/s, above this %s's peak of %.4g "
                    "for products on %s; the work ran outside the timed stream, not at all, or on faster units "
                    "than the configuration declares",
                    outcome_.stats.median, gflops / 1e3, host ? "host" : "GPU", peak_gflops_ / 1e3,
                    host ? "its FP32 vector units" : arithmetic_name(cfg_.algorithm->arithmetic_of(outcome_.resolved)).c_str());
      outcome_.status = Status::failed, outcome_.reason = why;
      outcome_.samples.clear(), outcome_.host_samples.clear(), outcome_.clocks.clear();
      return;
    }
  }
  if (reports_.empty() || !outcome_.distributed) return;
  // Medians over the trials; the share of the copies hidden behind the products, as a distributed
  // row counts its communication.
  std::vector<double> compute, copy, wait, hidden, predicted;
  for (std::size_t i = 0; i < reports_.size() && i < outcome_.samples.size(); ++i) {
    const StreamedReport& r = reports_[i];
    const double exposed = std::max(0.0, outcome_.samples[i] - r.compute_ms), copy_exposed = std::min(exposed, r.copy_ms);
    compute.push_back(r.compute_ms), copy.push_back(r.copy_ms), wait.push_back(exposed - copy_exposed);
    hidden.push_back(r.copy_ms > 0 ? 1 - copy_exposed / r.copy_ms : 1);
    predicted.push_back(r.predicted_ms);
  }
  if (compute.empty()) return;
  DistributedOutcome& d = *outcome_.distributed;
  const StreamedReport& last = reports_.back();
  d.gpus = last.gpus;
  d.compute_ms = summarize(compute).median, d.comm_ms = summarize(copy).median;
  d.wait_ms = summarize(wait).median, d.overlap = summarize(hidden).median;
  d.predicted_ms = summarize(predicted).median, d.link_gbs = last.link_gbs, d.local_gflops = last.local_gflops;
}

std::unique_ptr<Prepared> prepare(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                                  StateCache& states, const TimingOptions& timing) {
  auto out = std::make_unique<Prepared>(cfg, Outcome{});
  Outcome& o = out->outcome_;
  if (Reason why = check_configuration(cfg, device, states, out->run_, o)) {
    o.status = Status::skipped, o.reason = *why;
    return out;
  }
  Buffers& io = out->io_;
  if (Reason why = prepare_buffers(bench, cfg, out->run_, out->workspace_, o, io, &out->short_of_memory)) {
    o.status = Status::skipped, o.reason = *why;
    return out;
  }
  double checked = 0;
  o.verdict = verify(bench, cfg.pipeline(), out->run_, io, &checked);
  const Pipeline& pipeline = cfg.pipeline();
  if (pipeline.reports) {
    o.distributed = DistributedOutcome{};
    o.distributed->verified_entries = checked;
    o.distributed->phases = bool(cfg.algorithm->streamed_report);
    o.distributed->gpus = o.resolved.has("gpus") ? int(o.resolved.integer("gpus")) : 1;
    if (o.resolved.has("engine")) o.distributed->engine = o.resolved.text("engine");
  }
  if (!o.verdict->ok) {
    o.status = Status::failed, o.reason = o.verdict->reason;
    return out;
  }
  out->stream_ = bench.stream();
  out->timer_ = make_timer(bench, cfg, out->run_, io, timing, [p = out.get()] { p->after_stop(); });
  out->peak_gflops_ = pipeline.gpu ? device.peak_gflops(cfg.algorithm->arithmetic_of(o.resolved)) : host_peak_gflops();
  if (pipeline.verification == Verification::host) out->host_audit_ = &bench;
  if (pipeline.verification == Verification::entries) out->streamed_audit_ = &bench;
  out->bench_ = &bench;
  out->fresh_.nonce = FreshTrials::draw();
  o.own_inputs = true;
  if (pipeline.verification == Verification::device) {  // the verified C is still in io.c
    const Problem& p = cfg.problem;
    out->audit_ = std::make_unique<OutputAudit>(
        io.c, std::size_t(p.m) * p.n, cfg.algorithm->deterministic(p, o.resolved), bench.audit_samples(),
        tolerance(p.k, cfg.algorithm->precision_of(o.resolved)), p.inputs == Inputs::uniform, bench.stream());
    // After the verified C is hashed: a call with the stream held must leave C poisoned; its C, once
    // released, is audited as a trial's is.
    const StreamAudit held = audit_stream([&] { out->run_.run(io, bench.stream()); }, io.c,
                                          std::size_t(p.m) * p.n, bench.stream());
    if (held.changed > 0) {
      o.status = Status::failed, o.verdict->ok = false;
      o.reason = "work ran outside the lab's stream: with that stream held, " + std::to_string(held.changed) +
                 " entries of C were written within " + std::to_string(int(kStreamAuditSettleMs)) +
                 " ms of the call's return (the work was enqueued on another stream, or by another thread)";
      return out;
    }
    if (held.unfinished > 0) {
      o.status = Status::failed, o.verdict->ok = false;
      o.reason = "work ran outside the lab's stream: when that stream had finished, " +
                 std::to_string(held.unfinished) + " entries of C were still unwritten (work the stream did "
                 "not wait for: another stream's, or another thread's)";
      return out;
    }
    out->audit_->after_trial(io.c, bench.stream());
  }
  return out;
}

bool time_alone(Timed& p, const TimingOptions& timing, const std::atomic<bool>* interrupted, ClockMonitor* clocks) {
  const bool collective = p.configuration().pipeline().collective;
  const bool done = run_trials([&] { p.warmup(); }, [&] { return p.trial(clocks); }, timing, interrupted,
                               collective, p.outcome().samples);
  if (!done) p.outcome().status = Status::interrupted;
  p.finish();
  return done;
}

bool time_interleaved(const std::vector<Timed*>& group, const TimingOptions& timing,
                      const std::atomic<bool>* interrupted, ClockMonitor* clocks, std::uint64_t seed,
                      bool collective) {
  const auto agreed = [&](double v) { return collective ? max_over_ranks(v) : v; };
  for (Timed* p : group)
    for (int w = 0; w < timing.warmup; ++w) p->warmup();
  // Every rank shuffles alike (the same seed) and stops each configuration at the same trial (its
  // samples, the slowest rank's times, are the same on every rank).
  std::mt19937_64 rng(seed);
  std::vector<Timed*> order = group;
  const auto start = std::chrono::steady_clock::now();
  // Adaptive trials: the group's time limit is each configuration's, summed.
  const double limit = timing.max_seconds * double(group.size());
  for (bool more = true; more;) {
    more = false;
    std::shuffle(order.begin(), order.end(), rng);
    for (Timed* p : order) {
      if (should_stop(p->outcome().samples, timing.stop)) continue;
      if (agreed(interrupted && interrupted->load() ? 1 : 0) > 0) {
        for (Timed* q : group) q->outcome().status = Status::interrupted;
        return false;
      }
      p->outcome().samples.push_back(p->trial(clocks));
      more = true;
    }
    if (timing.stop.adaptive && agreed(seconds_since(start)) > limit) break;
  }
  for (Timed* p : group) {
    p->outcome().interleaved = group.size() > 1;
    p->finish();
  }
  return true;
}

bool run_trials(const std::function<void()>& warmup, const std::function<double()>& trial,
                const TimingOptions& timing, const std::atomic<bool>* interrupted, bool collective,
                std::vector<double>& samples) {
  const auto agreed = [&](double v) { return collective ? max_over_ranks(v) : v; };
  for (int w = 0; w < timing.warmup; ++w) warmup();
  const auto start = std::chrono::steady_clock::now();
  while (!should_stop(samples, timing.stop)) {
    if (agreed(interrupted && interrupted->load() ? 1 : 0) > 0) return false;
    samples.push_back(trial());
    if (timing.stop.adaptive && agreed(seconds_since(start)) > timing.max_seconds) break;
  }
  return true;
}

Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          StateCache& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted, ClockMonitor* clocks) {
  const TimingOptions untimed;
  std::unique_ptr<Timed> p = cfg.pipeline().collective
                                 ? prepare_distributed(bench, cfg, device, states)
                                 : prepare(bench, cfg, device, states, timing ? *timing : untimed);
  if (p->ready() && timing) time_alone(*p, *timing, interrupted, clocks);
  return std::move(p->outcome());
}

}  // namespace mmlab
