// mmlab-analyze model: the decompositions' model checked against the rows that measured it, and
// evaluated over sizes, GPU counts and a machine of NVLink domains (see model.hpp).
#include "analysis/model.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "analysis/plot.hpp"
#include "core/decompositions.hpp"
#include "core/params.hpp"

namespace mmlab::analysis {

namespace {

// key=value from a row's `resolved` (else `params`) text: "grid=2x2;engine=cublas;panel=4096".
std::string param(const Result& r, const std::string& key) {
  const std::string& text = !r.get(Col::resolved).empty() ? r.get(Col::resolved) : r.params;
  const Params q = Params::parse("", text);
  return q.has(key) ? q.text(key) : std::string();
}

// What the row's model takes beyond its decomposition and grid: its variant, slabs and panel width
// ("direct, slabs 4"; "panel 1024"; "default").
std::string form(const Result& r) {
  std::string out = r.variant.empty() || r.variant == "default" ? "" : r.variant;
  auto add = [&](const char* what, const std::string& v) {
    if (!v.empty()) out += (out.empty() ? "" : ", ") + std::string(what) + " " + v;
  };
  const std::string slabs = param(r, "slabs");
  add("slabs", slabs == "1" ? "" : slabs);
  add("panel", param(r, "panel"));
  return out.empty() ? "default" : out;
}

// The slowest rank's predicted time: every rank up to 64 of them, else 64 spread evenly (rank 0,
// which holds the largest blocks, among them). `layout`: with the moves from and to the starting
// layout (schema 8's runs; before, each method started from its own layout and they were not made).
double predict(const Decomposed& d, double gflops, double gbs, double far_gbs, int domain, double step_ms,
               double latency_ms = 0, bool layout = true) {
  const int ranks = d.grid.volume(), sample = std::min(ranks, 64);
  double worst = 0;
  for (int s = 0; s < sample; ++s) {
    const int r = int((long(s) * ranks) / sample);
    Model m = d.model(r, domain);
    if (!layout) m.layout_in_bytes = m.layout_out_bytes = 0;
    worst = std::max(worst, m.predict_ms(gflops, gbs, far_gbs, latency_ms) + step_ms * double(m.steps.size()));
  }
  return worst;
}

// Every grid of `ranks` that carries the decomposition (Cannon: q x q x c; SUMMA: pr x pc; DNS:
// px x py x pz).
std::vector<Grid> grids(Decomposition kind, int ranks) {
  std::vector<Grid> out;
  for (int a = 1; a <= ranks; ++a) {
    if (ranks % a) continue;
    for (int b = 1; b <= ranks / a; ++b) {
      if ((ranks / a) % b) continue;
      const Grid g{a, b, ranks / a / b};
      if (grid_problem(kind, g).empty()) out.push_back(g);
    }
  }
  return out;
}

}  // namespace

Table model_validation(const std::vector<Result>& rows, double tolerance) {
  Table t;
  t.title = "the model against every measured distributed row";
  t.header = {"algorithm", "grid", "engine", "transport", "size", "GPUs", "measured ms", "predicted ms",
              "recorded ms", "measured / predicted", "within " + fixed(100 * tolerance, 0) + "%"};
  int within = 0, total = 0;
  for (const Result& r : rows) {
    Decomposition kind;
    if (!r.ok() || !decomposition_of(r.algorithm, &kind)) continue;
    const double gflops = r.number(Col::local_gflops, 0), gbs = r.number(Col::link_gbs, 0);
    if (gflops <= 0 || r.median_ms <= 0) continue;
    const std::string panel = param(r, "panel");
    const std::string slabs = param(r, "slabs");
    const Decomposed d = with_variant({kind, {r.m, r.n, r.k}, parse_grid(r.get(Col::grid)),
                                       panel.empty() ? 4096 : std::stol(panel), slabs.empty() ? 1 : std::stol(slabs)},
                                      r.variant);
    const bool v8 = std::stol(r.get(Col::schema)) >= 8;  // its runs moved A, B and C from the starting layout
    const double predicted = predict(d, gflops, gbs > 0 ? gbs : std::numeric_limits<double>::infinity(), 0, 0, 0,
                                     r.number(Col::latency_ms, 0), v8);
    const double ratio = r.median_ms / predicted;
    const bool ok = std::abs(ratio - 1) <= tolerance;
    within += ok, ++total;
    const std::string transport = param(r, "transport");
    t.rows.push_back({r.algorithm, r.get(Col::grid), r.get(Col::engine), transport.empty() ? "nccl" : transport, r.dims(),
                      r.get(Col::gpus), fixed(r.median_ms, 3), fixed(predicted, 3), fixed(r.number(Col::predicted_ms, 0), 3),
                      fixed(ratio, 3), ok ? "yes" : "no"});
  }
  if (total == 0) throw AnalysisError("model: no ok distributed row with the model's inputs in the files");
  t.note = std::to_string(within) + " of " + std::to_string(total) + " rows within " + fixed(100 * tolerance, 0) +
           "% of the model. predicted: core/decompositions' model of the row's shape and grid, evaluated afresh "
           "with the local rate (local_gflops) and link bandwidth (link_gbs) measured in its job, the slowest "
           "rank's; recorded: what the row's run predicted (the same model when the row is of this revision).";
  return t;
}

namespace {

// A row the model can be fitted to or judged on: its models (the ranks predict() samples), its
// measured inputs and the keys of its calibration.
struct Observed {
  const Result* row;
  std::vector<Model> models;
  double gflops, gbs, latency_ms;
  std::string engine, link, transport;
};

std::vector<Observed> observed(const std::vector<Result>& rows) {
  std::vector<Observed> out;
  for (const Result& r : rows) {
    Decomposition kind;
    if (!r.ok() || !decomposition_of(r.algorithm, &kind)) continue;
    const double gflops = r.number(Col::local_gflops, 0), gbs = r.number(Col::link_gbs, 0);
    if (gflops <= 0 || r.median_ms <= 0) continue;
    const std::string panel = param(r, "panel"), transport = param(r, "transport").empty() ? "nccl" : param(r, "transport");
    const std::string slabs = param(r, "slabs");
    const Decomposed d = with_variant({kind, {r.m, r.n, r.k}, parse_grid(r.get(Col::grid)),
                                       panel.empty() ? 4096 : std::stol(panel), slabs.empty() ? 1 : std::stol(slabs)},
                                      r.variant);
    const bool v8 = std::stol(r.get(Col::schema)) >= 8;
    Observed o{&r, {}, gflops, gbs > 0 ? gbs : std::numeric_limits<double>::infinity(), r.number(Col::latency_ms, 0),
               engine_name(r.get(Col::engine)), r.algorithm + " " + r.get(Col::grid) + "/" + transport, transport};
    const int ranks = d.grid.volume(), sample = std::min(ranks, 64);
    for (int s = 0; s < sample; ++s) {
      Model m = d.model(int((long(s) * ranks) / sample), 0);
      if (!v8) m.layout_in_bytes = m.layout_out_bytes = 0;
      o.models.push_back(std::move(m));
    }
    out.push_back(std::move(o));
  }
  return out;
}

double value_or(const std::map<std::string, double>& m, const std::string& key, double fallback) {
  const auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

double predicted(const Observed& o, const Calibration& c) {
  const double gflops = o.gflops * value_or(c.compute, o.engine, 1), gbs = o.gbs * value_or(c.bandwidth, o.link, 1);
  double worst = 0;
  for (const Model& m : o.models) worst = std::max(worst, m.predict_ms(gflops, gbs, 0, o.latency_ms));
  return worst + value_or(c.fixed_ms, o.transport, 0);
}

double sum_squared_log(const std::vector<Observed>& obs, const Calibration& c) {
  double sum = 0;
  for (const Observed& o : obs) {
    const double e = std::log(o.row->median_ms / predicted(o, c));
    sum += e * e;
  }
  return sum;
}

}  // namespace

Calibration fit_model(const std::vector<Result>& rows) {
  const std::vector<Observed> obs = observed(rows);
  if (obs.empty()) throw AnalysisError("model --fit: no ok distributed row with the model's inputs to fit");
  Calibration c;
  for (const Observed& o : obs) c.compute[o.engine] = 1, c.bandwidth[o.link] = 1, c.fixed_ms[o.transport] = 0;
  // The knobs in log space (a factor f as log f, a fixed time t as log(t + 1 us)), searched by
  // Nelder and Mead's simplex, restarted from its best point until a restart gains nothing.
  std::vector<double*> factors, times;
  for (auto& [key, v] : c.compute) factors.push_back(&v);
  for (auto& [key, v] : c.bandwidth) factors.push_back(&v);
  for (auto& [key, v] : c.fixed_ms) times.push_back(&v);
  const std::size_t n = factors.size() + times.size();
  constexpr double kMicro = 1e-3;  // ms
  // A factor stays within 10x either way: a link that no row's time depends on (all of it hidden
  // behind the products) would otherwise run off to infinity.
  const double bound = std::log(10.0);
  auto set = [&](const std::vector<double>& x) {
    for (std::size_t i = 0; i < factors.size(); ++i) *factors[i] = std::exp(std::clamp(x[i], -bound, bound));
    for (std::size_t i = 0; i < times.size(); ++i) *times[i] = std::max(0.0, std::exp(x[factors.size() + i]) - kMicro);
  };
  auto f = [&](const std::vector<double>& x) {
    set(x);
    return sum_squared_log(obs, c);
  };
  std::vector<double> best(n, 0.0);
  for (std::size_t i = factors.size(); i < n; ++i) best[i] = std::log(kMicro);
  double best_f = f(best);
  for (int restart = 0; restart < 8; ++restart) {
    // A minute or more on large files: say where it is (stderr; the tables go to stdout).
    std::fprintf(stderr, "mmlab-analyze model --fit: pass %d of 8 over %zu rows, %zu factors\n", restart + 1,
                 obs.size(), n);
    std::vector<std::vector<double>> p(n + 1, best);
    for (std::size_t i = 0; i < n; ++i) p[i + 1][i] += i < factors.size() ? 0.5 : 3.0;
    std::vector<double> y(n + 1);
    for (std::size_t i = 0; i <= n; ++i) y[i] = f(p[i]);
    for (int iteration = 0; iteration < 400 * int(n); ++iteration) {
      std::vector<std::size_t> order(n + 1);
      for (std::size_t i = 0; i <= n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return y[a] < y[b]; });
      const std::size_t lo = order.front(), hi = order.back(), second = order[n - 1];
      if (y[hi] - y[lo] < 1e-10 * (1 + y[lo])) break;
      std::vector<double> mid(n, 0.0);
      for (std::size_t i = 0; i <= n; ++i)
        if (i != hi)
          for (std::size_t j = 0; j < n; ++j) mid[j] += p[i][j] / double(n);
      auto toward = [&](double t) {  // mid + t (mid - worst)
        std::vector<double> x(n);
        for (std::size_t j = 0; j < n; ++j) x[j] = mid[j] + t * (mid[j] - p[hi][j]);
        return x;
      };
      const std::vector<double> reflected = toward(1);
      const double fr = f(reflected);
      if (fr < y[lo]) {
        const std::vector<double> expanded = toward(2);
        const double fe = f(expanded);
        p[hi] = fe < fr ? expanded : reflected, y[hi] = std::min(fe, fr);
      } else if (fr < y[second]) {
        p[hi] = reflected, y[hi] = fr;
      } else {
        const std::vector<double> contracted = toward(fr < y[hi] ? 0.5 : -0.5);
        const double fc = f(contracted);
        if (fc < std::min(fr, y[hi])) {
          p[hi] = contracted, y[hi] = fc;
        } else {  // shrink toward the best
          for (std::size_t i = 0; i <= n; ++i) {
            if (i == lo) continue;
            for (std::size_t j = 0; j < n; ++j) p[i][j] = p[lo][j] + 0.5 * (p[i][j] - p[lo][j]);
            y[i] = f(p[i]);
          }
        }
      }
    }
    const std::size_t lo = std::size_t(std::min_element(y.begin(), y.end()) - y.begin());
    const bool gained = y[lo] < best_f * (1 - 1e-6);
    if (y[lo] < best_f) best = p[lo], best_f = y[lo];
    if (!gained) break;
  }
  set(best);
  c.rows = obs.size();
  c.rms_log = std::sqrt(best_f / double(obs.size()));
  return c;
}

Table model_judged(const std::vector<Result>& rows, const Calibration& c, double tolerance) {
  const std::vector<Observed> obs = observed(rows);
  if (obs.empty()) throw AnalysisError("model --fit: no ok distributed row with the model's inputs to judge it on");
  Table t;
  t.title = "the fitted model against rows it was not fitted on";
  t.header = {"algorithm", "grid", "form", "engine", "transport", "size", "measured ms", "fitted ms",
              "measured / fitted", "within " + fixed(100 * tolerance, 0) + "%"};
  int within = 0;
  double worst = 1;
  for (const Observed& o : obs) {
    const Result& r = *o.row;
    const double f = predicted(o, c), ratio = r.median_ms / f;
    const bool ok = std::abs(ratio - 1) <= tolerance;
    within += ok;
    if (std::abs(std::log(ratio)) > std::abs(std::log(worst))) worst = ratio;
    t.rows.push_back({r.algorithm, r.get(Col::grid), form(r), r.get(Col::engine), o.transport, r.dims(), fixed(r.median_ms, 3),
                      fixed(f, 3), fixed(ratio, 3), ok ? "yes" : "no"});
  }
  std::ostringstream fitted;
  auto list = [&](const char* what, const std::map<std::string, double>& m, int decimals) {
    fitted << what;
    bool first = true;
    for (const auto& [key, v] : m) fitted << (first ? " " : ", ") << key << " " << fixed(v, decimals), first = false;
    fitted << "; ";
  };
  list("local rate x", c.compute, 3);
  list("link bandwidth x", c.bandwidth, 3);
  list("ms per trial +", c.fixed_ms, 4);
  t.note = std::to_string(within) + " of " + std::to_string(obs.size()) + " rows within " + fixed(100 * tolerance, 0) +
           "% of the fitted model (the farthest: measured / fitted " + fixed(worst, 3) + "). Fitted on " +
           std::to_string(c.rows) + " other rows (root mean square log ratio " + fixed(c.rms_log, 3) +
           "): " + fitted.str() + "the model of core/decompositions with each row's own measured local rate, link "
           "bandwidth and latency, scaled by these.";
  return t;
}

std::vector<std::pair<std::string, double>> parse_engines(const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    const auto eq = item.find('=');
    double v = 0;
    try {
      v = eq == std::string::npos ? 0 : std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
    }
    if (eq == std::string::npos || eq == 0 || !(v > 0))
      throw AnalysisError("--engine-gflops: '" + item + "' is not NAME=GFLOPS (e.g. cublas=51400)");
    out.emplace_back(item.substr(0, eq), v);
  }
  if (out.empty()) throw AnalysisError("--engine-gflops: name at least one engine, NAME=GFLOPS");
  return out;
}

Table model_prediction(const std::vector<long>& sizes, const std::vector<int>& ranks, const Machine& m) {
  Table t;
  t.title = "predicted: each decomposition's fastest grid per engine, size and GPU count";
  t.header = {"engine", "N", "GPUs", "dist_cannon", "dist_summa", "dist_dns", "winner", "margin"};
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [engine, gflops] : m.engines)
    for (long n : sizes) {
      std::fprintf(stderr, "mmlab-analyze model: predicting %s at N = %ld\n", engine.c_str(), n);
      for (int p : ranks) {
        std::vector<std::string> row = {engine, std::to_string(n), std::to_string(p)};
        std::vector<std::pair<double, std::string>> best;  // per decomposition: ms, grid
        for (Decomposition kind : {Decomposition::cannon, Decomposition::summa, Decomposition::dns}) {
          std::pair<double, std::string> b{inf, ""};
          for (const Grid& g : grids(kind, p)) {
            const Decomposed d{kind, {n, n, n}, g, 4096};
            if (double(d.bytes_per_rank()) > m.memory_bytes) continue;
            const double ms = predict(d, gflops, m.nvlink_gbs, m.fabric_gbs, m.domain, m.step_ms);
            if (ms < b.first) b = {ms, g.text()};
          }
          row.push_back(b.second.empty() ? "-" : fixed(b.first, 2) + " (" + b.second + ")");
          best.push_back(b);
        }
        std::vector<int> order = {0, 1, 2};
        std::sort(order.begin(), order.end(), [&](int a, int b) { return best[a].first < best[b].first; });
        const char* names[] = {"dist_cannon", "dist_summa", "dist_dns"};
        if (best[order[0]].first == inf) {
          row.insert(row.end(), {"none fits", ""});
        } else {
          row.push_back(names[order[0]]);
          row.push_back(best[order[1]].first == inf ? ""
                                                    : fixed(best[order[1]].first / best[order[0]].first, 3) + "x");
        }
        t.rows.push_back(row);
      }
    }
  std::ostringstream note;
  note << "ms of one N x N x N product (the slowest rank) by core/decompositions' model, each decomposition's "
          "fastest grid of that many GPUs that fits in "
       << fixed(m.memory_bytes / 1e9, 0) << " GB per GPU; SUMMA with 4096-wide panels. Machine: NVLink domains of "
       << m.domain << " GPUs at " << fixed(m.nvlink_gbs, 0) << " GB/s per GPU, " << fixed(m.fabric_gbs, 0)
       << " GB/s per GPU between domains (ranks numbered across domains in order; a transfer or a group that "
          "crosses a domain moves at the fabric's rate), "
       << fixed(m.step_ms, 3) << " ms per step; local rates per GPU:";
  for (const auto& [engine, gflops] : m.engines) note << " " << engine << " " << fixed(gflops / 1000, 1) << " TFLOP/s";
  note << ". margin: the runner-up's time / the winner's. The model assumes a product's rate does not fall with "
          "its size: at many GPUs the local blocks are small and real products slower.";
  t.note = note.str();
  return t;
}

void plot_winners(const Table& prediction, const std::string& out, const std::string& title) {
  std::vector<std::string> engines;
  std::vector<long> sizes;
  std::vector<int> ranks;
  for (const auto& r : prediction.rows) {
    if (std::find(engines.begin(), engines.end(), r[0]) == engines.end()) engines.push_back(r[0]);
    if (std::find(sizes.begin(), sizes.end(), std::stol(r[1])) == sizes.end()) sizes.push_back(std::stol(r[1]));
    if (std::find(ranks.begin(), ranks.end(), std::stoi(r[2])) == ranks.end()) ranks.push_back(std::stoi(r[2]));
  }
  if (engines.empty()) throw AnalysisError("model: nothing to plot");
  const std::map<std::string, int> code = {{"dist_cannon", 0}, {"dist_summa", 1}, {"dist_dns", 2}};
  std::ostringstream data, script;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    for (const auto& r : prediction.rows) {
      if (r[0] != engines[e]) continue;
      const auto c = code.find(r[6]);
      const long x = std::find(ranks.begin(), ranks.end(), std::stoi(r[2])) - ranks.begin();
      const long y = std::find(sizes.begin(), sizes.end(), std::stol(r[1])) - sizes.begin();
      std::string grid = c == code.end() ? "-" : r[3 + c->second];
      const auto open = grid.find('(');
      grid = open == std::string::npos ? grid : grid.substr(open + 1, grid.size() - open - 2);
      data << x << " " << y << " " << (c == code.end() ? -1 : c->second) << " \"" << grid << "\"\n";
    }
    data << "\n\n";
  }
  script << "set multiplot layout " << engines.size() << ",1 title " << quote(title) << "\n"
         << "set palette defined (-1 '#dddddd', 0 '#1f77b4', 1 '#ff7f0e', 2 '#2ca02c')\nset cbrange [-1:2]\n"
         << "unset colorbox\nset xlabel 'GPUs'\nset ylabel 'N'\nset xrange [-0.5:" << ranks.size() - 0.5
         << "]\nset yrange [-0.5:" << sizes.size() - 0.5 << "]\nset xtics (";
  for (std::size_t i = 0; i < ranks.size(); ++i) script << (i ? ", " : "") << "\"" << ranks[i] << "\" " << i;
  script << ")\nset ytics (";
  for (std::size_t i = 0; i < sizes.size(); ++i) script << (i ? ", " : "") << "\"" << sizes[i] << "\" " << i;
  script << ")\nset key outside right\n";
  for (std::size_t e = 0; e < engines.size(); ++e)
    script << "set title " << quote("engine " + engines[e] + ": the predicted winner (its grid)") << "\n"
           << "plot datafile index " << e << " using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 0.9 lc palette notitle, "
           << "'' index " << e << " using 1:2:4 with labels font ',8' notitle, "
           << "NaN with boxes fs solid lc rgb '#1f77b4' title 'dist\\_cannon', "
           << "NaN with boxes fs solid lc rgb '#ff7f0e' title 'dist\\_summa', "
           << "NaN with boxes fs solid lc rgb '#2ca02c' title 'dist\\_dns'\n";
  script << "unset multiplot\n";
  run_gnuplot(script.str(), data.str(), out, int(200 + 260 * engines.size()));
}

}  // namespace mmlab::analysis
