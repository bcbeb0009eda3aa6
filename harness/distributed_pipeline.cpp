// A distributed configuration as a collective prepared run (pipeline.hpp's Timed): every rank checks
// it (the prepared run: resolved once, the engine with it), agrees on memory, makes its run (A, B and
// C in the starting layout), verifies one product (C poisoned first; every entry of small problems,
// a sample of every rank's block for large ones, against float64 dot products of the regenerated
// inputs), then takes its trials (the slowest rank's time), alone or round-robin with the other
// distributed configurations of the problem. Each trial starts from a C of NaN (before its barrier)
// on inputs of its own (issue #81, pipeline.hpp's FreshTrials: every rank's blocks of A and B made again
// from the trial's seed, off the clock), and its C is judged after it at sampled entries of every rank's
// block against float64 of those inputs; two trials on the verified inputs are audited against the
// verified C (a hash of every rank's block where the run is deterministic, the verified sample
// otherwise), and a row faster on those than on its own inputs answered from memory. The analytic model and the row's bound come from the local rate, link bandwidth and latency
// measured in the same job.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/distributed.hpp"
#include "core/random.hpp"
#include "harness/pipeline.hpp"
#include "runtime/audit.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

namespace mmlab {

namespace {

double host_free_bytes() { return double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)); }

// A hash of every element of a host block, order-independent as the GPU audit's (runtime/audit.cu).
unsigned long long host_hash(const float* c, std::size_t n) {
  unsigned long long h = 0;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned bits;
    std::memcpy(&bits, &c[i], sizeof bits);
    const unsigned long long z = ((std::uint64_t(i) << 32) ^ bits) * 0x9E3779B97F4A7C15ull;
    h += z ^ (z >> 29);
  }
  return h;
}

// The model's measurements, made once per job and kept: they depend on the engine and the shape (the
// local rate) or on the links and the message size (bandwidth, latency), not on the configuration.
// Every rank asks for the same keys in the same order, so a collective measurement is made by all.
std::map<std::string, double>& measured() {
  static std::map<std::string, double> all;
  return all;
}
template <class Measure>
double once(const std::string& key, Measure measure) {
  auto it = measured().find(key);
  if (it != measured().end()) return it->second;
  return measured()[key] = measure();
}

class PreparedDistributed final : public Timed {
 public:
  PreparedDistributed(const Configuration& cfg, Outcome o) : Timed(cfg, std::move(o)) {
    const Problem& p = cfg.problem;
    what_ = cfg.algorithm->name + " " + cfg.params.canonical() + " " + std::to_string(p.m) + "x" +
            std::to_string(p.n) + "x" + std::to_string(p.k) + ": ";
  }
  ~PreparedDistributed() override {
    audit_.reset();
    run_.reset();  // collective where peers mapped its memory: every rank frees in the same order
  }

  bool ready() const override { return run_ && outcome_.status == Status::ok && outcome_.verdict && outcome_.verdict->ok; }
  bool collective() const override { return true; }

  // Check, memory, run, verification and the audit's reference; the outcome says how far it got.
  void prepare(Workbench& bench, const DeviceInfo& device, StateCache& states) {
    Outcome& out = outcome_;
    if (Reason why = check_configuration(cfg_, device, states, prepared_, out)) {
      out.status = Status::skipped, out.reason = *why;
      return;
    }
    const Algorithm& alg = *cfg_.algorithm;
    const Problem& p = cfg_.problem;
    const Params& q = prepared_.params();
    job_step(what_ + "the memory check");
    d_.ranks = job().size;
    d_.grid = q.has("grid") ? q.text("grid") : "";
    on_gpus_ = pipeline_uses_gpus(cfg_.pipeline(), alg, q);
    d_.gpus = on_gpus_ ? d_.ranks : 0;
    // Every rank must agree before anything is allocated: a rank short of memory skips for all.
    const double need = double(prepared_.workspace_bytes());
    const double free = on_gpus_ ? double(free_device_bytes()) - double(kDeviceReserve) : host_free_bytes() * 0.8;
    if (max_over_ranks(need > free ? 1 : 0) > 0) {
      out.status = Status::skipped;
      out.reason = "needs " + gib(need) + " per rank; a rank has " + gib(std::max(free, 0.0)) + " free";
      short_of_memory = on_gpus_;
      return;
    }
    seed_ = bench.seed();
    stream_ = on_gpus_ ? bench.stream() : nullptr;
    const DistributedSetup setup{p, &q, &cfg_.params, seed_, &device};
    run_ = alg.make_distributed(setup);
    if (fail_if_any_rank_failed()) return;
    verify();
    if (fail_if_any_rank_failed()) return;
    out.distributed = d_;
    if (!out.verdict->ok) {
      out.status = Status::failed, out.reason = out.verdict->reason;
      return;
    }
    d_.engine = run_->engine();
    prepare_audit();
    // Every rank's trials on the same seeds (a nonce agreed over ranks), where every rank's run can
    // make its inputs again; else every trial on the verification's inputs.
    const bool fresh = -max_over_ranks(run_->use_inputs(seed_) ? -1.0 : 0.0) > 0;
    const double nonce = max_over_ranks(double((FreshTrials::draw() >> 12) | 1));  // 52 bits: exact
    if (fresh) fresh_.nonce = static_cast<unsigned long long>(nonce);
    outcome_.own_inputs = fresh;
  }

  void warmup() override {
    job_step(what_ + "a warm-up run");
    double host = -1;
    timed_run(&host);  // as a trial runs: a run that cannot be held is found out before the trials
  }

  double trial(ClockMonitor* clocks) override {
    const std::size_t index = trials_++;
    if (fresh_.repeated_before(index)) {  // a trial on the verified inputs, audited against the verified C
      job_step(what_ + "a trial on the verified inputs before trial " + std::to_string(index));
      run_->use_inputs(seed_);
      double host = -1;
      repeated_ms_.push_back(timed_run(&host));
      audit_trial(false, seed_);
    }
    job_step(what_ + "trial " + std::to_string(outcome_.samples.size()));
    const unsigned long long seed = fresh_ ? fresh_.seed(index, seed_) : seed_;
    run_->use_inputs(seed);  // off the clock, before the barrier
    // The energy counter is read before the barrier: between the barrier and the start nothing may
    // run that takes one rank longer than the others, or the slowest rank's time holds every other
    // rank's wait for it in its first exchange. With the NVML read there (9fc54bb), the medians at 8192
    // on four H100s held 2-4 ms of such waiting; the read is the suspected cause (its time was not
    // measured), the only call between the barrier and the start.
    const double energy_before = clocks && on_gpus_ ? clocks->energy_j() : -1;
    double host = -1;
    const double total = timed_run(&host);
    if (host >= 0) outcome_.host_samples.push_back(host);
    const PhaseTimes ph = run_->phases();
    const double c = max_over_ranks(ph.compute_ms), m = max_over_ranks(ph.comm_ms);
    // Time not spent in products is communication not hidden, then waiting (skew, synchronisation).
    const double exposed = std::max(0.0, total - c), comm_exposed = std::min(exposed, m);
    compute_.push_back(c), comm_.push_back(m), wait_.push_back(exposed - comm_exposed);
    layout_.push_back(max_over_ranks(ph.layout_ms));
    hidden_.push_back(m > 0 ? 1 - comm_exposed / m : 1);
    if (failure_.empty()) failure_ = agreed_failure();
    audit_trial(bool(fresh_), seed);
    if (clocks && on_gpus_) {  // the slowest rank's clock, the hottest and most power-hungry rank
      ClockSample s = clocks->sample(nullptr);
      s.sm_mhz = -max_over_ranks(-s.sm_mhz);
      s.power_w = max_over_ranks(s.power_w);
      s.temperature_c = max_over_ranks(s.temperature_c);
      const double energy_after = clocks->energy_j();
      const bool known = -max_over_ranks(-(energy_before >= 0 && energy_after >= 0 ? 1 : 0)) > 0;
      const double mine = energy_after - energy_before;
      s.energy_j = known ? sum_over_ranks(mine) : -1;  // every GPU of the job
      if (!energy_resolved(total)) s.energy_j = -1;      // a step of the counter, not the trial's energy
      outcome_.clocks.push_back(s);
      outcome_.clock_source = clocks->source();
      outcome_.reference_mhz = clocks->reference_mhz();
    }
    return total;
  }

  void finish() override {
    Outcome& out = outcome_;
    // As pipeline.cpp's: trials on seen inputs faster than every own one are confirmed by more of each
    // (the slowest rank's times: every rank decides alike), every one audited.
    Reason from_memory;
    std::string cleared;  // a suspicion the confirming trials cleared, for the ok row's reason
    if (out.status == Status::ok && failure_.empty() && FreshTrials::suspicious(repeated_ms_, out.samples)) {
      std::vector<double> fresh = out.samples;
      from_memory = FreshTrials::confirm(repeated_ms_, fresh, [&](bool own) {
        const unsigned long long seed = own ? fresh_.seed(trials_++, seed_) : seed_;
        job_step(what_ + (own ? "a trial on inputs of its own" : "a trial on the verified inputs") + " (confirming)");
        run_->use_inputs(seed);
        double host = -1;
        const double ms = timed_run(&host);
        audit_trial(own, seed);
        return ms;
      }, &cleared);
    }
    if (!failure_.empty()) {  // a library's status in a timed trial
      out.status = Status::failed, out.reason = failure_ + " (in a timed trial)";
      out.verdict->ok = false;
      out.samples.clear(), out.clocks.clear();
      out.distributed = d_;
      return;
    }
    const long long differed = (long long)sum_over_ranks(double(differed_));
    const long long wrong = (long long)sum_over_ranks(double(wrong_));
    const long long unwritten = (long long)sum_over_ranks(double(unwritten_));
    if (differed > 0) {
      const std::string of = " rank-trials (of " + std::to_string((long long)sum_over_ranks(double(audited_))) + ")";
      std::string why;
      if (differed - wrong - unwritten > 0)
        why = "the C of " + std::to_string(differed - wrong - unwritten) + of + " differs from the verified C (" +
              (deterministic_ ? "a hash of every rank's block, bit for bit"
                              : "the verified sample against float64, judged as the verification judges") + ")";
      if (wrong > 0)
        why += (why.empty() ? "" : "; ") + std::string("the C of ") + std::to_string(wrong) + of +
               " is not the product of that trial's inputs (every rank's A and B made again from a seed of the "
               "trial's own, outside the clock; sampled entries against float64): a C kept from an earlier run, or "
               "work skipped";
      if (unwritten > 0)
        why += (why.empty() ? "" : "; ") + std::string("the C of ") + std::to_string(unwritten) + of +
               " on inputs of their own still held the poison in places";
      out.status = Status::failed, out.reason = why;
      out.verdict->ok = false;
      out.samples.clear(), out.clocks.clear();
      out.distributed = d_;
      return;
    }
    if (from_memory) {
      out.status = Status::failed, out.reason = *from_memory;
      out.verdict->ok = false;
      out.samples.clear(), out.clocks.clear();
      out.distributed = d_;
      return;
    }
    if (out.samples.empty() || out.status != Status::ok) {
      out.distributed = d_;
      return;
    }
    out.stats = summarize(out.samples);
    d_.compute_ms = summarize(compute_).median, d_.comm_ms = summarize(comm_).median;
    d_.wait_ms = summarize(wait_).median, d_.overlap = summarize(hidden_).median;
    d_.layout_ms = summarize(layout_).median;
    // The measurements allocate a product of the first step's shape and two messages of up to 1 GiB:
    // at 8192 x 28672 x 8192 and 30001 their allocation failed beside the held runs of the problem
    // (sweep-2026-11-27b) until each run gave its own memory back first.
    audit_.reset();
    run_->release_memory();
    measure_model();
    out.distributed = d_;
    out.reason = run_->note();
    if (!cleared.empty()) out.reason += (out.reason.empty() ? "" : "; ") + cleared;
  }

 private:
  void verify() {
    const Problem& p = cfg_.problem;
    job_step(what_ + "the verified product");
    run_->poison();
    barrier();
    run_->run();
    const CBlock block = run_->c_block();
    const ErrorStats e = check_entries(block.values.data(), block.cols, block.row0, block.col0, block.rows,
                                       block.cols, p.m, p.n, p.k, p.inputs, seed_, &d_.verified_entries,
                                       kSampledEntries, &entries_);
    ErrorStats all;
    all.max_abs_err = max_over_ranks(e.max_abs_err);
    all.max_abs_ref = max_over_ranks(e.max_abs_ref);
    all.max_sumabs_err = max_over_ranks(e.max_sumabs_err);
    all.sum_sumabs_err = sum_over_ranks(e.sum_sumabs_err);
    all.sum_sq_err = sum_over_ranks(e.sum_sq_err);
    all.over_1e3 = std::size_t(sum_over_ranks(double(e.over_1e3)));
    all.nonfinite = std::size_t(sum_over_ranks(double(e.nonfinite)));
    all.count = std::size_t(sum_over_ranks(double(e.count)));
    d_.verified_entries = sum_over_ranks(d_.verified_entries);
    max_abs_ref_ = all.max_abs_ref;
    const Algorithm& alg = *cfg_.algorithm;
    outcome_.verdict = judge(all, p.k, p.inputs, alg.precision_of(prepared_.params()));
    c_count_ = block.values.size();
    block_ = {block.row0, block.col0, block.rows, block.cols};
    if (!on_gpus_ && c_count_) host_expected_ = host_hash(block.values.data(), c_count_);
  }

  // One run from a C of NaN, every rank starting together, timed: on GPUs, held until every rank has
  // enqueued it (the slowest GPU's time between its events; *host_ms the slowest rank's host clock
  // around the same run); on the host, or once held runs have failed, the slowest rank's steady clock
  // from a barrier (*host_ms left alone).
  double timed_run(double* host_ms) {
    for (int attempt = 0;; ++attempt) {
      run_->poison();  // every trial from a C of NaN, off the clock (before the barrier), audited after
      barrier();
      // On GPUs the streams of every rank are held until all have enqueued their run (the barrier
      // inside), so each rank's events time its GPU's work alone; the host's clock is kept beside.
      const bool held = gpu_timer_ && run_->hold_next_run([] { barrier(); });
      const auto t0 = std::chrono::steady_clock::now();
      run_->run();
      const double local = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double host = max_over_ranks(local);  // the slowest rank's time
      if (!held) {
        outcome_.timer = Timer::host;  // the slowest rank's steady clock, every rank's work started by a barrier
        return host;
      }
      // A blocking kernel that gave up on any rank let that rank's work start before the others had
      // enqueued theirs: the trial is taken again; three times, and the configuration goes to the host's clock.
      if (max_over_ranks(run_->gate_timed_out() ? 1 : 0) > 0) {
        if (attempt < 2) continue;
        gpu_timer_ = false;
        outcome_.timer_note = "timed on the host's clock from a barrier: the blocking kernel gave up three times "
                              "before every rank had enqueued its run (a run that waits for the GPU inside)";
        outcome_.timer = Timer::host;
        outcome_.host_samples.clear();  // the host's clock is the trials' own from here
        return host;
      }
      *host_ms = host;
      outcome_.timer = Timer::blocked;
      return max_over_ranks(run_->gpu_ms());  // the slowest GPU's time between its events
    }
  }

  // The first rank's failure (DistributedRun::failure), the same on every rank; "" when none failed.
  std::string agreed_failure() {
    const std::vector<std::string> all = gather_texts(run_->failure());
    for (std::size_t r = 0; r < all.size(); ++r)
      if (!all[r].empty()) return (all.size() > 1 ? "rank " + std::to_string(r) + ": " : "") + all[r];
    return {};
  }
  // Before the trials: a failure any rank reports makes the row `failed` with its reason.
  bool fail_if_any_rank_failed() {
    const std::string why = agreed_failure();
    if (why.empty()) return false;
    outcome_.status = Status::failed, outcome_.reason = why;
    outcome_.verdict = Verdict{};
    outcome_.verdict->reason = why;
    outcome_.distributed = d_;
    return true;
  }

  // Whether the local products' engine gives a bit-identical block from run to run: none of its
  // variants may split k with atomics (register_tiled tuned at 383x405x1508 on one rank did, and its two
  // trials on the verified inputs failed the hash, issue #81's check on an H200). Where it may, each
  // rank's block is judged by its checked sample, as a nondeterministic run's is.
  bool engine_repeats(const Params& q) const {
    const Algorithm* engine = cfg_.algorithm->engine_of ? cfg_.algorithm->engine_of(q) : cfg_.algorithm;
    return std::all_of(engine->variants.begin(), engine->variants.end(),
                       [](const Variant& v) { return v.nondeterminism.empty(); });
  }

  // The verified C's hash (deterministic runs), or its checked sample (the others), on each rank.
  void prepare_audit() {
    const Problem& p = cfg_.problem;
    deterministic_ = cfg_.algorithm->deterministic(p, prepared_.params()) && engine_repeats(prepared_.params());
    if (!on_gpus_ || !c_count_) return;
    const Precision precision = cfg_.algorithm->precision_of(prepared_.params());
    if (!deterministic_) samples_ = audit_samples_of(entries_, max_abs_ref_);
    samples_.max_abs_ref = max_abs_ref_;  // the uniform inputs' scale, for the trials on inputs of their own
    audit_ = std::make_unique<OutputAudit>(run_->c_data(), c_count_, deterministic_, samples_,
                                           tolerance(p.k, precision), p.inputs == Inputs::uniform, stream_);
    MMLAB_CHECK(cudaStreamSynchronize(stream_));
  }

  // This trial's C on this rank, before the next trial begins: on inputs of its own (`fresh`), no entry
  // left poisoned and sampled entries against float64 of the inputs made from `seed`; else against the
  // verified C.
  void audit_trial(bool fresh, unsigned long long seed) {
    if (!c_count_) return;
    ++audited_;
    const Problem& p = cfg_.problem;
    const Precision precision = cfg_.algorithm->precision_of(prepared_.params());
    if (audit_) {
      if (fresh)
        audit_->after_fresh_trial(run_->c_data(), stream_, p.m, p.n, p.k, p.inputs, seed, block_.row0, block_.col0,
                                  block_.rows, block_.cols);
      else
        audit_->after_trial(run_->c_data(), stream_);
      const OutputAudit::Result r = audit_->result(stream_);  // synchronizes
      differed_ = r.differed, wrong_ = r.wrong, unwritten_ = r.unwritten;
      return;
    }
    const CBlock block = run_->c_block();  // the CPU backend's: host memory
    if (fresh) {
      if (std::any_of(block.values.begin(), block.values.end(), [](float x) { return std::isnan(x); })) {
        ++differed_, ++unwritten_;
        return;
      }
      double checked = 0;
      ErrorStats e = check_entries(block.values.data(), block.cols, block.row0, block.col0, block.rows, block.cols,
                                   p.m, p.n, p.k, p.inputs, seed, &checked, kSeededSamples);
      e.max_abs_ref = max_abs_ref_;
      if (!judge(e, p.k, p.inputs, precision).ok) ++differed_, ++wrong_;
      return;
    }
    if (deterministic_) {
      differed_ += host_hash(block.values.data(), block.values.size()) != host_expected_;
      return;
    }
    std::vector<float> got(entries_.index.size());
    for (std::size_t s = 0; s < got.size(); ++s) got[s] = block.values[std::size_t(entries_.index[s])];
    ErrorStats e = compare_host(got.data(), entries_.ref.data(), entries_.sumabs.data(), got.size());
    e.max_abs_ref = max_abs_ref_;
    differed_ += !judge(e, p.k, p.inputs, precision).ok;
  }

  // The model with this job's own local rate, link bandwidth and latency: the prediction (the
  // bandwidth of the run's largest message, the slowest rank's rate), and the bound, a least time
  // (Model::least_ms): each rank's products at the engine's best rate measured on its shapes, its
  // words at the links' best measured rate (the run's largest message, a ring shift of 1 GiB, or
  // all ranks sending 1 GiB to all at once between GPUs), its first input and last output, one
  // latency; the slowest rank's.
  void measure_model() {
    job_step(what_ + "the model's rate, link and latency measurements");
    const Model model = run_->model();
    double largest = 0;
    for (const ModelStep& s : model.steps) largest = std::max({largest, s.bytes_in, s.bytes_out});
    largest = std::max({largest, model.layout_in_bytes, model.layout_out_bytes});
    const std::string links = cfg_.params.text("engine") + "/" + prepared_.params().text("transport") + "/";
    const double mine = run_->local_gflops();
    d_.local_gflops = -max_over_ranks(-mine);  // the slowest rank's rate
    const double best_rate = run_->best_local_gflops();
    const double bytes = max_over_ranks(std::min(largest, double(1 << 30)));
    d_.link_gbs = once(links + std::to_string(bytes), [&] { return run_->link_gbytes_per_s(bytes); });
    // The links' best: a ring shift of 1 GiB and an all-to-all of 1 GiB between GPUs, once per job;
    // between host processes (the CPU backend) the run's own largest message.
    double peak = d_.link_gbs;
    if (on_gpus_) {
      peak = std::max(peak, once(links + "1GiB", [&] { return run_->link_gbytes_per_s(double(1 << 30)); }));
      peak = std::max(peak, once(links + "all-to-all 1GiB", [&] { return run_->all_to_all_gbytes_per_s(double(1 << 30)); }));
    }
    d_.latency_ms = once(links + "latency", [&] { return run_->latency_ms(); });
    if (!std::isfinite(d_.latency_ms)) d_.latency_ms = 0;  // one rank: no link
    d_.predicted_ms = max_over_ranks(model.predict_ms(d_.local_gflops, d_.link_gbs, 0, d_.latency_ms));
    d_.bound_ms = max_over_ranks(model.least_ms(best_rate, peak, d_.latency_ms));
    if (!std::isfinite(d_.link_gbs)) d_.link_gbs = 0;          // one rank: no link
    if (!std::isfinite(d_.local_gflops)) d_.local_gflops = 0;  // no rank had work
    if (!std::isfinite(d_.bound_ms)) d_.bound_ms = 0;
  }

  std::string what_;  // for the watchdog's message should a wait time out
  PreparedRun prepared_;
  std::unique_ptr<DistributedRun> run_;
  DistributedOutcome d_;
  unsigned long long seed_ = 0;
  bool on_gpus_ = false, deterministic_ = true;
  bool gpu_timer_ = true;  // the trials timed on the GPUs (held runs), until a held run's gate gives up
  CUstream_st* stream_ = nullptr;
  // The audit: the verified block's size, its sample and scale, the GPU's audit or the host's hash.
  std::size_t c_count_ = 0;
  EntrySamples entries_;
  double max_abs_ref_ = 0;
  AuditSamples samples_;
  std::unique_ptr<OutputAudit> audit_;
  unsigned long long host_expected_ = 0;
  long long audited_ = 0, differed_ = 0, wrong_ = 0, unwritten_ = 0;  // of differed_: on inputs of their own
  struct { long row0 = 0, col0 = 0, rows = 0, cols = 0; } block_;  // this rank's block of C
  FreshTrials fresh_;                // every trial's inputs (issue #81)
  std::vector<double> repeated_ms_;  // the trials on the verified inputs (not samples)
  std::size_t trials_ = 0;
  std::vector<double> compute_, comm_, layout_, wait_, hidden_;
  std::string failure_;  // a library's failure in a timed trial, agreed over ranks
};

}  // namespace

std::unique_ptr<Timed> prepare_distributed(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                                           StateCache& states) {
  auto out = std::make_unique<PreparedDistributed>(cfg, Outcome{});
  out->prepare(bench, device, states);
  return out;
}

}  // namespace mmlab
