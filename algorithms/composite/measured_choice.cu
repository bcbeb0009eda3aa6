#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>

#include "algorithms/composite/measured_choice.hpp"
#include "algorithms/launch/common.cuh"
#include "algorithms/registry.hpp"
#include "core/invocation.hpp"
#include "runtime/gpu.hpp"
#include "runtime/sampled_error.hpp"
#include "runtime/timing.hpp"

namespace mmlab::flagship {
namespace {

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

}  // namespace

MeasuredChoice::MeasuredChoice() : log_(std::getenv("MMLAB_CHOICE_LOG") != nullptr) {}

Pick MeasuredChoice::pick(const Problem& p, const std::vector<Priced>& list, const Pick& fallback, bool measure_fp32,
                          const std::string& fp32_pick, const DeviceInfo& d) {
  std::map<Key, Pick>& chosen = chosen_;
  StateCache& states = states_;
  const bool log = log_;
  const std::vector<std::size_t> timed = measured_indices(list);
  std::string key_list;
  for (std::size_t i : timed) key_list += list[i].spec + "|";
  const Key key{p.m, p.n, p.k, inputs_name(p.inputs), d.ordinal, key_list, measure_fp32};
  std::lock_guard<std::mutex> hold(lock_);
  if (auto it = chosen.find(key); it != chosen.end()) return it->second;
  const std::size_t f = sizeof(float), operands = f * std::size_t(p.m * p.k + p.k * p.n + p.m * p.n);
  std::vector<PreparedRun> runs;
  for (std::size_t i : timed) runs.push_back(Invocation(*list[i].pick->algorithm, d).prepare(p, list[i].pick->params, states));
  std::optional<PreparedRun> sgemm;  // cuBLAS SGEMM, the error bound's measure
  if (measure_fp32)
    sgemm = Invocation(algorithms::cublas(), d).prepare(p, Params::parse("default", ""), states);
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
  const auto say = [&](const Priced& one, const char* what, double x, double y = 0) {
    if (log)
      std::fprintf(stderr, "choice %ldx%ldx%ld %s %s: %s %.4g %.4g\n", p.m, p.n, p.k,
                   inputs_name(p.inputs).c_str(), one.spec.c_str(), what, x, y);
  };
  const double inf = std::numeric_limits<double>::infinity();
  const auto ratio = [&](double x, double sgemm) { return x == 0 ? 0 : sgemm > 0 ? x / sgemm : inf; };
  // Whether an FP32 candidate is within the bounds on the problem (by the models alone without a GPU
  // measure). The one nearest them is kept for a problem where none is within them and nothing else
  // runs (below k = 128, where tensor_cores has FP32 candidates only).
  Pick nearest = fallback;
  double nearest_excess = inf;  // how far beyond the bounds, max(typical / bound, largest / bound)
  const auto within = [&](const PreparedRun& run, const Priced& one) {
    if (!error) return one.admitted;
    const Verdict v = error_of(run, *error);
    const double typical = ratio(typical_error(v, p.inputs), typical_error(base, p.inputs)),
                 largest = ratio(judged_error(v, p.inputs), judged_error(base, p.inputs));
    say(one, "error x SGEMM's, typical and largest", typical, largest);
    const double excess = v.ok ? std::max(typical / kTypicalBound, largest / kLargestBound) : inf;
    if (excess < nearest_excess) nearest_excess = excess, nearest = one.pick;
    return excess <= 1;
  };
  std::vector<std::size_t> order(runs.size());  // cuda_cores' pick first
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t i) { return list[timed[i]].spec == fp32_pick; });
  std::size_t fastest[2] = {runs.size(), runs.size()};  // of each kind: tensor-core, FP32
  double fastest_ms[2] = {inf, inf};
  std::vector<double> timed_ms(runs.size(), inf);  // each candidate's first time (inf: not timed)
  for (const bool fp32 : {false, true})  // tensor-core candidates first
    for (std::size_t i : order) {
      const Priced& one = list[timed[i]];
      if (one.fp32 != fp32 || !runs[i].ready()) continue;
      if (fp32 && one.ms > kWorthTiming * fastest_ms[0]) {
        say(one, "not timed, its model's ms", one.ms);
        continue;
      }
      if (measure_fp32 && fp32 && !within(runs[i], one)) continue;
      const double ms = median_call_ms([&] { runs[i].run(io, s); }, s, 0);
      timed_ms[i] = ms;
      say(one, "ms", ms);
      if (ms < fastest_ms[fp32]) fastest_ms[fp32] = ms, fastest[fp32] = i;
      if (fp32 && one.spec == fp32_pick) break;
    }
  // Every timed candidate within kRunoffGap of the fastest (of either kind; at most kRunoffMost, the
  // fastest first): timed again in turns, kRunoffRounds times each, and the medians decide.
  std::vector<std::pair<double, std::size_t>> near;  // (first time, index)
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (timed_ms[i] <= (1 + kRunoffGap) * std::min(fastest_ms[0], fastest_ms[1])) near.push_back({timed_ms[i], i});
  std::sort(near.begin(), near.end());
  if (near.size() > kRunoffMost) near.resize(kRunoffMost);
  if (near.size() > 1) {
    std::vector<std::vector<double>> turns(near.size());
    for (int round = 0; round < kRunoffRounds; ++round)
      for (std::size_t j = 0; j < near.size(); ++j) {  // each round starts one further along
        const std::size_t at = (j + std::size_t(round)) % near.size();
        turns[at].push_back(median_call_ms([&] { runs[near[at].second].run(io, s); }, s, 0));
      }
    fastest_ms[0] = fastest_ms[1] = inf;
    for (std::size_t j = 0; j < near.size(); ++j) {
      std::vector<double>& t = turns[j];
      std::nth_element(t.begin(), t.begin() + kRunoffRounds / 2, t.end());
      const std::size_t i = near[j].second;
      const bool fp32 = list[timed[i]].fp32;
      say(list[timed[i]], "ms, in turns", t[kRunoffRounds / 2]);
      if (t[kRunoffRounds / 2] < fastest_ms[fp32]) fastest_ms[fp32] = t[kRunoffRounds / 2], fastest[fp32] = i;
    }
  }
  Pick best = fallback;
  if (fastest[0] < runs.size() || fastest[1] < runs.size())
    best = list[timed[fastest[fastest_ms[1] <= fastest_ms[0]]]].pick;
  else if (nearest_excess < inf)
    best = nearest;
  MMLAB_CHECK(cudaStreamSynchronize(s));
  cudaStreamDestroy(s);
  if (log)
    std::fprintf(stderr, "choice %ldx%ldx%ld %s: %s\n", p.m, p.n, p.k, inputs_name(p.inputs).c_str(),
                 best ? best->text().c_str() : "none");
  return chosen[key] = best;
}

}  // namespace mmlab::flagship
