// flagship: one dispatcher per accuracy class, over the lab's own kernels. For each problem it
// prices every candidate with a cost model, times the models' 8 cheapest on the GPU once
// (choice=measured; choice=model, or no GPU: the cheapest) and runs the fastest; the row's
// `resolved` column names what ran (algorithm:variant:parameters).
//   cuda_cores    FP32 on CUDA cores: register_tiled's tuned choice (its own fitted model), tma_tiled's
//                 data-parallel TMA kernel, streamk (pure and hybrid, three tile shapes), skinny where
//                 m or n is at most 64 (its cols kernel staged by the threads or by cp.async), and
//                 small (one launch, k split over a cluster: four block and thread tiles, each priced
//                 at every split) for the problems of a few microseconds.
//   tensor_cores  FP32-accurate (error within 2x SGEMM's): tf32x3 half3 (a split pass, then FP16
//                 products), wgmma3 (split inside the k loop: no pass, no extra launches) or small's
//                 tf32x3 product (one launch, small tiles, k over a cluster) for small work; or
//                 cuda_cores' candidates where none pays. Below k = 128 split products buy no accuracy
//                 (short FP32 sums are within 1.0-1.5x SGEMM's error; a split product's terms carry
//                 2^-22 of their size): there it runs cuda_cores' candidates only, but small's single k
//                 chain at k 25-32 on outputs of fewer tiles than SMs (2.5x SGEMM's error, where cuBLAS
//                 splits k); from 128 an FP32 candidate runs only where its error, measured on the
//                 problem's shape and kind of input, is typically within 1.2x cuBLAS SGEMM's and at most
//                 1.5x (small's FP32 product at split 2 reached 2.9x, at split 4 2.8x where cuBLAS splits
//                 k further; by the models alone, small's FP32 product split 4 ways or more).
//                 docs/tf32x3-notes.md. MMLAB_CHOICE_LOG=1 prints each timed candidate's time and error.
// It knows its candidates (kCandidates), the rules of the tensor-core class and one loop: check,
// predict, cheapest (then, measured, the fastest of the cheapest). Each candidate is priced by its own
// algorithm's model (predict_ms: algorithms/models/, the device's SM count and the kernel's grid,
// occupancy queried on the device), fitted by scripts/fit-flagship to the training shapes of
// experiments/flagship-training.ini (skinny's: experiments/flagship-skinny.ini), timed on the GPU's own
// clock, not to the shapes the dispatchers are judged on (experiments/random-shapes.ini,
// experiments/flagship-held-out.ini, experiments/flagship-small-problems.ini). Each problem's pick is
// made once and, with launch=graph, replayed as a captured graph. docs/flagship-notes.md, rounds three,
// five, seven and eight.
// Example: mmlab run --algorithms flagship,cublas --shape 439x401x939,16x4096x4096 --size 4096
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "algorithms/launch/common.cuh"
#include "algorithms/launch/graph_replay.cuh"
#include "core/invocation.hpp"
#include "algorithms/registry.hpp"
#include "runtime/gpu.hpp"
#include "runtime/sampled_error.hpp"
#include "runtime/timing.hpp"

namespace mmlab {
namespace {

enum class Kind { cuda_cores, tensor_cores };  // in the order of kVariants
// Their descriptions name every candidate (candidate_list, below), added when the descriptor is made.
const std::vector<Variant> kVariants = {
    {"cuda_cores", "FP32 on CUDA cores, the cheapest by fitted cost models of: "},
    {"tensor_cores", "FP32-accurate on tensor cores, the cheapest of: "}};

// A candidate: a configuration of a lab algorithm, priced by that algorithm's own model (its
// predict_ms: algorithms/models/, fitted by scripts/fit-flagship).
struct Candidate {
  const Algorithm& (*algorithm)();
  const char* variant;
  const char* params;  // canonical, "" for none
  Kind kind;           // the dispatcher that may run it (cuda_cores' are the tensor one's fallback)
  bool each_split;     // `split=auto` priced at each split of kSplits instead (its model prices every one)
};

// clang-format off
const Candidate kCandidates[] = {
  {algorithms::register_tiled, "tuned", "", Kind::cuda_cores, false},
  {algorithms::tma_tiled, "tma", "tile=128x256;warp=32x128;depth=32;stages=3;split=1", Kind::cuda_cores, false},
  {algorithms::streamk, "pure", "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed", Kind::cuda_cores, false},
  {algorithms::streamk, "hybrid", "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed", Kind::cuda_cores, false},
  {algorithms::streamk, "pure", "tile=128x256;warp=32x128;depth=32;stages=3;a=transposed", Kind::cuda_cores, false},
  {algorithms::streamk, "hybrid", "tile=128x256;warp=32x128;depth=32;stages=3;a=transposed", Kind::cuda_cores, false},
  {algorithms::streamk, "pure", "tile=64x64;warp=32x64;depth=32;stages=4;a=transposed", Kind::cuda_cores, false},
  {algorithms::skinny, "default", "", Kind::cuda_cores, false},
  {algorithms::skinny, "staged", "", Kind::cuda_cores, false},
  {algorithms::tf32x3, "half3", "stages=3;split=auto", Kind::tensor_cores, false},
  {algorithms::tf32x3, "wgmma3", "stages=3", Kind::tensor_cores, false},
  {algorithms::small, "default", "tile=64x64;thread=8x4;split=auto", Kind::cuda_cores, true},
  {algorithms::small, "default", "tile=32x64;thread=8x4;split=auto", Kind::cuda_cores, true},
  {algorithms::small, "default", "tile=32x64;thread=4x4;split=auto", Kind::cuda_cores, true},
  {algorithms::small, "default", "tile=32x32;thread=4x4;split=auto", Kind::cuda_cores, true},
  {algorithms::small, "tf32x3", "tile=64x64;thread=8x4;split=auto", Kind::tensor_cores, true},
  {algorithms::small, "tf32x3", "tile=32x64;thread=8x4;split=auto", Kind::tensor_cores, true},
  {algorithms::small, "tf32x3", "tile=32x64;thread=4x4;split=auto", Kind::tensor_cores, true},
  {algorithms::small, "tf32x3", "tile=32x32;thread=4x4;split=auto", Kind::tensor_cores, true},
};
// clang-format on

// Below this k every split product's error approaches twice SGEMM's or exceeds it (each term's parts
// carry 2^-22 of its size, more than a short FP32 sum gathers: small's tf32x3 1.67-1.88x at k = 7 and
// 17, the dispatcher 2.65x at 7 before issue #46; tf32x3's half3 and wgmma3 worse), while FP32 sums
// stay within 1.0-1.5x of SGEMM's (data/tf32x3/every-input/short-k.csv; small's at k = 35 ... 113:
// data/flagship/small/round6/short-k.csv): tensor_cores takes cuda_cores' candidates only there.
constexpr long kFp32BelowK = 128;

// Whether a cuda_cores candidate has an FP32-accurate twin among tensor_cores' (the same algorithm and
// parameters, another product: small's): from kFp32BelowK tensor_cores runs the twin instead (the FP32
// product's error reached 2.0-2.7x SGEMM's: 512^3 on cancelling inputs at split 2, issue #46;
// docs/flagship-notes.md, rounds five and six), but where k is split kFp32FromSplit ways or more.
bool has_accurate_twin(const Candidate& c) {
  for (const Candidate& t : kCandidates)
    if (c.kind == Kind::cuda_cores && t.kind == Kind::tensor_cores && t.algorithm == c.algorithm &&
        std::string(t.params) == c.params)
      return true;
  return false;
}

// From this many k splits small's FP32 product stays within the bound at k >= kFp32BelowK: in the
// held-out runs (data/tf32x3/every-input/held-out-run{1,2}.csv, four kinds of input, two runs) its error
// was at most 1.42x SGEMM's on all 14 problems where cuda_cores ran it split 4 to 64 ways (0.40-1.42;
// GEMV-like and deep ones among them), where at split 1 and 2 three of 8 went beyond 2x (2.28-2.72x:
// 502x816x380, 1783x688x521, 512^3). There tensor_cores weighs it beside its twin (the twin cost 4-8% more
// on 16x836x1833, 17x263x2017 and 403x293x5964: issue #46's rule, never 3% slower where FP32 is within it).
constexpr long kFp32FromSplit = 4;

// Whether tensor_cores may run a cuda_cores candidate (resolved as `q`) on a problem of depth k by the
// models alone (choice=model, or no GPU); choice=measured measures it instead (kTypicalBound).
bool fp32_within_bound(const Candidate& c, long k, const Params& q) {
  if (c.kind != Kind::cuda_cores || k < kFp32BelowK || !has_accurate_twin(c)) return true;
  return q.has("split") && q.integer("split") >= kFp32FromSplit;
}

// Whether a candidate's FP32 sums run along one chain of all of k where cuBLAS splits them: small's
// FP32 product (the candidates with a twin) at split 1 with 25 <= k <= 32 on an output of fewer 64 x 64
// tiles than SMs. There its error reached 2.51x SGEMM's (257x511x31; 1.16-1.49x at k = 17, 1.00x from 48
// to 127), with split 2 1.51x; FP32 picks on larger outputs matched SGEMM's error exactly (short-k.csv).
bool one_chain_where_cublas_splits(const Candidate& c, const Problem& p, const Params& q, const DeviceInfo& d) {
  const double tiles = std::ceil(double(p.m) / 64) * std::ceil(double(p.n) / 64);
  return c.kind == Kind::cuda_cores && has_accurate_twin(c) && q.text("split") == "1" && p.k > 24 && p.k <= 32 &&
         tiles < (d.sm_count > 0 ? d.sm_count : 132);
}

// A tensor-core candidate runs only where its model says it is at least 10% cheaper than the FP32
// pick: the models err by 5-10% (median), and the class promises never to be slower than cuda_cores
// by more than 3%. Without it a first fit ran 768^3 (training) at 1.49x and 1365x548x453 (judged) at
// 1.13x cuda_cores' time; with it the training shapes' tensor_cores geomean moves 1.214 -> 1.211
// (scripts/fit-flagship).
constexpr double kTensorMargin = 0.9;

std::string number_text(double x) {
  char text[16];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// The splits an each_split candidate is priced at (its `split=auto` replaced by each): its model prices
// every one (small's: the grouped 32 and 64 from k = 8192 only, algorithms/models/small_model.hpp).
const char* const kSplits[] = {"1", "2", "4", "8", "16", "32", "64"};

// "register_tiled tuned, tma_tiled tma (tile=...), ...": the candidates of a dispatcher of `kind`.
std::string candidate_list(Kind kind) {
  std::string out;
  for (const Candidate& c : kCandidates) {
    if (c.kind != kind) continue;
    const std::string one = c.algorithm().name + " " + c.variant + (*c.params ? " (" + std::string(c.params) + ")" : "");
    if (out.find(one) == std::string::npos) out += (out.empty() ? "" : ", ") + one;
  }
  return out;
}

// A candidate's parameters (`canonical`: its own, or one split of them) as its algorithm resolves them
// for the problem.
Params candidate_params(const Candidate& c, const std::string& canonical, const Problem& p, const DeviceInfo& d) {
  return Invocation(c.algorithm(), d).resolve(p, Params::parse(c.variant, canonical));
}

// The parameter sets a candidate is priced at: its own, or each split of kSplits.
std::vector<std::string> priced_params(const Candidate& c) {
  if (!c.each_split) return {c.params};
  std::vector<std::string> out;
  const std::string own = c.params, key = "split=auto";
  for (const char* split : kSplits)
    out.push_back(own.substr(0, own.find(key)) + "split=" + split + own.substr(own.find(key) + key.size()));
  return out;
}

std::string encode(const Candidate& c, const Params& q) { return EngineSpec{&c.algorithm(), q}.text(); }

// A configuration the dispatcher prices for a problem: its engine spec, its model's time and its
// rank (the time, a tensor-core candidate's divided by the margin).
struct Priced {
  std::string spec;
  double ms, rank;
  bool fp32;      // one of cuda_cores' candidates
  bool admitted;  // it may run by the models alone (fp32_within_bound; choice=measured measures it)
};

// Every configuration of this dispatcher's kind (and, for tensor_cores, cuda_cores' as well) that can
// run the problem and that its model prices, cheapest rank first.
std::vector<Priced> priced(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Kind kind = variant_kind<Kind>(kVariants, q);
  std::vector<Priced> out;
  for (const Candidate& c : kCandidates) {
    const bool accurate = kind == Kind::tensor_cores, splits = accurate && p.k >= kFp32BelowK;
    if (c.kind == Kind::tensor_cores && !splits) continue;
    const Algorithm& a = c.algorithm();
    for (const std::string& canonical : priced_params(c)) {
      const Params cq = candidate_params(c, canonical, p, d);
      if (Invocation(a, d).check(p, cq)) continue;  // it cannot run here
      if (accurate && one_chain_where_cublas_splits(c, p, cq, d)) continue;
      const double t = a.predict_ms ? a.predict_ms(p, cq, d) : std::nan("");
      if (std::isnan(t)) continue;  // its model does not price this configuration
      out.push_back({encode(c, cq), t, t / (c.kind == Kind::tensor_cores ? kTensorMargin : 1.0),
                     c.kind == Kind::cuda_cores, !accurate || fp32_within_bound(c, p.k, cq)});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Priced& x, const Priced& y) { return x.rank < y.rank; });
  return out;
}

// choice=measured: the models' kMeasured cheapest configurations of each kind it runs (tensor_cores:
// its tensor-core ones and cuda_cores' FP32 ones, those that cuda_cores times), each timed on this GPU
// on the problem's shape and kind of input (a warm-up, then the median of three batches of launches
// that each last about half a millisecond), and the fastest taken, once per problem and GPU in the
// process. The kind of input matters: half3 lists the values FP16 cannot hold, and on wide exponents
// it ran 1.4-2.3x cuda_cores' time where it had been timed on uniform inputs (issue #46). The models
// choose the few worth timing; the clock chooses among them (Triton's autotuner pruned by a
// performance model). On the held-out runs the fastest of the models' 8 cheapest, as measured in one
// run, was within 5% of the fastest priced candidate of the other run on 92 of 93 problems
// (cuda_cores) and 93 of 93 (tensor_cores), where the models' cheapest was on 59-62 and 75-76
// (docs/flagship-notes.md, round seven). Without a GPU, or where the operands do not fit in half the
// free memory, the models' cheapest.
constexpr std::size_t kMeasured = 8;

// From kFp32BelowK, where tensor_cores has split products, it times an FP32 candidate only where that
// candidate's error on the problem, measured on the same inputs at sampled entries of C
// (runtime/sampled_error.hpp), is typically at most kTypicalBound times cuBLAS SGEMM's and at most
// kLargestBound times at its largest. How far an FP32 sum strays from SGEMM's depends on how far
// cuBLAS splits k, which no model here knows: small's FP32 product at split 2 matched SGEMM's error
// on 322x1907x943 and 2084x290x307, where its twin cost 5-7% more, and reached 2.3-2.9x on 466x418x923,
// 768^3 and 13x6510x798; at split 4, 2.0-2.8x on deep problems with outputs of a few tiles
// (data/flagship/regret/run1.csv). The largest error, which the promise of 2x is judged by, is decided
// by a few elements and moves from one draw of inputs to the next: in the lab's committed rows of FP32
// kernels at k >= 128 (12,287; scripts/error-bounds) it stayed within 1.65x SGEMM's where the typical
// error was within 1.1x, reached 2.35x within 1.2x (one problem, cancelling inputs) and 2.66x within
// 1.5x; with the largest alone bounded by 1.5x at the samples, the judged rows reached 1.78x, and with
// both bounds 1.38x (data/flagship/regret/probe-eacc5e4/).
constexpr double kTypicalBound = 1.2, kLargestBound = 1.5;

// tensor_cores times (and measures) an FP32 candidate only where its model's time is at most this
// many times the fastest tensor-core candidate's measured time: the models err by 5-10% (median), and
// on large problems, where the FP32 kernels take twice the tensor-core ones' time, timing eight of
// them would double the choice's cost.
constexpr double kWorthTiming = 1.5;

// The configurations choice=measured times: the first kMeasured of each kind, tensor-core and FP32.
// (Taken from the one list by rank, small's FP32 splits, priced low by their model, filled the slots:
// at 647x366x1291 all eight were FP32 and no FP32-accurate kernel was timed; at 1365x548x453 the
// fastest tensor-core candidate, 7% faster than the pick, was not.)
std::vector<std::size_t> measured_indices(const std::vector<Priced>& list) {
  std::vector<std::size_t> out;
  std::size_t taken[2] = {0, 0};  // tensor-core, FP32
  for (std::size_t i = 0; i < list.size(); ++i)
    if (taken[list[i].fp32]++ < kMeasured) out.push_back(i);
  return out;
}

// The fastest of measured_indices(list) as timed, the FP32 ones with split products beside them only
// within kTypicalBound and kLargestBound; `fallback` where nothing can be timed. `fp32_pick`, for
// tensor_cores, is cuda_cores' pick: where the bounds admit it, it is the one FP32 candidate timed
// (cuda_cores has compared them; timed again, two near-equal ones could swap: at 16x836x1833
// tensor_cores took one that ran 4.5% slower than cuda_cores' pick).
std::string measured_pick(const Problem& p, const std::vector<Priced>& list, const std::string& fallback,
                          const std::string& fp32_pick, const DeviceInfo& d) {
  static std::mutex lock;
  using Key = std::tuple<long, long, long, std::string, int, std::string>;  // problem, inputs, GPU, and
  static std::map<Key, std::string> chosen;  // the candidates timed: the pick
  static StateCache states;  // the timed candidates' states, for the process
  const std::vector<std::size_t> timed = measured_indices(list);
  const bool probe =
      p.k >= kFp32BelowK && std::any_of(list.begin(), list.end(), [](const Priced& c) { return !c.fp32; });
  std::string key_list;
  for (std::size_t i : timed) key_list += list[i].spec + "|";
  const Key key{p.m, p.n, p.k, inputs_name(p.inputs), d.ordinal, key_list};
  std::lock_guard<std::mutex> hold(lock);
  if (auto it = chosen.find(key); it != chosen.end()) return it->second;
  const std::size_t f = sizeof(float), operands = f * std::size_t(p.m * p.k + p.k * p.n + p.m * p.n);
  std::vector<PreparedRun> runs;
  for (std::size_t i : timed) {
    const EngineSpec e = EngineSpec::parse(list[i].spec, algorithms::single_process());
    runs.push_back(Invocation(*e.algorithm, d).prepare(p, e.params, states));
  }
  std::optional<PreparedRun> sgemm;  // cuBLAS SGEMM, the error bound's measure
  if (probe) sgemm = Invocation(algorithms::cublas(), d).prepare(p, Params::parse("default", ""), states);
  std::size_t workspace = sgemm ? sgemm->workspace_bytes() : 0;
  for (const PreparedRun& r : runs) workspace = std::max(workspace, r.workspace_bytes());
  if (operands + workspace > free_device_bytes() / 2) return chosen[key] = fallback;
  Buffer a(f * p.m * p.k, Buffer::Kind::device), b(f * p.k * p.n, Buffer::Kind::device),
      c(f * p.m * p.n, Buffer::Kind::device), w(std::max<std::size_t>(workspace, 1), Buffer::Kind::device);
  cudaStream_t s = nullptr;
  MMLAB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  fill_input_device(a.as<float>(), p.m, p.k, p.inputs, 1, kMatrixA, s);
  fill_input_device(b.as<float>(), p.k, p.n, p.inputs, 1, kMatrixB, s);
  Buffers io;
  io.a = a.as<float>(), io.b = b.as<float>(), io.c = c.as<float>(), io.workspace = w.get();
  // The error of C after `run` (poisoned first) at the samples.
  const auto error_of = [&](const PreparedRun& run, const SampledError& error) {
    poison_device(io.c, std::size_t(p.m) * p.n, s);
    run.run(io, s);
    return error(io.c, s);
  };
  std::optional<SampledError> error;
  Verdict base;  // SGEMM's at the samples
  if (sgemm && sgemm->ready()) {
    error.emplace(io.a, io.b, p, s);
    base = error_of(*sgemm, *error);
  }
  static const bool log = std::getenv("MMLAB_CHOICE_LOG") != nullptr;
  const auto say = [&](const Priced& one, const char* what, double x, double y = 0) {
    if (log)
      std::fprintf(stderr, "choice %ldx%ldx%ld %s %s: %s %.4g %.4g\n", p.m, p.n, p.k, inputs_name(p.inputs).c_str(),
                   one.spec.c_str(), what, x, y);
  };
  const double inf = std::numeric_limits<double>::infinity();
  const auto ratio = [&](double x, double sgemm) { return x == 0 ? 0 : sgemm > 0 ? x / sgemm : inf; };
  // Whether an FP32 candidate is within the bounds on the problem (by the models alone without a GPU
  // measure).
  const auto within = [&](const PreparedRun& run, const Priced& one) {
    if (!error) return one.admitted;
    const Verdict v = error_of(run, *error);
    const double typical = ratio(typical_error(v, p.inputs), typical_error(base, p.inputs)),
                 largest = ratio(judged_error(v, p.inputs), judged_error(base, p.inputs));
    say(one, "error x SGEMM's, typical and largest", typical, largest);
    return v.ok && typical <= kTypicalBound && largest <= kLargestBound;
  };
  std::vector<std::size_t> order(runs.size());  // cuda_cores' pick first
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t i) { return list[timed[i]].spec == fp32_pick; });
  std::string best = fallback;
  double best_ms = inf, tensor_ms = inf;
  for (const bool fp32 : {false, true})  // tensor-core candidates first
    for (std::size_t i : order) {
      const Priced& one = list[timed[i]];
      if (one.fp32 != fp32 || !runs[i].ready()) continue;
      if (fp32 && one.ms > kWorthTiming * tensor_ms) {
        say(one, "not timed, its model's ms", one.ms);
        continue;
      }
      if (probe && fp32 && !within(runs[i], one)) continue;
      const double ms = median_call_ms([&] { runs[i].run(io, s); }, s, 0);
      say(one, "ms", ms);
      if (ms < best_ms) best_ms = ms, best = one.spec;
      if (!fp32) tensor_ms = best_ms;
      if (fp32 && one.spec == fp32_pick) break;
    }
  MMLAB_CHECK(cudaStreamSynchronize(s));
  cudaStreamDestroy(s);
  if (log)
    std::fprintf(stderr, "choice %ldx%ldx%ld %s: %s\n", p.m, p.n, p.k, inputs_name(p.inputs).c_str(), best.c_str());
  return chosen[key] = best;
}

// The pick for a problem: by the models (their cheapest that may run by them alone; `ms` receives its
// predicted time), or with choice=measured on a GPU, the fastest of the models' cheapest as timed.
Params choose(const Problem& p, const Params& q, const DeviceInfo& d, double* ms = nullptr) {
  const std::vector<Priced> list = priced(p, q, d);
  const auto cheapest = std::find_if(list.begin(), list.end(), [](const Priced& c) { return c.admitted; });
  if (ms) *ms = cheapest == list.end() ? std::numeric_limits<double>::infinity() : cheapest->ms;
  Params out = q;
  std::string pick = cheapest == list.end() ? "none" : cheapest->spec;
  if (!list.empty() && d.present && q.has("choice") && q.text("choice") == "measured") {
    std::string fp32_pick;  // tensor_cores weighs cuda_cores' pick (made first, once per problem)
    if (variant_kind<Kind>(kVariants, q) == Kind::tensor_cores) {
      Params fp32(kVariants[0].name);
      fp32.set("choice", "measured");
      fp32_pick = choose(p, fp32, d).text("kernel");
    }
    pick = measured_pick(p, list, pick, fp32_pick, d);
  }
  out.set("kernel", pick);
  return out;
}

Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) { return choose(p, q, d); }

// The chosen algorithm and its parameters: the resolved `kernel`, an engine spec; none before the
// choice ("auto") or where nothing runs ("none").
std::optional<EngineSpec> pick_of(const Params& q) {
  const std::string text = q.text("kernel");
  if (text.find(':') == std::string::npos) return std::nullopt;
  return EngineSpec::parse(text, algorithms::single_process());
}

// Its state: the states of the algorithms it has run (library handles, tensor maps), and each
// problem's pick prepared (resolved, checked, sized) on its first run, so a trial's host cost is one
// lookup and the chosen kernel's launch.
// With launch=graph, each problem's pick is captured once (per stream, operands and workspace) into
// a CUDA graph and replayed: one launch's host cost per call, whatever the pick enqueues (a transpose
// or split pass, a memset, the kernel). Inside a capture of the caller's (the harness's batched
// scope) the pick is enqueued as it is.
using PickKey = std::tuple<std::string, const DeviceInfo*, long, long, long, std::string>;
using ReplayKey = std::tuple<std::string, const DeviceInfo*, cudaStream_t, const float*, const float*, float*,
                             void*, long, long, long>;
struct State {
  StateCache states;
  std::mutex lock;
  std::map<PickKey, PreparedRun> picks;
  GraphReplays<ReplayKey> replays;  // launch/graph_replay.cuh
};

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const std::optional<EngineSpec> k = pick_of(q);
  if (!k) return "no candidate kernel can run this problem here";
  return Invocation(*k->algorithm, d).check(p, k->params);
}

void run(const RunArgs& r) {
  State& state = *static_cast<State*>(r.state);
  const Problem& p = r.problem;
  const PreparedRun* picked;
  {
    std::lock_guard<std::mutex> hold(state.lock);
    const PickKey key{r.params->text("kernel"), r.device, p.m, p.n, p.k, inputs_name(p.inputs)};
    auto it = state.picks.find(key);
    if (it == state.picks.end()) {
      const EngineSpec k = *pick_of(*r.params);
      it = state.picks.emplace(key, Invocation(*k.algorithm, *r.device).prepare(p, k.params, state.states)).first;
    }
    picked = &it->second;  // std::map: the entry stays where it is
  }
  Buffers io;
  io.a = r.a, io.b = r.b, io.c = r.c, io.workspace = r.workspace;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  MMLAB_CHECK(cudaStreamIsCapturing(r.stream, &capturing));
  if (r.params->text("launch") != "graph" || capturing != cudaStreamCaptureStatusNone)
    return picked->run(io, r.stream);
  std::lock_guard<std::mutex> hold(state.lock);
  state.replays.run({r.params->text("kernel"), r.device, r.stream, r.a, r.b, r.c, r.workspace, p.m, p.n, p.k},
                    r.stream, [&] { picked->run(io, r.stream); });
}

}  // namespace

MMLAB_ALGORITHM(flagship) {
  a.summary = "dispatchers, one per accuracy class: each problem's cheapest lab kernel by fitted cost models";
  a.variants = kVariants;
  a.variants[0].summary += candidate_list(Kind::cuda_cores);
  a.variants[1].summary += candidate_list(Kind::tensor_cores) +
                               "; or cuda_cores' candidates where those do not pay (a tensor-core candidate's "
                               "model time is weighed divided by " + number_text(kTensorMargin) +
                               ") (from k = " + std::to_string(kFp32BelowK) +
                               " only those whose error, measured on the problem, is typically within " +
                               number_text(kTypicalBound) + "x cuBLAS SGEMM's and at most " +
                               number_text(kLargestBound) +
                               "x; by the models alone, without small's FP32 product split fewer "
                               "than " + std::to_string(kFp32FromSplit) +
                               " ways, whose tf32x3 twin runs instead); below k = " +
                               std::to_string(kFp32BelowK) + " cuda_cores' candidates only";
  a.axes = {{"kernel",
             AxisKind::choice,
             "the kernel it runs: auto, chosen as `choice` says (the resolved column names it)",
             "auto",
             {"auto"},
             {}},
            {"choice",
             AxisKind::choice,
             "measured: the models' " + std::to_string(kMeasured) +
                 " cheapest configurations of each kind it runs (tensor_cores: tensor-core ones, and cuda_cores' "
                 "within its error bound on the problem) timed on this GPU once per problem and kind of input, "
                 "the fastest taken; model: the models' cheapest (so too without a GPU)",
             "measured",
             {"measured", "model"},
             {}},
            {"launch",
             AxisKind::choice,
             "graph: the pick captured once per problem and operands, then replayed (one launch of host "
             "time); direct: enqueued anew each call",
             "graph",
             {"graph", "direct"},
             {}}};
  a.constraints = "any m, n, k that one of its candidates runs";
  a.resolve = resolve;
  a.predict_ms = [](const Problem& p, const Params& q, const DeviceInfo& d) {  // its pick's model
    if (const std::optional<EngineSpec> k = q.has("kernel") ? pick_of(q) : std::nullopt)
      return k->algorithm->predict_ms ? k->algorithm->predict_ms(p, k->params, d) : std::nan("");
    double ms = 0;
    choose(p, Params(q.variant()), d, &ms);
    return ms;
  };
  a.supports = supports;
  a.launch_config = [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const std::optional<EngineSpec> k = pick_of(q);
    return k && k->algorithm->launch_config ? k->algorithm->launch_config(p, k->params, d) : LaunchConfig{};
  };
  a.workspace_bytes = [](const Problem& p, const Params& q) {
    const std::optional<EngineSpec> k = pick_of(q);
    return k ? k->algorithm->workspace(p, k->params) : std::size_t(0);
  };
  a.make_state = [] { return std::static_pointer_cast<void>(std::make_shared<State>()); };
  a.run = run;
  for (const Variant& v : kVariants)
    a.set_nondeterminism(v.name,
                         "when it picks a kernel that splits k with atomics (register_tiled split > 1, "
                         "tf32x3 half3 split > 1)");
  a.is_nondeterministic = [](const Problem& p, const Params& q) {
    const std::optional<EngineSpec> k = pick_of(q);
    return k && !k->algorithm->deterministic(p, k->params);
  };
}

}  // namespace mmlab
