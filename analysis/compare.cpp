// mmlab-analyze compare: each configuration against a baseline, estimate first (commands.hpp says
// what the table holds): the speed-up with its interval, paired by round where the trials were
// interleaved, a verdict against the margin, the tests Holm-adjusted within a family, and across runs.
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <sstream>

#include "analysis/commands.hpp"
#include "analysis/statistics.hpp"

namespace mmlab::analysis {

namespace {

// A comparison's estimate: the speed-up (baseline time / time) with its interval, the test's p,
// and what the design allows.
struct Estimate {
  double ratio = 0;
  Interval ci;          // of the ratio; coverage 0: the trials allow none at this level
  bool paired = false;  // interleaved trials paired by round; else independent samples
  std::size_t n = 0;    // pairs, or the smaller sample
  double p = 1;         // two-sided: Wilcoxon signed-rank (paired) or Mann-Whitney U
  // What the trials to decide are resampled from: the rounds' log speed-ups (paired), or the two
  // samples' log times (independent: the baseline's, the other's).
  std::vector<double> rounds, base_logs, other_logs;
};

// The minimum trials for an interval at 95%: 6 pairs (1 - 2/2^6 = 96.9%), or 4 values a side
// (1 - 2/C(8, 4) = 97.1%; 3 a side reach 90%).
std::size_t trials_for_an_interval(bool paired) { return paired ? 6 : 4; }

// What a comparison measures, in words: "GPU time", "host time", "GPU + host time" or "clock cycles".
std::string measure_of(const CompareOptions& o) {
  if (o.cycles) return "clock cycles";
  return o.metric == "host" ? "host time" : o.metric == "sum" ? "GPU + host time" : "GPU time";
}

// The times a comparison uses, per trial: the GPU's ms per launch (metric gpu), the host's time to
// enqueue it (host), or both (sum); with cycles, kilo-cycles of the SM clock sampled after each
// trial (ms x MHz).
std::vector<double> times_of(const Result& r, const CompareOptions& o) {
  const auto where = [&] { return r.file + ":" + std::to_string(r.line) + " (" + r.configuration() + ")"; };
  if (o.cycles && r.sample_clocks.size() != r.samples.size())
    throw AnalysisError("compare --cycles: " + where() + " has no clock per trial (recorded from schema 5, on GPUs)");
  if (o.metric != "gpu" && r.sample_host.size() != r.samples.size())
    throw AnalysisError("compare --metric " + o.metric + ": " + where() +
                        " has no host time per trial (recorded from schema 7, for GPU algorithms)");
  if (o.metric == "host") return r.sample_host;
  std::vector<double> out = r.samples;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (o.metric == "sum") out[i] += r.sample_host[i];
    if (o.cycles) out[i] *= r.sample_clocks[i];
  }
  return out;
}

bool pairable(const Result& a, const Result& b) {
  return a.order == "interleaved" && b.order == "interleaved" && !a.interleave_group.empty() &&
         a.interleave_group == b.interleave_group &&
         a.run_id.substr(0, a.run_id.rfind('-')) == b.run_id.substr(0, b.run_id.rfind('-'));
}

Estimate estimate(const Result& base, const Result& other, const CompareOptions& o) {
  const std::vector<double> b = times_of(base, o), a = times_of(other, o);
  if (b.size() < 2 || a.size() < 2)
    throw AnalysisError("compare: needs raw samples of at least 2 trials (" + other.file + ":" +
                        std::to_string(other.line) + ")");
  Estimate e;
  const auto logs = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (double x : v) out.push_back(std::log(x));
    return out;
  };
  const auto exp_interval = [](Interval i) {
    if (i.coverage > 0) i.lo = std::exp(i.lo), i.hi = std::exp(i.hi), i.centre = std::exp(i.centre);
    return i;
  };
  if (pairable(base, other)) {  // trial i of each ran in round i: the log-ratio of each round
    e.paired = true;
    e.n = std::min(b.size(), a.size());
    std::vector<double> d(e.n);
    for (std::size_t i = 0; i < e.n; ++i) d[i] = std::log(b[i]) - std::log(a[i]);
    e.rounds = d;
    e.ratio = std::exp(median(d));
    e.ci = exp_interval(paired_interval(d, o.level));
    if (e.ci.coverage <= 0)  // too few pairs for the level: the widest interval, at what it covers
      e.ci = exp_interval(paired_interval(d, 1 - 2 * std::ldexp(1.0, -int(e.n)) * (1 + 1e-9)));
    e.p = wilcoxon_signed_rank(d).p;
    return e;
  }
  e.n = std::min(b.size(), a.size());
  e.base_logs = logs(b), e.other_logs = logs(a);
  e.ratio = median(b) / median(a);
  e.ci = double(b.size()) * double(a.size()) <= 2e7
             ? exp_interval(shift_interval(logs(b), logs(a), o.level))
             : bootstrap_median_ratio(b, a, o.level, o.resamples, o.seed);
  if (e.ci.coverage <= 0) {  // too few trials for the level: the widest interval, at what it covers
    const double arrangements =
        std::exp(std::lgamma(double(b.size() + a.size()) + 1) - std::lgamma(double(b.size()) + 1) -
                 std::lgamma(double(a.size()) + 1));
    e.ci = exp_interval(shift_interval(logs(b), logs(a), 1 - 2 / arrangements * (1 + 1e-9)));
  }
  e.p = mann_whitney(b, a).p;
  return e;
}

constexpr std::size_t kManyTrials = 20000;

// The verdict the interval gives against the margin, or "inconclusive" with the trials per
// configuration that would decide it, resampled from the observed rounds (statistics.hpp,
// trials_to_decide): its word, its text, and those trials (NaN when decided or more than kManyTrials).
struct Verdict {
  std::string word, text;
  double trials = std::numeric_limits<double>::quiet_NaN();
};
Verdict verdict_of(const Estimate& e, double margin, double level) {
  const double m = std::log1p(margin);
  const std::string band = fixed(100 * margin, 0) + "%";
  if (e.ci.coverage < level - 1e-9) {
    const std::size_t least = trials_for_an_interval(e.paired);
    return {"inconclusive", "inconclusive: at least " + std::to_string(least) + " trials", double(least)};
  }
  const double lo = std::log(e.ci.lo), hi = std::log(e.ci.hi);
  if (lo > m) return {"faster", "faster"};
  if (hi < -m) return {"slower", "slower"};
  if (lo >= -m && hi <= m) return {"equivalent", "equivalent (within " + band + ")"};
  const double n = e.paired ? trials_to_decide(e.rounds, m, level, kManyTrials)
                           : trials_to_decide(e.base_logs, e.other_logs, m, level, kManyTrials);
  if (n >= double(kManyTrials))
    return {"inconclusive", "inconclusive: more than " + std::to_string(kManyTrials) + " trials"};
  const std::size_t trials = std::size_t(std::ceil(std::max(n, double(e.n) + 1)));
  return {"inconclusive", "inconclusive: about " + std::to_string(trials) + " trials", double(trials)};
}

// A row's clock, as its timer measured it (or as the comparison asks: cycles, the host's time).
std::string clock_of(const Result& r, const CompareOptions& o) {
  if (o.cycles || o.metric != "gpu") return measure_of(o);
  if (r.timer == Timer::host) return "host time";
  if (r.timer == Timer::events || r.timer == Timer::graph) return "GPU + host enqueue";
  return "GPU time";
}
// The fields that say which problem and row a comparison is, first in every record: the results'
// own columns, then the comparison's.
using T = ColumnType;
const std::vector<Field> kWhich = {Col::m,         Col::n,       Col::k,      Col::inputs,          Col::scope,
                                   Col::l2_flush,  {"clock", T::choice},      Col::timer,           Col::algorithm,
                                   Col::variant,   Col::params,  {"configuration", T::text},         {"run", T::text}};
// kWhich, then `own`.
std::vector<Field> fields_after_which(std::initializer_list<Field> own) {
  std::vector<Field> out = kWhich;
  out.insert(out.end(), own);
  return out;
}

std::vector<Value> which_of(const Result& r, const CompareOptions& o) {
  return {r.m, r.n, r.k, inputs_name(r.inputs), scope_name(r.scope), l2_flush_name(r.l2_flush), clock_of(r, o),
          r.timer ? timer_name(*r.timer) : "", r.algorithm,
          r.variant, r.params, r.configuration(), r.fields.at("run")};
}
// The clock of a table's rows for its title: theirs when they share one, else the column's word.
std::string clocks_of(const std::vector<const Result*>& rows, const CompareOptions& o) {
  std::set<std::string> clocks;
  for (const Result* r : rows) clocks.insert(clock_of(*r, o));
  return clocks.size() == 1 ? *clocks.begin() : "each row's clock: column clock";
}
// "on" where the table's rows differ in their L2 setting: the column that says which.
bool l2_varies(const std::vector<const Result*>& rows) {
  std::set<std::string> l2;
  for (const Result* r : rows) l2.insert(l2_flush_name(r->l2_flush));
  return l2.size() > 1;
}

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

// The baseline spec ALG[:variant[:params]] as a row test: FP32 rows only, unless the spec names the
// variant (cublas:tf32 is the yardstick of TF32 engines; `cublas` alone never picks its TF32 rows).
std::function<bool(const Result&)> baseline_test(const std::string& spec_text) {
  const SpecParts spec = split_spec(spec_text);
  if (spec.algorithm.empty() || (spec.has_variant && spec.variant.empty()))
    throw AnalysisError(
        "compare: --baseline must be ALG[:variant[:params]] or best:SPEC,SPEC..., e.g. cublas, "
        "tiled:default:tile=32 or best:cublas,cutlass");
  if (spec.has_variant && !spec.has_params && spec.variant.find('=') != std::string::npos)
    throw AnalysisError("compare: --baseline " + spec_text + ": '" + spec.variant +
                        "' is parameters, not a variant; name the variant before them: " + spec.algorithm +
                        ":VARIANT:" + spec.variant + " (e.g. " + spec.algorithm + ":default:" + spec.variant + ")");
  return [spec](const Result& r) {
    return (r.fp32() || spec.has_variant) && r.algorithm == spec.algorithm &&
           (!spec.has_variant || r.variant == spec.variant) && (!spec.has_params || r.params == spec.params);
  };
}

// `best:SPEC,SPEC...`: several yardsticks; at each problem the fastest row any of them matches (by
// median) is the baseline. Otherwise the one SPEC.
std::vector<std::string> baseline_specs(const std::string& text) {
  if (text.rfind("best:", 0) != 0) return {text};
  std::vector<std::string> out;
  std::stringstream ss(text.substr(5));
  for (std::string part; std::getline(ss, part, ',');) out.push_back(part);
  if (out.empty()) throw AnalysisError("compare: --baseline best: needs a list, e.g. best:cublas,cutlass");
  return out;
}

std::string run_of(const Result& r) { return r.fields.at("run"); }

// What the files hold that could be compared instead, for the messages of a comparison that cannot be
// made: the algorithms with ok rows, and why the others' rows are not.
std::string instead(const std::vector<Result>& rows) {
  std::map<std::string, std::size_t> ok;
  std::map<std::string, std::size_t> not_ok;  // status: reason -> rows
  for (const Result& r : rows)
    (r.ok() ? ok[r.algorithm] : not_ok[status_name(r.status) + std::string(": ") + r.get(Col::reason)])++;
  std::string out = ". The files' ok rows: ";
  if (ok.empty()) return out + "none" + (not_ok.empty() ? "" : " (" + not_ok.begin()->first + ")");
  for (const auto& [name, count] : ok) out += name + " (" + std::to_string(count) + "), ";
  out.erase(out.size() - 2);
  if (ok.size() == 1)
    out += ": one algorithm, nothing to compare it with; `mmlab-analyze summary FILE` prints its statistics";
  else
    out += ": compare them with --baseline " + ok.begin()->first;
  if (!not_ok.empty()) {
    std::size_t others = 0;
    for (const auto& [text, count] : not_ok) others += count;
    out += " (" + std::to_string(others) + " other rows: " + not_ok.begin()->first + (not_ok.size() > 1 ? ", ..." : "") + ")";
  }
  return out;
}

struct Pair {
  const Result* base;
  const Result* other;
};

// Every ok configuration against the baseline's row at the same problem, scope and L2 setting (and
// run, with `per_run`).
std::vector<Pair> pair_with_baseline(const std::vector<Result>& rows, const CompareOptions& o, bool per_run) {
  const std::vector<std::string> specs = baseline_specs(o.baseline);
  const bool best = specs.size() > 1 || o.baseline.rfind("best:", 0) == 0;
  std::vector<std::function<bool(const Result&)>> tests;
  for (const std::string& spec : specs) tests.push_back(baseline_test(spec));
  const auto is_baseline = [&](const Result& r) {
    return std::any_of(tests.begin(), tests.end(), [&](const auto& test) { return test(r); });
  };
  std::set<std::string> algorithms;
  for (const Result& r : rows) algorithms.insert(r.algorithm);
  for (const std::string& spec : specs) {
    const std::string name = split_spec(spec).algorithm;
    std::size_t baseline_ok = 0, baseline_rows = 0;
    std::map<std::string, std::size_t> why;  // skipped/failed reasons of the baseline
    for (const Result& r : rows) {
      if (r.algorithm != name) continue;
      ++baseline_rows;
      if (r.ok())
        ++baseline_ok;
      else
        why[status_name(r.status) + std::string(": ") + r.get(Col::reason)]++;
    }
    if (!algorithms.count(name)) {
      std::string names;
      for (const auto& a : algorithms) names += (names.empty() ? "" : ", ") + a;
      throw AnalysisError("compare: baseline algorithm '" + name + "' is not in the files (present: " + names +
                          ")");
    }
    if (baseline_ok == 0) {
      std::string reasons;
      for (const auto& [text, count] : why) reasons += (reasons.empty() ? "" : "; ") + text;
      throw AnalysisError("compare: baseline " + name + " has no ok rows (" + std::to_string(baseline_rows) +
                          " rows, " + reasons + ")" + instead(rows));
    }
  }
  std::vector<Pair> pairs;
  std::map<std::string, const Result*> base_of;  // shape|scope|l2[|run] -> baseline row
  const bool any_scope = o.baseline_scope.has_value();
  auto group = [&](const Result& r) { return (any_scope ? r.shape() : r.problem()) + (per_run ? "|" + run_of(r) : ""); };
  for (const Result& r : rows) {
    if (!r.ok() || !is_baseline(r) || (any_scope && r.scope != o.baseline_scope)) continue;
    if (!o.sizes.empty() && std::find(o.sizes.begin(), o.sizes.end(), r.shape()) == o.sizes.end() &&
        std::find(o.sizes.begin(), o.sizes.end(), r.dims()) == o.sizes.end())
      continue;
    auto [it, fresh] = base_of.emplace(group(r), &r);
    if (best) {  // the fastest of the yardsticks' rows here
      if (!fresh && r.median_ms < it->second->median_ms) it->second = &r;
      continue;
    }
    if (!fresh && it->second->configuration() != r.configuration())
      throw AnalysisError("compare: baseline '" + o.baseline + "' matches several configurations at " +
                          r.shape() + " (" + it->second->configuration() + "; " + r.configuration() +
                          "): name one, as ALG:variant:params, or take the fastest with best:" + o.baseline);
    if (!fresh && it->second->run_id == r.run_id)  // the same row twice: a file named twice, or a copy
      throw AnalysisError(
          "compare: run " + run_of(r) + " is read twice (" + it->second->file + ":" + std::to_string(it->second->line) +
          " and " + r.file + ":" + std::to_string(r.line) + "): " +
          (it->second->file == r.file ? "the file is named twice" : "the two files hold the same run (a copy)") +
          "; name each run's file once");
    if (!fresh)
      throw AnalysisError("compare: the baseline appears twice at " + r.shape() + " " + scope_name(r.scope) + " (" +
                          it->second->file + ":" + std::to_string(it->second->line) + " and " + r.file + ":" +
                          std::to_string(r.line) + ")" +
                          (per_run ? "" : "; pick one run with --run latest or --run RUN"));
  }
  for (const Result& r : rows) {
    if (!r.ok()) continue;
    auto it = base_of.find(group(r));
    if (it == base_of.end() || it->second == &r) continue;
    // One baseline: its rows are the yardstick, not compared. best: the other yardsticks' rows are
    // compared with the fastest (e.g. cuBLAS against CUTLASS where CUTLASS is faster).
    if (!best && is_baseline(r) && (!any_scope || r.scope == o.baseline_scope)) continue;
    pairs.push_back({it->second, &r});
  }
  if (pairs.empty())
    throw AnalysisError("compare: no configuration shares a problem size and scope with the baseline's ok rows" +
                        instead(rows));
  return pairs;
}

// What the tests of a family can reach: the smallest p its trials allow, times the family's size
// (Holm's first step). The trials per configuration a family of `size` needs to reach `alpha`.
double smallest_p(bool paired, std::size_t n) {
  return paired ? smallest_p_wilcoxon(n) : smallest_p_mann_whitney(n, n);
}
std::size_t trials_to_reach(bool paired, std::size_t size, double alpha) {
  for (std::size_t n = 2; n <= 1000; ++n)
    if (double(size) * smallest_p(paired, n) < alpha) return n;
  return 1001;
}

std::string family_key(const Pair& q, const std::string& family) {
  if (family == "table") return "";
  return q.other->problem() + "|" + run_of(*q.other);
}

// The notes every comparison table carries: methods, the family, what the design can reach, and
// the trials below the run's reference clock.
std::string compare_note(const std::vector<Pair>& pairs, const std::vector<Estimate>& est,
                         const std::map<std::string, std::size_t>& family_size, const CompareOptions& o) {
  const double alpha = 1 - o.level;
  std::size_t paired = 0, largest = 0;
  for (const Estimate& e : est) paired += e.paired;
  for (const auto& [key, size] : family_size) largest = std::max(largest, size);
  std::string note = "speed-up = baseline " + measure_of(o) + " / its own (above 1: faster); ";
  if (o.baseline.rfind("best:", 0) == 0)
    note += "the baseline at each problem: the fastest FP32 row of " + o.baseline.substr(5) +
            " (its median; every configuration of each); ";
  if (paired)
    note +=
        "paired (" + std::to_string(paired) +
        " rows, trials interleaved): exp of the median log-ratio of each round's trials, its " +
        fixed(100 * o.level, 0) +
        "% interval from the Wilcoxon signed-rank distribution (Walsh averages), p: Wilcoxon signed-rank; ";
  if (paired < est.size())
    note +=
        "independent (" + std::to_string(est.size() - paired) + " rows): ratio of medians, the " +
        fixed(100 * o.level, 0) +
        "% Hodges-Lehmann interval of the log-ratio from the Mann-Whitney distribution, p: Mann-Whitney U; ";
  note +=
      "verdict: faster or slower when the interval lies beyond +-" + fixed(100 * o.margin, 0) +
      "% (--margin), equivalent when it lies inside (two one-sided tests), else inconclusive with the "
      "trials per configuration that would decide it. p (Holm): adjusted within each family, " +
      (o.family == "table" ? std::string("the whole table (") + std::to_string(est.size()) + " comparisons)"
                           : std::string("a problem (shape, scope, L2 setting, run): up to ") +
                                 std::to_string(largest) + " comparisons") +
      ".";
  // Families whose tests cannot reach alpha with the trials they have.
  std::size_t underpowered = 0, fewest = SIZE_MAX, needed = 0;
  bool paired_design = false;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t size = family_size.at(family_key(pairs[i], o.family));
    if (double(size) * smallest_p(est[i].paired, est[i].n) >= alpha) {
      ++underpowered;
      fewest = std::min(fewest, est[i].n);
      needed = std::max(needed, trials_to_reach(est[i].paired, size, alpha));
      paired_design = paired_design || est[i].paired;
    }
  }
  if (underpowered)
    note +=
        " " + std::string(underpowered == pairs.size() ? "No" : std::to_string(underpowered) + " of the") +
        " comparison" + (underpowered == 1 ? "" : "s") + " can reach p < " + p_text(alpha) +
        " after Holm with these trials (the smallest p of " + std::to_string(fewest) +
        (paired_design ? " pairs" : " vs " + std::to_string(fewest) + " trials") + " is " +
        p_text(smallest_p(paired_design, fewest)) + ", times the family); the verdicts read the intervals. " +
        "About " + std::to_string(needed) + " trials per configuration would let the tests decide.";
  std::size_t slow_rows = 0;
  std::set<const Result*> seen;
  for (const Pair& q : pairs)
    for (const Result* r : {q.base, q.other})
      if (seen.insert(r).second && r->slow_trials > 0) ++slow_rows;
  std::size_t host_inside = 0;
  seen.clear();
  for (const Pair& q : pairs)
    for (const Result* r : {q.base, q.other})
      if (seen.insert(r).second && (r->timer == Timer::events || r->timer == Timer::graph)) ++host_inside;
  if (host_inside && o.metric == "gpu")
    note += " Warning: " + std::to_string(host_inside) +
            " rows were timed with events on an idle stream (column timer: events or graph; every GPU row "
            "before schema 7): their times hold the host's enqueue time as well as the GPU's, which moves with "
            "the host's load; below about 100 us it can decide the verdict.";
  if (slow_rows)
    note +=
        " Warning: " + std::to_string(slow_rows) +
        " rows had trials below 95% of their run's reference clock (column slow_trials); compare --cycles "
        "compares in clock cycles.";
  return note;
}

// "4096", "1041x1247x139", "4096/wide_exponent": a problem as the tables name it (Result::shape).
bool problem_text(const std::string& text) {
  const auto slash = text.find('/');
  const std::string dims = text.substr(0, slash);
  if (slash != std::string::npos && !parse_inputs_name(text.substr(slash + 1))) return false;
  std::size_t parts = 0;
  for (std::size_t at = 0; at <= dims.size(); ++parts) {
    const std::size_t x = std::min(dims.find('x', at), dims.size());
    const std::string digits = dims.substr(at, x - at);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    at = x + 1;
  }
  return parts == 1 || parts == 3;
}

}  // namespace

Scope scope_option(const std::string& text, const std::string& what) {
  try {
    return parse_scope(text);
  } catch (const UsageError&) {
    throw AnalysisError(what + " '" + text + "' (valid: " + domain_names(column_name(Col::scope)) + ")");
  }
}

BadSamples bad_samples_option(const std::string& text) {
  if (text == kBadSamplesNames[0]) return BadSamples::error;
  if (text == kBadSamplesNames[1]) return BadSamples::leave_out;
  throw AnalysisError("--bad-samples '" + text + "' (valid: " + kBadSamplesNames[0] + ", " + kBadSamplesNames[1] + ")");
}

void check(const CompareOptions& o) {
  if (o.baseline.empty()) throw AnalysisError("compare: --baseline ALG[:variant[:params]] is required");
  for (const std::string& size : o.sizes)  // N or MxNxK, optionally /inputs, as the tables print them
    if (!problem_text(size))
      throw AnalysisError("compare: --size '" + size + "' is not a problem: N (a square size) or MxNxK, "
                          "optionally /inputs (e.g. 4096, 1041x1247x139, 4096/wide_exponent)");
  if (o.metric != "gpu" && o.metric != "host" && o.metric != "sum")
    throw AnalysisError("compare: --metric '" + o.metric + "' (valid: gpu, host, sum)");
  if (o.cycles && o.metric != "gpu")
    throw AnalysisError("compare: --cycles counts the GPU's clock; it goes with --metric gpu only");
  if (!(o.level > 0 && o.level < 1) || o.resamples < 100)
    throw AnalysisError("compare: --level in (0, 1), --resamples >= 100");
  if (!(o.margin >= 0 && o.margin < 1)) throw AnalysisError("compare: --margin in [0, 1), e.g. 0.02");
  if (o.family != "problem" && o.family != "table")
    throw AnalysisError("compare: --family '" + o.family + "' (valid: problem, table)");
}

Table compare(const std::vector<Result>& all_rows, const CompareOptions& o) {
  if (o.across_runs) return compare_across_runs(all_rows, o);
  const std::vector<Result> rows = select_run(all_rows, o.run);
  const std::vector<Pair> pairs = pair_with_baseline(rows, o, false);
  std::vector<Estimate> est;
  std::map<std::string, std::size_t> family_size;
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    est.push_back(estimate(*pairs[i].base, *pairs[i].other, o));
    const std::string key = family_key(pairs[i], o.family);
    ++family_size[key];
    members[key].push_back(i);
  }
  std::vector<double> adjusted(pairs.size());
  for (const auto& [key, list] : members) {
    std::vector<double> p;
    for (std::size_t i : list) p.push_back(est[i].p);
    const std::vector<double> h = holm(p);
    for (std::size_t j = 0; j < list.size(); ++j) adjusted[list[j]] = h[j];
  }
  Table t;
  std::vector<const Result*> compared;
  for (const Pair& q : pairs) compared.push_back(q.other), compared.push_back(q.base);
  const bool l2_column = l2_varies(compared);
  t.title = "compare against " + o.baseline + " (" + clocks_of(compared, o) + ")";
  const std::string unit = o.cycles ? "kcycles" : "ms";
  t.header = {"size",
              "scope",
              "configuration",
              "median " + unit,
              "baseline " + unit,
              "speed-up",
              "CI " + fixed(o.level * 100, 0) + "%",
              "verdict",
              "design",
              "p",
              "p (Holm)",
              "clock"};
  if (l2_column) t.header.push_back("L2 flush");
  declare(t, fields_after_which({{"unit", T::choice}, {"median", T::number}, {"baseline_configuration", T::text},
                                  {"baseline_median", T::number}, {"speedup", T::number}, {"ci_lo", T::number},
                                  {"ci_hi", T::number}, {"ci_coverage", T::number}, {"verdict", T::choice},
                                  {"trials_to_decide", T::whole}, {"design", T::choice}, {"trials", T::whole},
                                  {"p", T::number}, {"p_holm", T::number}}));
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair& q = pairs[i];
    const Estimate& e = est[i];
    const double other_median = median(times_of(*q.other, o)), base_median = median(times_of(*q.base, o));
    char mo[32], mb[32];
    std::snprintf(mo, sizeof mo, "%.4g", other_median);
    std::snprintf(mb, sizeof mb, "%.4g", base_median);
    std::string ci = e.ci.coverage > 0 ? fixed(e.ci.lo, 3) + " to " + fixed(e.ci.hi, 3) : "";
    if (e.ci.coverage > 0 && e.ci.coverage < o.level - 1e-9)  // the widest the trials allow
      ci += " (" + fixed(100 * e.ci.coverage, 0) + "%)";
    const Verdict v = verdict_of(e, o.margin, o.level);
    const std::string clock = clock_of(*q.other, o) == clock_of(*q.base, o)
                                  ? clock_of(*q.other, o)
                                  : clock_of(*q.other, o) + " (baseline: " + clock_of(*q.base, o) + ")";
    t.rows.push_back({q.other->shape(), scope_name(q.other->scope), q.other->configuration(), mo, mb, fixed(e.ratio, 3), ci,
                      v.text, (e.paired ? "paired, " : "independent, ") + std::to_string(e.n), p_text(e.p),
                      p_text(adjusted[i]), clock});
    if (l2_column) t.rows.back().push_back(l2_flush_name(q.other->l2_flush));
    std::vector<Value> rec = which_of(*q.other, o);
    const bool has_ci = e.ci.coverage > 0;
    for (const Value& x :
         {Value(unit), Value(other_median), Value(q.base->configuration()), Value(base_median), Value(e.ratio),
          has_ci ? Value(e.ci.lo) : Value(), has_ci ? Value(e.ci.hi) : Value(), has_ci ? Value(e.ci.coverage) : Value(),
          Value(v.word), Value(v.trials), Value(e.paired ? "paired" : "independent"), Value(e.n), Value(e.p),
          Value(adjusted[i])})
      rec.push_back(x);
    t.records.push_back(std::move(rec));
  }
  t.note = compare_note(pairs, est, family_size, o);
  return t;
}

Table compare_across_runs(const std::vector<Result>& all_rows, const CompareOptions& o) {
  const std::vector<Pair> pairs = pair_with_baseline(all_rows, o, true);
  // Each configuration's estimate per run, in the order the runs appear.
  struct Line {
    const Result* first;
    std::vector<std::string> runs;
    std::vector<Estimate> est;
  };
  std::map<std::string, Line> lines;
  std::vector<std::string> order;
  for (const Pair& q : pairs) {
    const std::string key = q.other->problem() + "|" + q.other->configuration();
    auto [it, fresh] = lines.try_emplace(key, Line{q.other, {}, {}});
    if (fresh) order.push_back(key);
    if (std::find(it->second.runs.begin(), it->second.runs.end(), run_of(*q.other)) != it->second.runs.end())
      throw AnalysisError("compare --across-runs: " + q.other->configuration() + " appears twice in run " +
                          run_of(*q.other));
    it->second.runs.push_back(run_of(*q.other));
    it->second.est.push_back(estimate(*q.base, *q.other, o));
  }
  std::vector<const Result*> members;
  for (const Pair& q : pairs) members.push_back(q.other), members.push_back(q.base);
  const bool l2_column = l2_varies(members);
  Table t;
  t.title = "compare against " + o.baseline + " across runs (" + clocks_of(members, o) + ")";
  const std::string level = fixed(o.level * 100, 0) + "%";
  t.header = {"size",
              "scope",
              "configuration",
              "runs",
              "each run's speed-up (its verdict)",
              "across runs",
              "CI " + level + " of the mean",
              "run-to-run spread",
              "verdict",
              "holds in every run",
              "prediction " + level + " (one more run)",
              "clock"};
  if (l2_column) t.header.push_back("L2 flush");
  declare(t, fields_after_which({{"runs", T::whole}, {"speedup", T::number}, {"mean_ci_lo", T::number},
                                  {"mean_ci_hi", T::number}, {"prediction_lo", T::number}, {"prediction_hi", T::number},
                                  {"spread_lo", T::number}, {"spread_hi", T::number}, {"verdict", T::choice},
                                  {"runs_to_decide", T::whole}, {"runs_to_decide_80", T::whole}, {"holds", T::choice},
                                  {"each_run", T::text}}));
  for (const std::string& key : order) {
    const Line& l = lines.at(key);
    std::vector<double> logs;
    std::string each;
    std::set<std::string> words;
    for (const Estimate& e : l.est) {
      logs.push_back(std::log(e.ratio));
      const Verdict v = verdict_of(e, o.margin, o.level);
      words.insert(v.word);
      each += (each.empty() ? "" : "; ") + fixed(e.ratio, 3) + " (" + v.word + ")";
    }
    const double r = double(logs.size());
    const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / r;
    double ss = 0;
    for (double v : logs) ss += (v - mean) * (v - mean);
    Estimate combined;
    combined.ratio = std::exp(mean);
    combined.n = logs.size();
    combined.paired = l.est.front().paired;
    std::string ci, prediction;
    Value pred_lo, pred_hi, mean_lo, mean_hi, runs_needed, runs_powered;
    if (logs.size() >= 2) {
      const double sd = std::sqrt(ss / (r - 1));
      const double t_crit = boost::math::quantile(boost::math::students_t(r - 1), 1 - (1 - o.level) / 2);
      combined.ci = {std::exp(mean - t_crit * sd / std::sqrt(r)), std::exp(mean + t_crit * sd / std::sqrt(r)),
                     o.level};
      ci = fixed(combined.ci.lo, 3) + " to " + fixed(combined.ci.hi, 3);
      mean_lo = combined.ci.lo, mean_hi = combined.ci.hi;
      // Where one more run's speed-up would fall: Student's t with the spread of a run plus that of the mean.
      const double reach = t_crit * sd * std::sqrt(1 + 1 / r);
      pred_lo = std::exp(mean - reach), pred_hi = std::exp(mean + reach);
      prediction = fixed(std::exp(mean - reach), 3) + " to " + fixed(std::exp(mean + reach), 3);
    }
    const auto [lo, hi] = std::minmax_element(logs.begin(), logs.end());
    Verdict verdict = logs.size() < 2 ? Verdict{"one run", "one run: no across-run estimate"}
                                      : verdict_of(combined, o.margin, o.level);
    if (logs.size() >= 2 && verdict.word == "inconclusive") {  // the runs that would decide
      const double sd = std::sqrt(ss / (r - 1)), m = std::log1p(o.margin);
      const std::size_t most = 1000;
      const std::size_t runs = runs_to_decide(mean, sd, logs.size(), m, o.level, 0, most);
      const std::size_t powered = runs_to_decide(mean, sd, logs.size(), m, o.level, 0.8, most);
      if (runs <= most) runs_needed = runs;
      if (powered <= most) runs_powered = powered;
      verdict.text = runs > most ? "inconclusive: more than " + std::to_string(most) + " runs"
                                 : "inconclusive: about " + std::to_string(runs) + " runs (" +
                                       (powered > most ? "over " + std::to_string(most) : std::to_string(powered)) +
                                       " for 80% power)";
    }
    const bool holds = logs.size() >= 2 && words.size() == 1 && *words.begin() != "inconclusive";
    t.rows.push_back({l.first->shape(), scope_name(l.first->scope), l.first->configuration(), std::to_string(logs.size()), each,
                      fixed(combined.ratio, 3), ci, fixed(std::exp(*lo), 3) + " to " + fixed(std::exp(*hi), 3),
                      verdict.text, holds ? "yes: " + *words.begin() : "no", prediction, clock_of(*l.first, o)});
    if (l2_column) t.rows.back().push_back(l2_flush_name(l.first->l2_flush));
    std::vector<Value> rec = which_of(*l.first, o);
    rec.back() = Value();  // several runs: no one run
    for (const Value& x : {Value(logs.size()), Value(combined.ratio), mean_lo, mean_hi, pred_lo, pred_hi,
                           Value(std::exp(*lo)), Value(std::exp(*hi)), Value(verdict.word), runs_needed, runs_powered,
                           Value::flag(holds), Value(each)})
      rec.push_back(x);
    t.records.push_back(std::move(rec));
  }
  t.note =
      std::string("Each run's speed-up and verdict as `compare` gives them (") +
      (lines.empty() || !lines.begin()->second.est.front().paired ? "independent samples" : "paired trials") +
      "); across runs: the geometric mean of the runs' speed-ups; the confidence interval of that mean "
      "(Student's t over the runs' log speed-ups: where the true mean lies), which the verdict reads against "
      "+-" + fixed(100 * o.margin, 0) +
      "%; and the prediction interval for one more run (the same t, the spread of one run added: where "
      "another run's speed-up would fall). Where the verdict is inconclusive, the runs at which such an "
      "interval would decide (Student's t at that many runs), and those that would decide with 80% chance. "
      "A claim holds across runs when every run gives the same decided verdict.";
  return t;
}

}  // namespace mmlab::analysis
