#include "analysis/commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "analysis/paper_tables.hpp"
#include "analysis/statistics.hpp"
#include "core/stats.hpp"

namespace mmlab::analysis {

namespace {

bool numeric(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return *end == '\0';
}

// Numbers numerically, text alphabetically, numbers before text.
bool less_value(const std::string& a, const std::string& b) {
  double x, y;
  const bool nx = numeric(a, x), ny = numeric(b, y);
  if (nx && ny) return x < y;
  if (nx != ny) return nx;
  return a < b;
}

}  // namespace

Table summary(const std::vector<Result>& rows, const std::vector<std::string>& by,
              const std::vector<std::string>& sort, bool all) {
  if (by.empty()) throw AnalysisError("summary: --by needs at least one column");
  std::map<std::vector<std::string>, std::vector<const Result*>> groups;
  std::vector<std::vector<std::string>> order;
  for (const Result& r : rows) {
    if (!all && !r.ok()) continue;
    std::vector<std::string> key;
    for (const std::string& c : by) key.push_back(r.get(c));
    if (!all)
      key.push_back("");
    else
      key.push_back(r.status);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(&r);
  }
  for (const std::string& c : sort) {
    if (!rows.empty()) rows.front().get(c);  // unknown column: a clear error
  }
  Table t;
  t.title = "summary";
  t.header = by;
  for (const char* c : {"rows", "trials", "min_ms", "max_ms", "mean_ms", "std_ms", "median_ms", "ci_lo_ms",
                        "ci_hi_ms", "gflops"})
    t.header.push_back(c);
  if (all) t.header.push_back("status");
  struct Line {
    std::vector<std::string> cells;
    std::map<std::string, std::string> sort_values;
  };
  std::vector<Line> lines;
  for (const auto& key : order) {
    const auto& members = groups.at(key);
    const Result& first = *members.front();
    Line line;
    line.cells.assign(key.begin(), key.end() - 1);
    line.cells.push_back(std::to_string(members.size()));
    if (!first.ok()) {
      line.cells.insert(line.cells.end(), 9, "");
      line.cells.push_back(first.status);
    } else {
      mmlab::Stats s;
      double flop = first.gflops * first.median_ms * 1e6;  // the algorithm's own flop count
      if (members.size() == 1) {
        s.trials = first.trials;
        s.min = first.min_ms, s.max = first.max_ms, s.mean = first.mean_ms, s.std = first.std_ms;
        s.median = first.median_ms, s.ci_lo = first.ci_lo_ms, s.ci_hi = first.ci_hi_ms;
      } else {
        std::vector<double> pooled;
        for (const Result* r : members) {
          if (r->samples.empty())
            throw AnalysisError("summary: pooling " + std::to_string(members.size()) +
                                " rows of one group needs "
                                "their samples (" +
                                r->file + ":" + std::to_string(r->line) + " has none)");
          if (r->m != first.m || r->n != first.n || r->k != first.k)
            throw AnalysisError("summary: a group mixes problem sizes; add m, n, k to --by");
          pooled.insert(pooled.end(), r->samples.begin(), r->samples.end());
        }
        s = mmlab::summarize(pooled);
      }
      line.cells.push_back(std::to_string(s.trials));
      for (double v : {s.min, s.max, s.mean, s.std, s.median, s.ci_lo, s.ci_hi}) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", v);
        line.cells.push_back(buf);
      }
      line.cells.push_back(fixed(flop / (s.median * 1e6), 1));
      if (all) line.cells.push_back("ok");
    }
    for (const std::string& c : sort) line.sort_values[c] = first.get(c);
    lines.push_back(std::move(line));
  }
  if (!sort.empty())
    std::stable_sort(lines.begin(), lines.end(), [&](const Line& a, const Line& b) {
      for (const std::string& c : sort) {
        const std::string &x = a.sort_values.at(c), &y = b.sort_values.at(c);
        if (less_value(x, y)) return true;
        if (less_value(y, x)) return false;
      }
      return false;
    });
  for (Line& l : lines) t.rows.push_back(std::move(l.cells));
  return t;
}

namespace {

// A comparison's estimate: the speed-up (baseline time / time) with its interval, the test's p,
// and what the design allows.
struct Estimate {
  double ratio = 0;
  Interval ci;          // of the ratio; coverage 0: the trials allow none at this level
  bool paired = false;  // interleaved trials paired by round; else independent samples
  std::size_t n = 0;    // pairs, or the smaller sample
  double p = 1;         // two-sided: Wilcoxon signed-rank (paired) or Mann-Whitney U
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
    e.ratio = std::exp(median(d));
    e.ci = exp_interval(paired_interval(d, o.level));
    if (e.ci.coverage <= 0)  // too few pairs for the level: the widest interval, at what it covers
      e.ci = exp_interval(paired_interval(d, 1 - 2 * std::ldexp(1.0, -int(e.n)) * (1 + 1e-9)));
    e.p = wilcoxon_signed_rank(d).p;
    return e;
  }
  e.n = std::min(b.size(), a.size());
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

constexpr std::size_t kManyTrials = 100000;

// The verdict the interval gives against the margin, or "inconclusive" with the trials per
// configuration that would decide it (statistics.hpp, trials_to_decide).
std::string verdict_of(const Estimate& e, double margin, double level) {
  const double m = std::log1p(margin);
  const std::string band = fixed(100 * margin, 0) + "%";
  if (e.ci.coverage < level - 1e-9)
    return "inconclusive: at least " + std::to_string(trials_for_an_interval(e.paired)) + " trials";
  const double lo = std::log(e.ci.lo), hi = std::log(e.ci.hi);
  if (lo > m) return "faster";
  if (hi < -m) return "slower";
  if (lo >= -m && hi <= m) return "equivalent (within " + band + ")";
  Interval log_ci{lo, hi, e.ci.coverage};
  log_ci.centre = std::log(e.ci.centre);  // NaN stays NaN: the midpoint is taken
  const double n = trials_to_decide(log_ci, e.n, m);
  if (n >= double(kManyTrials)) return "inconclusive: more than " + std::to_string(kManyTrials) + " trials";
  return "inconclusive: about " + std::to_string(std::size_t(std::ceil(std::max(n, double(e.n) + 1)))) +
         " trials";
}

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

// The baseline spec ALG[:variant[:params]] as a row test (FP32 rows only: a TF32 row is compared,
// never the yardstick).
std::function<bool(const Result&)> baseline_test(const std::string& spec_text) {
  std::vector<std::string> spec;
  std::stringstream ss(spec_text);
  for (std::string part; std::getline(ss, part, ':');) spec.push_back(part);
  if (spec.empty() || spec.size() > 3 || spec[0].empty())
    throw AnalysisError(
        "compare: --baseline must be ALG[:variant[:params]], e.g. cublas or tiled:default:tile=32");
  return [spec](const Result& r) {
    return r.fp32() && r.algorithm == spec[0] && (spec.size() < 2 || r.variant == spec[1]) &&
           (spec.size() < 3 || r.params == spec[2]);
  };
}

std::string run_of(const Result& r) { return r.fields.at("run"); }

struct Pair {
  const Result* base;
  const Result* other;
};

// Every ok configuration against the baseline's row at the same problem, scope and L2 setting (and
// run, with `per_run`).
std::vector<Pair> pair_with_baseline(const std::vector<Result>& rows, const CompareOptions& o, bool per_run) {
  const auto is_baseline = baseline_test(o.baseline);
  const std::string name = o.baseline.substr(0, o.baseline.find(':'));
  std::set<std::string> algorithms;
  std::size_t baseline_ok = 0, baseline_rows = 0;
  std::map<std::string, std::size_t> why;  // skipped/failed reasons of the baseline
  for (const Result& r : rows) {
    algorithms.insert(r.algorithm);
    if (r.algorithm != name) continue;
    ++baseline_rows;
    if (r.ok())
      ++baseline_ok;
    else
      why[r.status + ": " + r.fields.at("reason")]++;
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
                        " rows, " + reasons + ")");
  }
  std::vector<Pair> pairs;
  std::map<std::string, const Result*> base_of;  // shape|scope|l2[|run] -> baseline row
  const bool any_scope = !o.baseline_scope.empty();
  auto group = [&](const Result& r) {
    return r.shape() + (any_scope ? "" : "|" + r.scope + "|" + r.fields.at("l2_flush")) +
           (per_run ? "|" + run_of(r) : "");
  };
  for (const Result& r : rows) {
    if (!r.ok() || !is_baseline(r) || (any_scope && r.scope != o.baseline_scope)) continue;
    if (!o.sizes.empty() && std::find(o.sizes.begin(), o.sizes.end(), r.shape()) == o.sizes.end() &&
        std::find(o.sizes.begin(), o.sizes.end(), r.dims()) == o.sizes.end())
      continue;
    auto [it, fresh] = base_of.emplace(group(r), &r);
    if (!fresh && it->second->configuration() != r.configuration())
      throw AnalysisError("compare: baseline '" + o.baseline + "' matches several configurations at " +
                          r.shape() + " (" + it->second->configuration() + "; " + r.configuration() +
                          "): name one, as ALG:variant:params");
    if (!fresh)
      throw AnalysisError("compare: the baseline appears twice at " + r.shape() + " " + r.scope + " (" +
                          r.file + ":" + std::to_string(r.line) +
                          "); pick one run with --run latest or --run RUN");
  }
  for (const Result& r : rows) {
    if (!r.ok() || (is_baseline(r) && (!any_scope || r.scope == o.baseline_scope))) continue;
    auto it = base_of.find(group(r));
    if (it != base_of.end()) pairs.push_back({it->second, &r});
  }
  if (pairs.empty())
    throw AnalysisError(
        "compare: no configuration shares a problem size and scope with the baseline's ok rows");
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
  return q.other->shape() + "|" + q.other->scope + "|" + q.other->fields.at("l2_flush") + "|" +
         run_of(*q.other);
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
      if (seen.insert(r).second && (r->timer == "events" || r->timer == "graph")) ++host_inside;
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

}  // namespace

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
  t.title = "compare against " + o.baseline + " (" + measure_of(o) + ")";
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
              "p (Holm)"};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair& q = pairs[i];
    const Estimate& e = est[i];
    char mo[32], mb[32];
    std::snprintf(mo, sizeof mo, "%.4g", median(times_of(*q.other, o)));
    std::snprintf(mb, sizeof mb, "%.4g", median(times_of(*q.base, o)));
    std::string ci = e.ci.coverage > 0 ? fixed(e.ci.lo, 3) + " to " + fixed(e.ci.hi, 3) : "";
    if (e.ci.coverage > 0 && e.ci.coverage < o.level - 1e-9)  // the widest the trials allow
      ci += " (" + fixed(100 * e.ci.coverage, 0) + "%)";
    t.rows.push_back({q.other->shape(), q.other->scope, q.other->configuration(), mo, mb, fixed(e.ratio, 3),
                      ci, verdict_of(e, o.margin, o.level),
                      (e.paired ? "paired, " : "independent, ") + std::to_string(e.n), p_text(e.p),
                      p_text(adjusted[i])});
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
    const std::string key = q.other->shape() + "|" + q.other->scope + "|" + q.other->fields.at("l2_flush") +
                            "|" + q.other->configuration();
    auto [it, fresh] = lines.try_emplace(key, Line{q.other, {}, {}});
    if (fresh) order.push_back(key);
    if (std::find(it->second.runs.begin(), it->second.runs.end(), run_of(*q.other)) != it->second.runs.end())
      throw AnalysisError("compare --across-runs: " + q.other->configuration() + " appears twice in run " +
                          run_of(*q.other));
    it->second.runs.push_back(run_of(*q.other));
    it->second.est.push_back(estimate(*q.base, *q.other, o));
  }
  Table t;
  t.title = "compare against " + o.baseline + " across runs (" + measure_of(o) + ")";
  t.header = {"size",
              "scope",
              "configuration",
              "runs",
              "each run's speed-up (its verdict)",
              "across runs",
              "CI " + fixed(o.level * 100, 0) + "% (between runs)",
              "run-to-run spread",
              "verdict",
              "holds in every run"};
  for (const std::string& key : order) {
    const Line& l = lines.at(key);
    std::vector<double> logs;
    std::string each;
    std::set<std::string> words;
    for (const Estimate& e : l.est) {
      logs.push_back(std::log(e.ratio));
      const std::string v = verdict_of(e, o.margin, o.level);
      words.insert(v.substr(0, v.find_first_of(" :(")));
      std::string word = v.substr(0, v.find_first_of(":("));
      while (!word.empty() && word.back() == ' ') word.pop_back();
      each += (each.empty() ? "" : "; ") + fixed(e.ratio, 3) + " (" + word + ")";
    }
    const double r = double(logs.size());
    const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / r;
    double ss = 0;
    for (double v : logs) ss += (v - mean) * (v - mean);
    Estimate combined;
    combined.ratio = std::exp(mean);
    combined.n = logs.size();
    combined.paired = l.est.front().paired;
    std::string ci;
    if (logs.size() >= 2) {
      const double sd = std::sqrt(ss / (r - 1));
      const double t_crit = boost::math::quantile(boost::math::students_t(r - 1), 1 - (1 - o.level) / 2);
      combined.ci = {std::exp(mean - t_crit * sd / std::sqrt(r)), std::exp(mean + t_crit * sd / std::sqrt(r)),
                     o.level};
      ci = fixed(combined.ci.lo, 3) + " to " + fixed(combined.ci.hi, 3);
    }
    const auto [lo, hi] = std::minmax_element(logs.begin(), logs.end());
    std::string verdict =
        logs.size() < 2 ? "one run: no across-run estimate" : verdict_of(combined, o.margin, o.level);
    if (logs.size() >= 2 && verdict.rfind("inconclusive", 0) == 0) {  // the runs that would decide
      const double sd = std::sqrt(ss / (r - 1)), m = std::log1p(o.margin);
      const std::size_t most = 1000;
      const std::size_t runs = runs_to_decide(mean, sd, logs.size(), m, o.level, 0, most);
      const std::size_t powered = runs_to_decide(mean, sd, logs.size(), m, o.level, 0.8, most);
      verdict = runs > most ? "inconclusive: more than " + std::to_string(most) + " runs"
                            : "inconclusive: about " + std::to_string(runs) + " runs (" +
                                  (powered > most ? "over " + std::to_string(most) : std::to_string(powered)) +
                                  " for 80% power)";
    }
    const bool holds = logs.size() >= 2 && words.size() == 1 && *words.begin() != "inconclusive";
    t.rows.push_back({l.first->shape(), l.first->scope, l.first->configuration(), std::to_string(logs.size()),
                      each, fixed(combined.ratio, 3), ci,
                      fixed(std::exp(*lo), 3) + " to " + fixed(std::exp(*hi), 3), verdict,
                      holds ? "yes: " + *words.begin() : "no"});
  }
  t.note =
      std::string("Each run's speed-up and verdict as `compare` gives them (") +
      (lines.empty() || !lines.begin()->second.est.front().paired ? "independent samples" : "paired trials") +
      "); across runs: the geometric mean of the runs' speed-ups, its interval from Student's t over the "
      "runs' log speed-ups (what another run would vary by), read against +-" +
      fixed(100 * o.margin, 0) +
      "%; where it is inconclusive, the runs at which such an interval would decide (Student's t at that many "
      "runs), and those that would decide with 80% chance. A claim holds across runs when every run gives the "
      "same decided verdict.";
  return t;
}

Table headline(const std::vector<Result>& all_rows, const std::string& shape, const std::string& baseline) {
  const std::vector<Result> rows = select_run(all_rows, "latest");
  std::map<std::string, const Result*> base;  // l2_flush -> the baseline's row
  std::map<std::string, const Result*> best;  // algorithm|l2_flush -> its best row
  std::vector<std::string> order;
  // The FP32 contest: rows judged by the TF32 tolerance are left out.
  auto eligible = [&](const Result& r) {
    return r.ok() && r.fp32() && r.shape() == shape && r.scope == "kernel";
  };
  for (const Result& r : rows)
    if (eligible(r) && r.algorithm == baseline) {
      auto [it, fresh] = base.emplace(r.fields.at("l2_flush"), &r);
      if (!fresh && r.gflops > it->second->gflops) it->second = &r;
    }
  if (base.empty())
    throw AnalysisError("headline: no " + baseline + " row at " + shape + " in the given files");
  for (const Result& r : rows) {
    if (!eligible(r) || !base.count(r.fields.at("l2_flush"))) continue;
    auto [it, fresh] = best.try_emplace(r.algorithm + "|" + r.fields.at("l2_flush"), &r);
    if (fresh)
      order.push_back(it->first);
    else if (r.gflops > it->second->gflops)
      it->second = &r;
  }
  Table t;
  t.title = "best configuration of each algorithm at " + shape + " vs " + baseline + " in the same run";
  t.header = {"algorithm", "configuration", "median ms (95% CI)", "TFLOP/s", "x " + baseline};
  if (base.size() > 1) t.header.insert(t.header.begin() + 2, "L2 flush");
  for (const std::string& key : order) {
    const Result& r = *best.at(key);
    const std::string l2 = r.fields.at("l2_flush");
    char ms[96];
    std::snprintf(ms, sizeof ms, "%.4g (%.4g to %.4g)", r.median_ms, r.ci_lo_ms, r.ci_hi_ms);
    std::vector<std::string> row = {r.algorithm, r.configuration(), ms, fixed(r.gflops / 1000, 2),
                                    fixed(r.gflops / base.at(l2)->gflops, 3)};
    if (base.size() > 1) row.insert(row.begin() + 2, l2);
    t.rows.push_back(row);
  }
  return t;
}

// A measured figure to 4 significant digits ("" stays "").
static std::string three(const std::string& text) {
  double v;
  if (!numeric(text, v)) return text;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

Table scaling(const std::vector<Result>& all_rows, const std::string& baseline, int resamples) {
  const std::vector<Result> rows = select_run(all_rows, "latest");
  // The baseline's rows of every job (a re-run must not hide the one measured beside a row).
  std::map<std::string, const Result*> same_job, latest;  // run|shape and shape -> the baseline's row
  for (const Result& r : all_rows)
    if (r.ok() && r.fp32() && r.algorithm == baseline && r.scope == "kernel") {
      same_job[r.fields.at("run") + "|" + r.shape()] = &r;
      latest[r.shape()] = &r;
    }
  // The baseline ran on one GPU, or (the CPU backend's eigen) in one process on the host.
  const bool on_host = !latest.empty() && latest.begin()->second->get("gpus") == "0";
  const std::string one = on_host ? "one process of " + baseline + " (the host CPU)" : "one-GPU " + baseline;
  Table t;
  t.title = "strong scaling against " + one;
  t.header = {"size",    "algorithm",  "configuration", "engine",
              "GPUs or ranks", "median ms",  "TFLOP/s",       "speed-up",
              "CI 95%",  "efficiency", "compute ms",    "comm ms",
              "wait ms", "overlap",    "predicted ms",  "measured / predicted"};
  for (const Result& r : rows) {
    if (!r.ok() || r.get("grid").empty()) continue;
    auto it = same_job.find(r.fields.at("run") + "|" + r.shape());
    const Result* base = it != same_job.end()      ? it->second
                         : latest.count(r.shape()) ? latest.at(r.shape())
                                                   : nullptr;
    if (!base) continue;
    const int gpus = std::stoi(r.get("gpus")), ranks = std::stoi(r.get("ranks"));
    const double speedup = base->median_ms / r.median_ms;
    std::string ci;
    if (base->samples.size() >= 2 && r.samples.size() >= 2) {
      const Interval i = bootstrap_median_ratio(base->samples, r.samples, 0.95, resamples, 1);
      ci = fixed(i.lo, 3) + " to " + fixed(i.hi, 3);
    }
    double predicted = 0;
    numeric(r.get("predicted_ms"), predicted);
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.4g", r.median_ms);
    const std::string workers = gpus ? std::to_string(gpus) + " GPUs" : std::to_string(ranks) + " CPU ranks";
    t.rows.push_back({r.shape(), r.algorithm, r.params, r.get("engine"), workers, ms,
                      fixed(r.gflops / 1000, 2), fixed(speedup, 3), ci,
                      fixed(speedup / std::max(1, gpus ? gpus : ranks), 3), three(r.get("compute_ms")),
                      three(r.get("comm_ms")), three(r.get("wait_ms")), three(r.get("overlap")),
                      predicted > 0 ? fixed(predicted, 3) : "",
                      predicted > 0 ? fixed(r.median_ms / predicted, 3) : ""});
  }
  if (t.rows.empty()) {
    // What the distributed rows could be set against instead: the single-process algorithms that ran at
    // their shapes (the CPU backend's runs carry eigen).
    std::set<std::string> shapes, others;
    for (const Result& r : rows)
      if (r.ok() && !r.get("grid").empty()) shapes.insert(r.shape());
    for (const Result& r : rows)
      if (r.ok() && r.get("grid").empty() && r.scope == "kernel" && shapes.count(r.shape())) others.insert(r.algorithm);
    std::string hint;
    for (const std::string& a : others) hint += (hint.empty() ? "" : " or ") + ("--baseline " + a);
    throw AnalysisError("scaling: no distributed row with a " + baseline + " row at its shape in the given files" +
                        (shapes.empty() ? " (no distributed rows at all)"
                         : hint.empty() ? ""
                                        : "; at their shapes the files have " + hint));
  }
  t.note = "speed-up = " + one +
           " median / median (bootstrap 95% CI of the ratio); efficiency = "
           "speed-up / GPUs (ranks on the CPU backend); the phase times are medians over the trials of each "
           "phase's "
           "maximum over ranks; overlap = the share of communication hidden behind the products.";
  return t;
}

Table frontier(const std::vector<Result>& all_rows, const std::vector<std::string>& sizes,
               const std::string& baseline) {
  const std::vector<Result> rows = select_run(all_rows, "latest");
  auto wanted = [&](const Result& r) {
    return sizes.empty() || std::find(sizes.begin(), sizes.end(), r.shape()) != sizes.end() ||
           std::find(sizes.begin(), sizes.end(), r.dims()) != sizes.end();
  };
  std::vector<std::string> order;                                    // problems, first seen first
  std::map<std::string, std::map<std::string, const Result*>> best;  // problem -> name -> fastest
  std::map<std::string, const Result*> base;                         // problem -> the baseline's row
  for (const Result& r : rows) {
    if (!r.ok() || r.scope != "kernel" || r.fields.at("max_sumabs_err").empty() || !wanted(r)) continue;
    const std::string problem = r.shape();
    if (!best.count(problem)) order.push_back(problem);
    const std::string name = r.variant == "default" ? r.algorithm : r.algorithm + " " + r.variant;
    const Result*& b = best[problem][name];
    if (!b || r.gflops > b->gflops) b = &r;
    if (r.algorithm == baseline && r.fp32()) {
      const Result*& x = base[problem];
      if (!x || (r.variant == "default" && x->variant != "default") ||
          (r.variant == x->variant && r.gflops > x->gflops))
        x = &r;
    }
  }
  if (order.empty()) throw AnalysisError("frontier: no ok row with a recorded max_sumabs_err");
  Table t;
  t.title = "accuracy and speed: each algorithm and variant's fastest configuration per problem";
  t.header = {"size",          "inputs",         "algorithm",           "configuration", "TFLOP/s",
              "x " + baseline, "max_sumabs_err", "error x " + baseline, "max_rel_err",   "precision"};
  for (const std::string& problem : order) {
    std::vector<const Result*> list;
    for (const auto& [name, r] : best.at(problem)) list.push_back(r);
    std::sort(list.begin(), list.end(),
              [](const Result* a, const Result* b) { return a->gflops > b->gflops; });
    const auto b = base.find(problem);
    for (const Result* r : list) {
      const double err = std::stod(r->fields.at("max_sumabs_err"));
      std::string speed = "-", error = "-";
      if (b != base.end()) {
        speed = fixed(b->second->median_ms / r->median_ms, 2);
        const double base_err = std::stod(b->second->fields.at("max_sumabs_err"));
        if (base_err > 0) error = fixed(err / base_err, 2);
      }
      t.rows.push_back(
          {r->dims(), r->inputs, r->variant == "default" ? r->algorithm : r->algorithm + " " + r->variant,
           r->params.empty() ? "-" : r->params, fixed(r->gflops / 1000, 1), speed, scientific(err, 2), error,
           scientific(std::stod(r->fields.at("max_rel_err")), 2), r->precision});
    }
  }
  t.note = "x " + baseline + ": its FP32 row's median / this median, same problem, same file; error x " +
           baseline +
           ": this max_sumabs_err / its (the worst element's error relative to sum |a b|). precision: the "
           "tolerance a row is verified against (tf32: operands rounded to TF32 on purpose).";
  return t;
}

namespace {

// Per algorithm and variant at one size of a frontier table, over the kinds of inputs: the range of
// its speed and error ratios, its TFLOP/s range, its precision.
struct Span {
  double speed_lo = 1e300, speed_hi = 0, error_lo = 1e300, error_hi = 0, tflops_lo = 1e300, tflops_hi = 0;
  std::string precision;
};
std::map<std::string, Span> spans(const Table& t, const std::string& size, std::set<std::string>* inputs) {
  std::map<std::string, Span> out;
  for (const auto& r : t.rows) {
    if (r[0] != size || r[5] == "-" || r[7] == "-") continue;
    if (inputs) inputs->insert(r[1]);
    Span& w = out[r[2]];
    const double speed = std::stod(r[5]), error = std::stod(r[7]), tflops = std::stod(r[4]);
    w.speed_lo = std::min(w.speed_lo, speed), w.speed_hi = std::max(w.speed_hi, speed);
    w.error_lo = std::min(w.error_lo, error), w.error_hi = std::max(w.error_hi, error);
    w.tflops_lo = std::min(w.tflops_lo, tflops), w.tflops_hi = std::max(w.tflops_hi, tflops);
    w.precision = r[9];
  }
  return out;
}

std::string range(double lo, double hi, int decimals) {
  return fixed(lo, decimals) == fixed(hi, decimals) ? fixed(lo, decimals)
                                                    : fixed(lo, decimals) + " to " + fixed(hi, decimals);
}

}  // namespace

std::string frontier_advice(const Table& t, const std::string& size, const std::string& baseline) {
  std::set<std::string> inputs;
  const std::map<std::string, Span> worst = spans(t, size, &inputs);
  if (worst.empty()) return "";
  std::string accurate, fastest;
  for (const auto& [name, w] : worst) {
    if (name == baseline) continue;
    if (w.error_hi <= 2.0 && (accurate.empty() || w.speed_lo > worst.at(accurate).speed_lo)) accurate = name;
    if (fastest.empty() || w.speed_lo > worst.at(fastest).speed_lo) fastest = name;
  }
  std::ostringstream os;
  os << "At " << size << " (" << inputs.size() << " kinds of inputs): ";
  if (!accurate.empty())
    os << "for FP32 accuracy (max_sumabs_err within 2x " << baseline << "'s on every kind), `" << accurate
       << "`, at least " << fixed(worst.at(accurate).speed_lo, 2) << "x " << baseline
       << " (its error at most " << fixed(worst.at(accurate).error_hi, 2) << "x " << baseline << "'s)";
  else
    os << "nothing beats " << baseline << " at its accuracy";
  if (!fastest.empty() && fastest != accurate)
    os << "; where " << fixed(worst.at(fastest).error_hi, 0) << "x the error will do, `" << fastest
       << "`, at least " << fixed(worst.at(fastest).speed_lo, 2) << "x";
  os << ".";
  return os.str();
}

Table frontier_summary(const Table& t, const std::string& size, const std::string& baseline) {
  std::set<std::string> inputs;
  const std::map<std::string, Span> all = spans(t, size, &inputs);
  std::vector<std::pair<std::string, Span>> rows(all.begin(), all.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.speed_lo > b.second.speed_lo; });
  Table out;
  out.header = {"algorithm", "TFLOP/s", "x " + baseline, "error x " + baseline, "precision"};
  for (const auto& [name, w] : rows)
    out.rows.push_back({name, range(w.tflops_lo, w.tflops_hi, 1), range(w.speed_lo, w.speed_hi, 2),
                        range(w.error_lo, w.error_hi, 2), w.precision});
  out.note = "At " + size + ", each algorithm and variant's fastest configuration on each of the " +
             std::to_string(inputs.size()) + " kinds of inputs: the range over them. error x " + baseline +
             ": max_sumabs_err (the worst element's error relative to sum |a b|) / " + baseline + "'s.";
  return out;
}

}  // namespace mmlab::analysis
