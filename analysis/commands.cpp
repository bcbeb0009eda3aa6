// mmlab-analyze's commands that are not comparisons (compare.cpp) or paper tables: summaries,
// headlines, strong scaling, the accuracy/speed frontier.
#include "analysis/commands.hpp"

#include <unistd.h>

#include <algorithm>
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
#include "core/csv.hpp"
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

Table records(const std::string& path) {
  mmlab::CsvTable csv;
  try {
    mmlab::require_regular_file(path, "records");
    csv = mmlab::read_csv(path);
  } catch (const mmlab::UsageError& e) {
    throw AnalysisError(e.what());
  }
  using mmlab::sample_column;
  bool samples = !csv.header.empty();  // every column one of the samples schema's
  for (const std::string& name : csv.header) samples = samples && sample_column(name);
  Table t;
  t.title = "records";
  std::vector<bool> numeric;
  for (const std::string& name : csv.header) {
    const mmlab::Column* c = samples ? sample_column(name) : nullptr;
    t.fields.push_back(name);
    t.types.push_back(mmlab::column_type_name(c ? c->type : mmlab::ColumnType::text));
    numeric.push_back(c && c->type != mmlab::ColumnType::text);
  }
  for (std::size_t row = 0; row < csv.rows.size(); ++row) {
    std::vector<Value> record;
    for (std::size_t i = 0; i < csv.header.size(); ++i) {
      const std::string& cell = csv.rows[row][i];
      if (!numeric[i] || cell.empty()) {
        record.push_back(numeric[i] ? Value() : Value(cell));
        continue;
      }
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str() || *end)
        throw AnalysisError(path + ": row " + std::to_string(row + 1) + ", column '" + csv.header[i] + "': '" +
                            cell + "' is not a number");
      record.push_back(Value(v));
    }
    t.records.push_back(std::move(record));
  }
  return t;
}

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
      key.push_back(status_name(r.status));
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(&r);
  }
  for (const std::string& c : sort) {
    if (!rows.empty()) rows.front().get(c);  // unknown column: a clear error
  }
  Table t;
  t.title = "summary";
  // After the group's columns: its row count, then the results' statistics columns of the pooled trials.
  const Col kStatistics[] = {Col::trials, Col::min_ms,   Col::max_ms,   Col::mean_ms, Col::std_ms,
                             Col::median_ms, Col::ci_lo_ms, Col::ci_hi_ms, Col::gflops};
  t.header = by;
  t.header.push_back("rows");
  for (Col c : kStatistics) t.header.push_back(column_name(c));
  if (all) t.header.push_back(column_name(Col::status));
  t.fields = by;
  t.fields.push_back("rows");
  for (Col c : kStatistics) t.fields.push_back(column_name(c));
  t.fields.push_back(column_name(Col::status));
  struct Line {
    std::vector<std::string> cells;
    std::vector<Value> record;
    std::map<std::string, std::string> sort_values;
  };
  // A group column's value as a record holds it: a number where the column is one (m, n, k, ...).
  const auto typed = [](const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    return !text.empty() && end && *end == '\0' ? Value(v) : Value(text);
  };
  std::vector<Line> lines;
  for (const auto& key : order) {
    const auto& members = groups.at(key);
    const Result& first = *members.front();
    Line line;
    line.cells.assign(key.begin(), key.end() - 1);
    line.cells.push_back(std::to_string(members.size()));
    for (auto it = key.begin(); it != key.end() - 1; ++it) line.record.push_back(typed(*it));
    line.record.push_back(Value(members.size()));
    if (!first.ok()) {
      line.cells.insert(line.cells.end(), 9, "");
      line.cells.push_back(status_name(first.status));
      line.record.insert(line.record.end(), 9, Value());
      line.record.push_back(Value(status_name(first.status)));
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
      line.record.push_back(Value(s.trials));
      for (double v : {s.min, s.max, s.mean, s.std, s.median, s.ci_lo, s.ci_hi, flop / (s.median * 1e6)})
        line.record.push_back(Value(v));
      line.record.push_back(Value("ok"));
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
  for (Line& l : lines) t.rows.push_back(std::move(l.cells)), t.records.push_back(std::move(l.record));
  return t;
}

Table headline(const std::vector<Result>& all_rows, const std::string& shape, const std::string& baseline) {
  const std::vector<Result> rows = select_run(all_rows, "latest");
  std::map<std::string, const Result*> base;  // l2_flush -> the baseline's row
  std::map<std::string, const Result*> best;  // algorithm|l2_flush -> its best row
  std::vector<std::string> order;
  // The FP32 contest: rows judged by the TF32 tolerance are left out.
  auto eligible = [&](const Result& r) {
    return r.ok() && r.fp32() && r.shape() == shape && r.scope == Scope::kernel;
  };
  for (const Result& r : rows)
    if (eligible(r) && r.algorithm == baseline) {
      auto [it, fresh] = base.emplace(l2_flush_name(r.l2_flush), &r);
      if (!fresh && r.gflops > it->second->gflops) it->second = &r;
    }
  if (base.empty())
    throw AnalysisError("headline: no " + baseline + " row at " + shape + " in the given files");
  for (const Result& r : rows) {
    if (!eligible(r) || !base.count(l2_flush_name(r.l2_flush))) continue;
    auto [it, fresh] = best.try_emplace(r.algorithm + "|" + l2_flush_name(r.l2_flush), &r);
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
    const std::string l2 = l2_flush_name(r.l2_flush);
    char ms[96];
    std::snprintf(ms, sizeof ms, "%.4g (%.4g to %.4g)", r.median_ms, r.ci_lo_ms, r.ci_hi_ms);
    std::vector<std::string> row = {r.algorithm, r.configuration(), ms, fixed(r.gflops / 1000, 2),
                                    fixed(r.gflops / base.at(l2)->gflops, 3)};
    if (base.size() > 1) row.insert(row.begin() + 2, l2);
    t.rows.push_back(row);
  }
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
    if (!r.ok() || r.scope != Scope::kernel || r.get(Col::max_sumabs_err).empty() || !wanted(r)) continue;
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
      const double err = r->number(Col::max_sumabs_err);
      std::string speed = "-", error = "-";
      if (b != base.end()) {
        speed = fixed(b->second->median_ms / r->median_ms, 2);
        const double base_err = b->second->number(Col::max_sumabs_err);
        if (base_err > 0) error = fixed(err / base_err, 2);
      }
      t.rows.push_back(
          {r->dims(), inputs_name(r->inputs), r->variant == "default" ? r->algorithm : r->algorithm + " " + r->variant,
           r->params.empty() ? "-" : r->params, fixed(r->gflops / 1000, 1), speed, scientific(err, 2), error,
           scientific(r->number(Col::max_rel_err), 2), precision_name(r->precision)});
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
