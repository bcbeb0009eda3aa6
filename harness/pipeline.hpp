// One configuration, in phases: check (can it run here?), prepare (buffers), verify (once, against
// float64, output poisoned first), time (warm-up, then trials). Timing takes one configuration at
// a time (order sequential), or all configurations of a problem round-robin, each round in a
// shuffled order (order interleaved), so that drift in clocks or temperature lands on every side
// of a comparison alike and trial i of each can be paired. pipeline.cpp runs on one GPU or the
// host; distributed_pipeline.cpp on every rank of the job, sequentially.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/invocation.hpp"
#include "harness/options.hpp"
#include "harness/outcome.hpp"
#include "harness/pipelines.hpp"
#include "harness/workbench.hpp"
#include "runtime/timing.hpp"
#include "runtime/clocks.hpp"

namespace mmlab {

class TrialTimer;
class OutputAudit;

// Issue #81: every timed trial on inputs of its own, made again in place (outside the clock) from a seed
// of its own drawn from a nonce the algorithm never sees; two trials, at places drawn from the same
// nonce, on the inputs the row was verified on, in trials of their own (not samples). A row faster on
// those than on every trial of its own inputs answered them from memory (a C kept by its inputs'
// content, or by counting calls). One GPU's, the host's and the distributed rows' alike.
struct FreshTrials {
  unsigned long long nonce = 0;  // 0: none (the trials repeat the verification's inputs)
  static unsigned long long draw();  // from std::random_device
  explicit operator bool() const { return nonce != 0; }
  // Whether a trial on the verification's inputs goes before timed trial `index`.
  bool repeated_before(std::size_t index) const;
  // Timed trial `index`'s inputs' seed (never `verified`, the verification's).
  unsigned long long seed(std::size_t index, unsigned long long verified) const;
  // Whether the trials so far point at answers from memory: at least two on seen inputs (`repeated`),
  // one of them below kFromMemoryRatio of the fastest of at least five `fresh` ones whose median is
  // kFromMemoryFloorMs or more (below it the timer's and the launch's jitter are the size of any gain).
  // One, not every one: asking every one let a memo that answers through Python (its host's time inside
  // every trial) go unsuspected once (data/cheats/h200-f844c73/).
  // A row that does is confirmed (confirm()) before it is judged: a library whose times jump between
  // two groups (cuBLASXt's, near 2 and near 5 ms) can put its two trials on seen inputs in the fast one and
  // its five own in the slow one by chance (it did once on an H200: data/cheats/h200-e431abe/, call 1).
  static bool suspicious(const std::vector<double>& repeated, const std::vector<double>& fresh);
  // kConfirmPairs more trials of each kind, in turns (`one(true)`: a trial on inputs of its own, timed
  // and judged; `one(false)`: on the verified inputs; each returns its ms), appended to `repeated` and
  // `fresh`; the verdict is theirs alone (not the trials that raised the suspicion): answers from memory
  // where at most kConfirmInversions of their kConfirmPairs^2 pairs have the trial on seen inputs at or
  // above kFromMemoryRatio of the own one (one slow seen trial, a host's jitter, is 12; two are
  // tolerated). Honest trials, whatever their distribution, come out that way with probability at most
  // P(U <= 27) = 0.41% for the Mann-Whitney U of 12 against 12 (the margin only lowers it;
  // tests/cpu/distributed_fresh_test.cpp counts it), and only after a suspicion.
  // A suspicion the confirming trials clear is said in `cleared` (the ok row's reason notes it, so how
  // often honest rows raise one can be counted).
  static constexpr int kConfirmPairs = 12, kConfirmInversions = 27;
  static Reason confirm(std::vector<double>& repeated, std::vector<double>& fresh,
                        const std::function<double(bool fresh)>& one, std::string* cleared = nullptr);
};

// A configuration checked, prepared and verified, whose trials can be timed alone or round-robin
// with others: one GPU's or the host's (Prepared), or a distributed one's on every rank of the job
// (prepare_distributed: a collective prepared run, every rank calling each method in step).
class Timed {
 public:
  Timed(const Configuration& cfg, Outcome outcome) : cfg_(cfg), outcome_(std::move(outcome)) {}
  virtual ~Timed() = default;
  const Configuration& configuration() const { return cfg_; }
  Outcome& outcome() { return outcome_; }
  virtual bool ready() const = 0;  // verified, and can be timed
  // Every rank of the job takes each trial (its loop's stop agreed over ranks).
  virtual bool collective() const { return false; }
  // Why it was skipped, when that was free device memory (a group holding others' buffers may retry).
  bool short_of_memory = false;
  virtual void warmup() = 0;
  // One timed trial (ms); the clock sampled after it goes to the outcome.
  virtual double trial(ClockMonitor* clocks) = 0;
  // The statistics of the trials so far; a configuration whose timed trials did not compute what
  // was verified (runtime/audit.hpp) becomes `failed` here, without a time.
  virtual void finish() = 0;

 protected:
  Configuration cfg_;
  Outcome outcome_;
};

class Phases;
class TrialAudit;
struct Ceiling;

// One GPU's or the host's configuration, prepared by its backend's phases (pipeline.cpp: one class per
// backend, chosen once): none of its methods tells the backends apart.
class Prepared final : public Timed {
 public:
  Prepared(const Configuration& cfg, Outcome outcome);
  ~Prepared() override;
  bool ready() const override { return timer_ && audit_; }
  void warmup() override;
  double trial(ClockMonitor* clocks) override;
  void finish() override;

 private:
  // One trial on the inputs made from `seed` (fresh: inputs of its own, judged against them; else the
  // verification's, audited against the verified C), its C judged after the clock stopped.
  TrialTime timed_on(unsigned long long seed, bool fresh);
  // Right behind a trial's stop event, on the GPU (DeviceTiming::after_stop): its C audited.
  void after_stop();
  void failed(std::string why);  // the row failed: no time
  friend std::unique_ptr<Prepared> prepare(Workbench&, const Configuration&, const DeviceInfo&,
                                           StateCache&, const TimingOptions&);
  const Phases* phases_ = nullptr;
  Buffer workspace_;
  std::unique_ptr<TrialTimer> timer_;
  // Each timed trial's C poisoned before it and judged after it, as the verification judged it.
  std::unique_ptr<TrialAudit> audit_;
  // Every timed trial on inputs of its own (trial()).
  Workbench* bench_ = nullptr;
  FreshTrials fresh_;
  std::vector<double> repeated_ms_;  // the trials on the verification's inputs (not samples)
  std::size_t trials_ = 0;
  std::uint64_t poisons_ = 0;             // trials poisoned: each trial's NaN (trial_poison_bits)
  bool auditing_ = false, fresh_now_ = false;  // inside a timed trial (not a warm-up); on inputs of its own
  unsigned long long seed_now_ = 0;           // the inputs of the trial inside the clock
  // The ceiling of the units a GPU row declares (Algorithm::arithmetic_of), the host's FP32 one for a
  // host row.
  std::unique_ptr<Ceiling> ceiling_;
  CUstream_st* stream_ = nullptr;
  PreparedRun run_;  // the configuration resolved, checked and sized (core/invocation.hpp)
  Buffers io_;
  std::vector<StreamedReport> reports_;  // a streamed algorithm's, one per trial
};

// Phase 1 of every configuration: can it run here? `run` receives it resolved, checked and sized
// (core/invocation.hpp), `out` its resolved parameters and launch; the reason it cannot, or nullopt.
// (What a backend adds, a GPU or a scope it needs, is its phases'.)
Reason check_configuration(const Configuration& cfg, const DeviceInfo& device, StateCache& states,
                           PreparedRun& run, Outcome& out);

// Check, prepare and verify one single-process configuration (distributed ones: prepare_distributed).
std::unique_ptr<Prepared> prepare(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                                  StateCache& states, const TimingOptions& timing);

// Check, prepare and verify one distributed configuration, on every rank of the job (collective).
std::unique_ptr<Timed> prepare_distributed(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                                           StateCache& states);

// Warm-up, then trials of one configuration until its stop rule. False: interrupted.
bool time_alone(Timed& p, const TimingOptions& timing, const std::atomic<bool>* interrupted, ClockMonitor* clocks);
// Every configuration warmed up, then rounds: each configuration not yet stopped takes one trial,
// in an order shuffled every round (from `seed`). Trial i of each is round i. False: interrupted.
// `collective`: distributed configurations, every rank running the same rounds (the same seed) and
// agreeing on an interrupt.
bool time_interleaved(const std::vector<Timed*>& group, const TimingOptions& timing,
                      const std::atomic<bool>* interrupted, ClockMonitor* clocks, std::uint64_t seed,
                      bool collective = false);

// Check, prepare, verify and (with `timing`) time one configuration alone: a single-process one
// through the above, a distributed one on every rank. Without `timing` it is only verified (the
// GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          StateCache& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr, ClockMonitor* clocks = nullptr);

// The trial loop of one configuration: `warmup` untimed runs, then `trial`s until the stopping rule
// says stop, the time limit of adaptive trials passes, or an interrupt arrives (false: the samples
// are incomplete). `collective`: every rank of the job runs the loop, and the interrupt and time
// checks are agreed over ranks, so all stop at the same trial.
bool run_trials(const std::function<void()>& warmup, const std::function<double()>& trial,
                const TimingOptions& timing, const std::atomic<bool>* interrupted, bool collective,
                std::vector<double>& samples);

}  // namespace mmlab
