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

// Phase 1, every backend's (a distributed one's too): resolved, checked and sized.
Reason check_configuration(const Configuration& cfg, const DeviceInfo& device, StateCache& states,
                           PreparedRun& run, Outcome& out) {
  run = Invocation(*cfg.algorithm, device).prepare(cfg.problem, cfg.params, states);
  out.resolved = run.params();
  if (run.skip()) return run.skip();
  out.predicted_ms = run.predicted_ms();  // NaN: none (not recorded)
  out.launch_known = run.launch().has_value();
  if (out.launch_known) out.launch = *run.launch();
  return std::nullopt;
}

namespace {

// A streamed row's audit per trial, off the clock: fewer entries than its verification's (256 dot
// products of length k from the seed); a C right on half its entries passes them with probability 2^-256.
constexpr std::size_t kStreamedAuditEntries = 256;

// FreshTrials::suspicious's rule: a trial on seen inputs below this share of the fastest trial on
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

std::size_t c_count(const Problem& p) { return std::size_t(p.m) * p.n; }

// A host C against the product of the inputs made from `seed`: kStreamedAuditEntries entries against
// float64, and (`scan`) no entry left poisoned (not a streamed C of an out-of-core size: the sampled
// entries only).
bool judged_on_own_inputs(const float* c, const Problem& p, Precision precision, unsigned long long seed, bool scan) {
  if (scan && std::any_of(c, c + c_count(p), [](float x) { return std::isnan(x); })) return false;  // a poison left
  double checked = 0;
  const ErrorStats e = check_entries(c, p.n, 0, 0, p.m, p.n, p.m, p.n, p.k, p.inputs, seed, &checked, kStreamedAuditEntries);
  return judge(e, p.k, p.inputs, precision).ok;
}

}  // namespace

// Each timed trial's C, judged as the verification judged it (issue #81's trials on inputs of their own
// against float64 of those): poisoned with a NaN of its own before the clock starts, judged after it
// stopped. One kind per backend.
class TrialAudit {
 public:
  virtual ~TrialAudit() = default;
  virtual void poison(std::uint32_t bits) = 0;  // before the clock (a GPU row's fill ahead of its start event)
  // Right behind the stop event, on the GPU; after the clock stopped, on the host.
  virtual void after_stop(bool /*fresh*/, unsigned long long /*seed*/) {}
  virtual void after_trial(bool /*fresh*/, unsigned long long /*seed*/) {}
  virtual Reason result() = 0;  // why the row fails, or nullopt
};

namespace {

// A device C: the verified one hashed (or sampled, where the algorithm may be nondeterministic), each
// trial's compared with it on the GPU, a trial on inputs of its own judged there against float64.
class DeviceAudit final : public TrialAudit {
 public:
  DeviceAudit(Workbench& bench, const Configuration& cfg, const Outcome& o, float* c)
      : audit_(c, c_count(cfg.problem), cfg.algorithm->deterministic(cfg.problem, o.resolved), bench.audit_samples(),
               tolerance(cfg.problem.k, cfg.algorithm->precision_of(o.resolved)), cfg.problem.inputs == Inputs::uniform,
               bench.stream()),
        problem_(cfg.problem), c_(c), stream_(bench.stream()) {}
  OutputAudit& output() { return audit_; }
  void poison(std::uint32_t bits) override { poison_device(c_, c_count(problem_), stream_, bits); }
  void after_stop(bool fresh, unsigned long long seed) override {
    const Problem& p = problem_;
    if (fresh) audit_.after_fresh_trial(c_, stream_, p.m, p.n, p.k, p.inputs, seed);
    else audit_.after_trial(c_, stream_);
  }
  Reason result() override {
    const OutputAudit::Result r = audit_.result(stream_);
    if (r.differed == 0) return std::nullopt;
    return OutputAudit::describe(r, audit_.deterministic());
  }

 private:
  OutputAudit audit_;
  Problem problem_;
  float* c_;
  CUstream_st* stream_;
};

// A C in host memory: each trial's judged after the clock stopped against float64, the whole of it
// (a host row: as run() left it, copied at once, so a thread still writing after the return is not
// waited for) or kStreamedAuditEntries entries (a streamed row's, perhaps too large for a whole reference).
class HostAudit final : public TrialAudit {
 public:
  enum class Judged { whole, entries };  // a host row's C, a streamed row's
  HostAudit(Workbench& bench, const Configuration& cfg, const Outcome& o, float* c, Judged judged, bool fresh)
      : bench_(bench), problem_(cfg.problem), precision_(cfg.algorithm->precision_of(o.resolved)), c_(c),
        whole_(judged == Judged::whole), fresh_(fresh) {}
  void poison(std::uint32_t bits) override { poison_host(c_, c_count(problem_), bits); }
  void after_trial(bool fresh, unsigned long long seed) override {
    ++audited_;
    if (!whole_) {
      differed_ += !judged_on_own_inputs(c_, problem_, precision_, seed, false);
      return;
    }
    const std::vector<float> left(c_, c_ + c_count(problem_));
    differed_ += !(fresh ? judged_on_own_inputs(left.data(), problem_, precision_, seed, true)
                         : bench_.verify_host_output(left.data(), precision_).ok);
  }
  Reason result() override {
    if (differed_ == 0) return std::nullopt;
    return "the C of " + std::to_string(differed_) + " of " + std::to_string(audited_) +
           " timed trials is not the product (each trial's C poisoned before it and judged against float64 after it" +
           std::string(fresh_ ? ", each on inputs of its own made again outside the clock" : "") +
           "): C computed on some calls only, or kept from an earlier call";
  }

 private:
  Workbench& bench_;
  Problem problem_;
  Precision precision_;
  float* c_;
  bool whole_, fresh_;
  std::size_t audited_ = 0, differed_ = 0;
};

}  // namespace

// The ceiling a row's median is held to, and its words for the message.
struct Ceiling {
  double gflops = 0;  // 0: none known
  std::string where, units;
};

// What one single-process backend does in each phase: one class per backend (DevicePhases,
// HostPhases, StreamedPhases), chosen once per configuration by phases_of, so that the phases below
// test no fact of it (CUTLASS's OperationProfiler, one per kind, is the model). A distributed
// configuration's phases are distributed_pipeline.cpp's.
class Phases {
 public:
  virtual ~Phases() = default;
  // Phase 1, before the run is prepared: why this machine cannot run it at all, or nullopt.
  virtual Reason unavailable(const Configuration&, const DeviceInfo&, Outcome&) const { return std::nullopt; }
  // Phase 1, after: why the sweep's scope or L2 flush does not apply to it.
  virtual Reason applies(const Configuration&) const { return std::nullopt; }
  // Phase 2: inputs, output and workspace; the buffers run() receives.
  virtual Reason buffers(Workbench& bench, const Configuration& cfg, const PreparedRun& run, Buffer& workspace,
                         Outcome& out, Buffers& io, bool* short_of_memory) const = 0;
  // Phase 3: one run on a NaN-poisoned output against float64 (`checked`: the entries judged, where
  // sampled), and what that adds to the row.
  virtual Verdict verify(Workbench& bench, const PreparedRun& run, const Buffers& io, double* checked) const = 0;
  virtual void verified(const Configuration&, double /*checked*/, Outcome&) const {}
  // Phase 4: the timer; the inputs of a trial made from `seed`; each trial's audit (null and `failed`
  // where the verified run already failed one); the ceiling the times are held to; the clocks sampled
  // (none for a host row); a report of the trial's phases.
  virtual std::unique_ptr<TrialTimer> timer(Workbench& bench, const Configuration& cfg, const PreparedRun& run,
                                            const Buffers& io, const TimingOptions& timing,
                                            std::function<void()> after_stop) const = 0;
  virtual void use_inputs(Workbench& bench, const Configuration& cfg, unsigned long long seed) const = 0;
  virtual std::unique_ptr<TrialAudit> audit(Workbench& bench, const Configuration& cfg, const PreparedRun& run,
                                            const Outcome& o, const Buffers& io, bool fresh, Reason& failed) const = 0;
  virtual Ceiling ceiling(const Configuration& cfg, const Outcome& o, const DeviceInfo& d) const = 0;
  virtual ClockMonitor* clocks(ClockMonitor* monitor) const { return monitor; }
  virtual void report(const Configuration&, const PreparedRun&, const Buffers&, CUstream_st*,
                      std::vector<StreamedReport>&) const {}
};

namespace {

Ceiling gpu_ceiling(const Configuration& cfg, const Outcome& o, const DeviceInfo& d) {
  const Arithmetic units = cfg.algorithm->arithmetic_of(o.resolved);
  return {d.peak_gflops(units), "GPU", arithmetic_name(units)};
}

// A configuration that needs a GPU, on a machine without one: why (its parameters resolved for the row).
Reason gpu_unavailable(const Configuration& cfg, const DeviceInfo& device, Outcome& out) {
  if (device.present) return std::nullopt;
  out.resolved = Invocation(*cfg.algorithm, device).resolve(cfg.problem, cfg.params);
  return device.absent_reason;
}

// A device algorithm: operands on the GPU, the whole C verified there, timed on the GPU's clock.
class DevicePhases final : public Phases {
 public:
  Reason unavailable(const Configuration& cfg, const DeviceInfo& device, Outcome& out) const override {
    return gpu_unavailable(cfg, device, out);
  }
  Reason buffers(Workbench& bench, const Configuration& cfg, const PreparedRun& run, Buffer& workspace, Outcome& out,
                 Buffers& io, bool* short_of_memory) const override {
    const Problem& p = cfg.problem;
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
  Verdict verify(Workbench& bench, const PreparedRun& run, const Buffers& io, double*) const override {
    poison_device(io.c, c_count(run.problem()), bench.stream());
    run.run(io, bench.stream());
    MMLAB_CHECK(cudaStreamSynchronize(bench.stream()));
    return bench.verify_device_output(io.c, run.algorithm().precision_of(run.params()));
  }
  std::unique_ptr<TrialTimer> timer(Workbench& bench, const Configuration& cfg, const PreparedRun& run,
                                    const Buffers& io, const TimingOptions& timing,
                                    std::function<void()> after_stop) const override {
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
    if (cfg.scope == Scope::end_to_end) {  // buffers() made the host copies
      t.host_a = bench.host_a();
      t.host_b = bench.host_b();
      t.host_c = bench.host_c();
    }
    return make_device_timer(t);
  }
  void use_inputs(Workbench& bench, const Configuration& cfg, unsigned long long seed) const override {
    if (cfg.scope == Scope::end_to_end) bench.use_host_inputs(seed);  // the copies' source
    bench.use_device_inputs(seed);
  }
  // The verified C (still in io.c) hashed; then a call with the stream held must leave C poisoned, and
  // its C, once released, is audited as a trial's is.
  std::unique_ptr<TrialAudit> audit(Workbench& bench, const Configuration& cfg, const PreparedRun& run,
                                    const Outcome& o, const Buffers& io, bool, Reason& failed) const override {
    auto audit = std::make_unique<DeviceAudit>(bench, cfg, o, io.c);
    const StreamAudit held = audit_stream([&] { run.run(io, bench.stream()); }, io.c, c_count(cfg.problem), bench.stream());
    if (held.changed > 0) {
      failed = "work ran outside the lab's stream: with that stream held, " + std::to_string(held.changed) +
               " entries of C were written within " + std::to_string(int(kStreamAuditSettleMs)) +
               " ms of the call's return (the work was enqueued on another stream, or by another thread)";
      return nullptr;
    }
    if (held.unfinished > 0) {
      failed = "work ran outside the lab's stream: when that stream had finished, " +
               std::to_string(held.unfinished) + " entries of C were still unwritten (work the stream did "
               "not wait for: another stream's, or another thread's)";
      return nullptr;
    }
    audit->output().after_trial(io.c, bench.stream());
    return audit;
  }
  Ceiling ceiling(const Configuration& cfg, const Outcome& o, const DeviceInfo& d) const override {
    return gpu_ceiling(cfg, o, d);
  }
};

// Operands in (pinned) host memory, timed on the host's clock: a host algorithm's and a streamed one's.
class HostOperandPhases : public Phases {
 public:
  Reason buffers(Workbench& bench, const Configuration&, const PreparedRun&, Buffer&, Outcome&, Buffers& io,
                 bool*) const override {
    if (Reason why = bench.prepare_host()) return why;  // pinned when there is a GPU
    io.a = bench.host_a(), io.b = bench.host_b(), io.c = bench.host_c();
    return std::nullopt;
  }
  std::unique_ptr<TrialTimer> timer(Workbench& bench, const Configuration&, const PreparedRun& run, const Buffers& io,
                                    const TimingOptions&, std::function<void()>) const override {
    return make_host_timer(&run, io, bench.stream());
  }
  void use_inputs(Workbench& bench, const Configuration&, unsigned long long seed) const override {
    bench.use_host_inputs(seed);
  }
};

// A host algorithm: the whole C as run() left it against float64; the kernel scope only.
class HostPhases final : public HostOperandPhases {
 public:
  Reason applies(const Configuration& cfg) const override {
    if (cfg.scope != Scope::kernel) return std::string("host algorithm: scope ") + scope_name(cfg.scope) + " does not apply";
    if (cfg.l2_flush) return std::string("host algorithm: the L2 flush does not apply");
    return std::nullopt;
  }
  Verdict verify(Workbench& bench, const PreparedRun& run, const Buffers& io, double*) const override {
    const std::size_t count = c_count(run.problem());
    bench.ensure_reference();  // before the call: what is judged is C as run() left it
    std::fill(io.c, io.c + count, std::nanf(""));
    run.run(io, bench.stream());
    const std::vector<float> left(io.c, io.c + count);
    return bench.verify_host_output(left.data(), run.algorithm().precision_of(run.params()));
  }
  std::unique_ptr<TrialAudit> audit(Workbench& bench, const Configuration& cfg, const PreparedRun&, const Outcome& o,
                                    const Buffers& io, bool fresh, Reason&) const override {
    return std::make_unique<HostAudit>(bench, cfg, o, io.c, HostAudit::Judged::whole, fresh);
  }
  Ceiling ceiling(const Configuration&, const Outcome&, const DeviceInfo&) const override {
    return {host_peak_gflops(), "host", "its FP32 vector units"};
  }
  ClockMonitor* clocks(ClockMonitor*) const override { return nullptr; }  // no GPU's clocks to sample
};

// A streamed algorithm (its own device memory, operands in host memory, timed host to host): C perhaps
// too large for a whole reference, so entries of it against float64; its phases reported per trial.
class StreamedPhases final : public HostOperandPhases {
 public:
  Reason unavailable(const Configuration& cfg, const DeviceInfo& device, Outcome& out) const override {
    return gpu_unavailable(cfg, device, out);
  }
  Reason buffers(Workbench& bench, const Configuration& cfg, const PreparedRun& run, Buffer& workspace, Outcome& out,
                 Buffers& io, bool* short_of_memory) const override {
    if (Reason why = HostOperandPhases::buffers(bench, cfg, run, workspace, out, io, short_of_memory)) return why;
    out.device_bytes = run.workspace_bytes();  // it allocates its device memory itself
    return std::nullopt;
  }
  Verdict verify(Workbench& bench, const PreparedRun& run, const Buffers& io, double* checked) const override {
    const Problem& p = run.problem();
    poison_host(io.c, c_count(p));
    run.run(io, bench.stream());
    const ErrorStats e = check_entries(io.c, p.n, 0, 0, p.m, p.n, p.m, p.n, p.k, p.inputs, bench.seed(), checked);
    return judge(e, p.k, p.inputs, run.algorithm().precision_of(run.params()));
  }
  void verified(const Configuration& cfg, double checked, Outcome& o) const override {
    o.distributed = DistributedOutcome{};
    o.distributed->verified_entries = checked;
    o.distributed->phases = bool(cfg.algorithm->streamed_report);
    o.distributed->gpus = o.resolved.has("gpus") ? int(o.resolved.integer("gpus")) : 1;
    if (o.resolved.has("engine")) o.distributed->engine = o.resolved.text("engine");
  }
  std::unique_ptr<TrialAudit> audit(Workbench& bench, const Configuration& cfg, const PreparedRun&, const Outcome& o,
                                    const Buffers& io, bool fresh, Reason&) const override {
    return std::make_unique<HostAudit>(bench, cfg, o, io.c, HostAudit::Judged::entries, fresh);
  }
  Ceiling ceiling(const Configuration& cfg, const Outcome& o, const DeviceInfo& d) const override {
    return gpu_ceiling(cfg, o, d);
  }
  void report(const Configuration& cfg, const PreparedRun& run, const Buffers& io, CUstream_st* stream,
              std::vector<StreamedReport>& reports) const override {
    if (cfg.algorithm->streamed_report) reports.push_back(cfg.algorithm->streamed_report(run.args(io, stream)));
  }
};

const DevicePhases kDevicePhases;
const HostPhases kHostPhases;
const StreamedPhases kStreamedPhases;

// The one place a single-process configuration's backend is told apart: its pipeline's verification.
const Phases& phases_of(const Configuration& cfg) {
  switch (cfg.pipeline().verification) {
    case Verification::host: return kHostPhases;
    case Verification::entries: return kStreamedPhases;
    case Verification::device:
    case Verification::ranks: break;
  }
  return kDevicePhases;
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
  const double seen = *std::min_element(repeated.begin(), repeated.end());
  return seen < kFromMemoryRatio * *std::min_element(fresh.begin(), fresh.end());
}

Reason FreshTrials::confirm(std::vector<double>& repeated, std::vector<double>& fresh,
                            const std::function<double(bool fresh)>& one, std::string* cleared) {
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
  if (inversions > kConfirmInversions) {
    if (cleared)
      *cleared = "a suspicion of answers from memory (a trial on the verified inputs below " +
                 std::to_string(int(100 * kFromMemoryRatio)) + "% of every one on its own) cleared by " +
                 std::to_string(kConfirmPairs) + " more trials of each in turns: " + std::to_string(inversions) +
                 " of " + std::to_string(kConfirmPairs * kConfirmPairs) + " pairs with the seen one within " +
                 std::to_string(int(std::lround(100 * (1 - kFromMemoryRatio)))) + "% of the own";
    return std::nullopt;
  }
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
double Prepared::trial(ClockMonitor* monitor) {
  ClockMonitor* clocks = phases_->clocks(monitor);
  const std::size_t index = trials_++;
  if (fresh_.repeated_before(index)) repeated_ms_.push_back(timed_on(bench_->seed(), false).ms);
  // NVML's energy counter around the trial (a GPU trial's clock is the GPU's own: the host's calls
  // before it are not inside it).
  const double energy_before = clocks ? clocks->energy_j() : -1;
  const TrialTime t = timed_on(fresh_ ? fresh_.seed(index, bench_->seed()) : bench_->seed(), bool(fresh_));
  if (t.host_ms >= 0) outcome_.host_samples.push_back(t.host_ms);
  outcome_.timer = timer_->timer();
  outcome_.timer_note = timer_->unblocked_reason();
  const double ms = t.ms;
  phases_->report(cfg_, run_, io_, stream_, reports_);
  if (clocks) {
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
  phases_->use_inputs(*bench_, cfg_, seed);
  // Every timed trial starts from a C of NaN (a NaN of its own, never the verification's), before the
  // clock starts (a GPU row's fill is enqueued ahead of its start event), and its C is judged after
  // the clock stopped (a GPU row's right behind its stop event, after_stop()): a kernel that
  // computes on some calls only, or leaves the verified C in place, fails.
  audit_->poison(trial_poison_bits(poisons_++));
  fresh_now_ = fresh, seed_now_ = seed, auditing_ = true;
  const TrialTime t = timer_->trial();
  auditing_ = false;
  audit_->after_trial(fresh, seed);
  return t;
}

void Prepared::after_stop() {
  if (auditing_) audit_->after_stop(fresh_now_, seed_now_);  // not a warm-up
}

void Prepared::failed(std::string why) {
  outcome_.status = Status::failed, outcome_.reason = std::move(why);
  if (outcome_.verdict) outcome_.verdict->ok = false;
  outcome_.samples.clear(), outcome_.host_samples.clear(), outcome_.clocks.clear();
}

void Prepared::finish() {
  // Trials on seen inputs faster than every trial on its own: confirmed by more of each, in turns,
  // every one audited as the timed trials are (before the audit's result is read).
  Reason from_memory;
  if (outcome_.status == Status::ok && FreshTrials::suspicious(repeated_ms_, outcome_.samples)) {
    std::vector<double> fresh = outcome_.samples;
    std::string cleared;
    from_memory = FreshTrials::confirm(
        repeated_ms_, fresh,
        [&](bool own) { return timed_on(own ? fresh_.seed(trials_++, bench_->seed()) : bench_->seed(), own).ms; },
        &cleared);
    if (!cleared.empty()) outcome_.reason += (outcome_.reason.empty() ? "" : "; ") + cleared;
  }
  if (!outcome_.samples.empty())
    if (Reason why = audit_->result()) return failed(*why);
  if (!outcome_.samples.empty()) outcome_.stats = summarize(outcome_.samples);
  if (from_memory) return failed(*from_memory);
  if (!outcome_.samples.empty() && ceiling_ && ceiling_->gflops > 0) {
    // Faster than the GPU (or host) can multiply: the work ran elsewhere (another stream) or not at all.
    const double gflops = cfg_.algorithm->flop_count(cfg_.problem) / (outcome_.stats.median * 1e-3) / 1e9;
    if (gflops > ceiling_->gflops) {
      char why[320];
      std::snprintf(why, sizeof why,
                    "not a measurement: a median of %.4g ms implies %.4g TFLOP/s, above this %s's peak of %.4g "
                    "for products on %s; the work ran outside the timed stream, not at all, or on faster units "
                    "than the configuration declares",
                    outcome_.stats.median, gflops / 1e3, ceiling_->where.c_str(), ceiling_->gflops / 1e3,
                    ceiling_->units.c_str());
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
  const Phases& phases = phases_of(cfg);
  auto out = std::make_unique<Prepared>(cfg, Outcome{});
  out->phases_ = &phases;
  Outcome& o = out->outcome_;
  Reason why = phases.unavailable(cfg, device, o);
  if (!why) why = check_configuration(cfg, device, states, out->run_, o);
  if (!why) why = phases.applies(cfg);
  if (!why) why = phases.buffers(bench, cfg, out->run_, out->workspace_, o, out->io_, &out->short_of_memory);
  if (why) {
    o.status = Status::skipped, o.reason = *why;
    return out;
  }
  double checked = 0;
  bench.use_device_inputs(bench.seed());  // a timed trial before may have left inputs of its own
  bench.use_host_inputs(bench.seed());
  o.verdict = phases.verify(bench, out->run_, out->io_, &checked);
  phases.verified(cfg, checked, o);
  if (!o.verdict->ok) {
    o.status = Status::failed, o.reason = o.verdict->reason;
    return out;
  }
  out->stream_ = bench.stream();
  out->timer_ = phases.timer(bench, cfg, out->run_, out->io_, timing, [p = out.get()] { p->after_stop(); });
  out->ceiling_ = std::make_unique<Ceiling>(phases.ceiling(cfg, o, device));
  out->bench_ = &bench;
  out->fresh_.nonce = FreshTrials::draw();
  o.own_inputs = true;
  Reason failed;
  out->audit_ = phases.audit(bench, cfg, out->run_, o, out->io_, bool(out->fresh_), failed);
  if (failed) out->failed(*failed);
  return out;
}

bool time_alone(Timed& p, const TimingOptions& timing, const std::atomic<bool>* interrupted, ClockMonitor* clocks) {
  const bool done = run_trials([&] { p.warmup(); }, [&] { return p.trial(clocks); }, timing, interrupted,
                               p.collective(), p.outcome().samples);
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
