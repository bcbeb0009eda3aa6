// flagship: one dispatcher per accuracy class, over the lab's own kernels. For each problem it
// prices every candidate with a cost model, times the models' 8 cheapest on the GPU once
// (choice=measured; choice=model, or no GPU: the cheapest) and runs the fastest; the row's
// `resolved` column names what ran (algorithm:variant:parameters).
//   cuda_cores    FP32 on CUDA cores: register_tiled's tuned choice (its own fitted model), tma_tiled's
//                 data-parallel TMA kernel, streamk (pure and hybrid, three tile shapes), skinny where
//                 m or n is at most 64 (its cols kernel staged by the threads or by cp.async), gemv
//                 where m is at most 16 or n = 1 (16-byte loads, k summed over a cluster; four
//                 widths), deep_k where the output has fewer tiles than the device has block slots (k
//                 split to fill them, the slices added in order; five block and warp tiles), and
//                 small (one launch, k split over a cluster: four block and thread tiles, each priced
//                 at every split) for the problems of a few microseconds.
//   tensor_cores  FP32-accurate (error within 2x SGEMM's): tf32x3 half3 (a split pass, then FP16
//                 products), wgmma3 (split inside the k loop: no pass, no extra launches) or small's
//                 tf32x3 product (one launch, small tiles, k over a cluster) for small work; or
//                 cuda_cores' candidates where none pays. Below k = 128 split products buy no accuracy
//                 (short FP32 sums are within 1.0-1.5x SGEMM's error; a split product's terms carry
//                 2^-22 of their size): there it runs cuda_cores' candidates only. Measured
//                 (choice=measured), at every k an FP32 candidate runs only where its error, measured on
//                 the problem's shape and kind of input, is typically within 1.3x cuBLAS SGEMM's and at
//                 most 1.5x (small's FP32 product at split 2 reached 2.9x, at split 4 2.8x where cuBLAS
//                 splits k further, at split 1 below k = 128 2.2x), and where two kinds time alike they
//                 are timed again in turns. By the models alone, from k = 128, small's FP32 product split
//                 4 ways or more, and below it not its single k chain at k 25-32 on outputs of fewer
//                 tiles than SMs (2.5x SGEMM's error, where cuBLAS splits k).
//                 docs/tf32x3-notes.md. MMLAB_CHOICE_LOG=1 prints each timed candidate's time and error.
// Its choice is one object (KernelChoice, below): its candidates (kCandidates), the rules of the tensor-core
// class and one loop: check, predict, cheapest (then, measured, the fastest of the cheapest:
// measured_choice.hpp, which times the candidates, measures their error and keeps the picks). Each candidate is priced by its own
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
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "algorithms/launch/common.cuh"
#include "algorithms/composite/measured_choice.hpp"
#include "algorithms/launch/graph_replay.cuh"
#include "core/invocation.hpp"
#include "core/lab_states.hpp"
#include "algorithms/registry.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {
namespace {

using flagship::kLargestBound;
using flagship::kMeasured;
using flagship::kTypicalBound;
using flagship::Priced;

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
  {algorithms::gemv, "default", "width=128", Kind::cuda_cores, false},
  {algorithms::gemv, "default", "width=256", Kind::cuda_cores, false},
  {algorithms::gemv, "default", "width=512", Kind::cuda_cores, false},
  {algorithms::gemv, "default", "width=1024", Kind::cuda_cores, false},
  {algorithms::deep_k, "waves", "tile=64x64;warp=32x64", Kind::cuda_cores, false},
  {algorithms::deep_k, "waves", "tile=64x128;warp=32x64", Kind::cuda_cores, false},
  {algorithms::deep_k, "waves", "tile=128x64;warp=32x64", Kind::cuda_cores, false},
  {algorithms::deep_k, "waves", "tile=128x128;warp=32x64", Kind::cuda_cores, false},
  {algorithms::deep_k, "waves", "tile=128x128;warp=64x32", Kind::cuda_cores, false},
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
// By the models alone tensor_cores never runs it; measured, its error decides (at 257x511x31 on
// exp_spread:4 inputs cuda_cores' pick, split 1, was within 1.5x SGEMM's and 15% faster).
bool one_chain_where_cublas_splits(const Candidate& c, const Problem& p, const Params& q, const DeviceInfo& d) {
  const double tiles = std::ceil(double(p.m) / 64) * std::ceil(double(p.n) / 64);
  return c.kind == Kind::cuda_cores && has_accurate_twin(c) && q.text("split") == "1" && p.k > 24 && p.k <= 32 &&
         tiles < planning_sms(d);
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

// The candidates of a dispatcher of `kind`, each configuration once, as data (Variant::candidates).
std::vector<Choice> candidate_choices(Kind kind) {
  std::vector<Choice> out;
  for (const Candidate& c : kCandidates) {
    if (c.kind != kind) continue;
    Choice one{c.algorithm().name, c.variant, c.params};
    const auto same = [&](const Choice& o) {
      return o.algorithm == one.algorithm && o.variant == one.variant && o.params == one.params;
    };
    if (std::none_of(out.begin(), out.end(), same)) out.push_back(std::move(one));
  }
  return out;
}

// "register_tiled tuned, tma_tiled tma (tile=...), ...": the same in words.
std::string candidate_list(Kind kind) {
  std::string out;
  for (const Choice& c : candidate_choices(kind))
    out += (out.empty() ? "" : ", ") + c.algorithm + " " + c.variant + (c.params.empty() ? "" : " (" + c.params + ")");
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

// A candidate configuration as data: the pick the flagship holds (never parsed from its text).
flagship::Pick as_pick(const Candidate& c, const Params& q) {
  return std::make_shared<const EngineSpec>(EngineSpec{&c.algorithm(), q});
}


// The flagship's choice of a kernel for a problem, as one object (Triton's Autotuner is the model): its
// candidates (kCandidates), the models' pruning (priced: each candidate's own model, the rules of the
// tensor-core class), and the measured step with its one cache of picks (MeasuredChoice), the running
// Lab's (core/lab_states.hpp: freed with that Lab, apart from another Lab's). The descriptor holds it
// and every hook that chooses asks it: no statics.
class KernelChoice {
 public:
  // Every configuration of this dispatcher's kind (and, for tensor_cores, cuda_cores' as well) that can
  // run the problem and that its model prices, cheapest rank first.
  static std::vector<Priced> priced(const Problem& p, const Params& q, const DeviceInfo& d);
  // The pick for a problem: by the models (their cheapest that may run by them alone; `ms` receives its
  // predicted time), or with choice=measured on a GPU, the fastest of the models' cheapest as timed.
  Params choose(const Problem& p, const Params& q, const DeviceInfo& d, double* ms = nullptr);

 private:
  flagship::MeasuredChoice& measured() { return current_lab_states().get<flagship::MeasuredChoice>(this); }
};

std::vector<Priced> KernelChoice::priced(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Kind kind = variant_kind<Kind>(kVariants, q);
  std::vector<Priced> out;
  for (const Candidate& c : kCandidates) {
    const bool accurate = kind == Kind::tensor_cores, splits = accurate && p.k >= kFp32BelowK;
    if (c.kind == Kind::tensor_cores && !splits) continue;
    const Algorithm& a = c.algorithm();
    for (const std::string& canonical : priced_params(c)) {
      const Params cq = candidate_params(c, canonical, p, d);
      if (Invocation(a, d).check(p, cq)) continue;  // it cannot run here
      const double t = a.predict_ms ? a.predict_ms(p, cq, d) : std::nan("");
      if (std::isnan(t)) continue;  // its model does not price this configuration
      flagship::Pick pick = as_pick(c, cq);
      std::string spec = pick->text();
      out.push_back({std::move(pick), std::move(spec), t, t / (c.kind == Kind::tensor_cores ? kTensorMargin : 1.0),
                     c.kind == Kind::cuda_cores,
                     !accurate || (fp32_within_bound(c, p.k, cq) && !one_chain_where_cublas_splits(c, p, cq, d))});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Priced& x, const Priced& y) { return x.rank < y.rank; });
  return out;
}

Params KernelChoice::choose(const Problem& p, const Params& q, const DeviceInfo& d, double* ms) {
  const std::vector<Priced> list = priced(p, q, d);
  const auto cheapest = std::find_if(list.begin(), list.end(), [](const Priced& c) { return c.admitted; });
  if (ms) *ms = cheapest == list.end() ? std::numeric_limits<double>::infinity() : cheapest->ms;
  Params out = q;
  flagship::Pick pick = cheapest == list.end() ? nullptr : cheapest->pick;
  if (!list.empty() && d.present && q.has("choice") && q.text("choice") == "measured") {
    // tensor_cores measures its FP32 candidates' error, at every k, and weighs cuda_cores' pick (made
    // first, once per problem).
    const bool accurate = variant_kind<Kind>(kVariants, q) == Kind::tensor_cores;
    std::string fp32_pick;
    if (accurate) {
      Params fp32(kVariants[0].name);
      fp32.set("choice", "measured");
      fp32_pick = choose(p, fp32, d).text("kernel");
    }
    pick = measured().pick(p, list, pick, accurate, fp32_pick, d);
  }
  if (pick)
    out.set("kernel", pick);
  else
    out.set("kernel", "none");
  return out;
}

// The chosen algorithm and its parameters: the resolved `kernel` as the choice made it (read from its
// text only where the configuration came as text: a row read back); none before the choice ("auto")
// or where nothing runs ("none").
std::optional<EngineSpec> pick_of(const Params& q) {
  if (const EngineSpec* chosen = q.spec("kernel")) return *chosen;
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
  a.variants[0].candidates = candidate_choices(Kind::cuda_cores);
  a.variants[1].candidates = candidate_choices(Kind::tensor_cores);
  a.variants[1].rules = {{"tensor_margin", kTensorMargin},       {"typical_bound", kTypicalBound},
                         {"largest_bound", kLargestBound},       {"fp32_below_k", double(kFp32BelowK)},
                         {"fp32_from_split", double(kFp32FromSplit)}};
  a.variants[1].summary += candidate_list(Kind::tensor_cores) +
                               "; or cuda_cores' candidates where those do not pay (a tensor-core candidate's "
                               "model time is weighed divided by " + number_text(kTensorMargin) +
                               ") (measured: only those whose error on the problem is typically within " +
                               number_text(kTypicalBound) + "x cuBLAS SGEMM's and at most " +
                               number_text(kLargestBound) + "x, or, where none is and nothing else runs, the "
                               "one nearest that; by the models alone, from k = " + std::to_string(kFp32BelowK) +
                               " without small's FP32 product split fewer than " +
                               std::to_string(kFp32FromSplit) + " ways, whose tf32x3 twin runs instead); below k = " +
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
  const auto choice = std::make_shared<KernelChoice>();  // the descriptor's, shared by its hooks
  a.resolve = [choice](const Problem& p, const Params& q, const DeviceInfo& d) { return choice->choose(p, q, d); };
  a.predict_ms = [choice](const Problem& p, const Params& q, const DeviceInfo& d) {  // its pick's model
    if (const std::optional<EngineSpec> k = q.has("kernel") ? pick_of(q) : std::nullopt)
      return k->algorithm->predict_ms ? k->algorithm->predict_ms(p, k->params, d) : std::nan("");
    double ms = 0;
    choice->choose(p, Params(q.variant()), d, &ms);
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
  // tensor_cores: its cheapest candidates are three products on FP16 tensor cores (tf32x3's half3).
  a.arithmetic_by = [](const Params& q) {
    return variant_kind<Kind>(kVariants, q) == Kind::tensor_cores ? Arithmetic{MathUnit::fp16_tensor, 3}
                                                                   : Arithmetic{};
  };
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
