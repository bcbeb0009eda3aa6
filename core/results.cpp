#include "core/results.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/csv.hpp"
#include "core/distributed.hpp"
#include "core/kept_files.hpp"
#include "core/random.hpp"
#include "core/schema.hpp"
#include "core/scope.hpp"
#include "core/stats.hpp"

namespace mmlab {

namespace {
constexpr std::size_t kColumns = kResultColumns.size();

std::string where(const std::string& file, unsigned line, const std::string& column) {
  return file + ":" + std::to_string(line) + ": column '" + column + "'";
}

double number(const std::string& text, const std::string& file, unsigned line, const std::string& column) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || *end)
    throw AnalysisError(where(file, line, column) + ": '" + text + "' is not a number");
  return v;
}

// A value read (from `text`, named in messages) that must be whole.
long whole_of(double v, const std::string& text, const std::string& file, unsigned line, const std::string& column) {
  if (v != double(long(v)))
    throw AnalysisError(where(file, line, column) + ": '" + text + "' is not a whole number");
  return long(v);
}

// A statistic of an ok row or a sample, read from `text`: present, finite and not negative.
double measurement(std::optional<double> v, const std::string& text, const std::string& file, unsigned line,
                   const std::string& column) {
  if (!v) throw AnalysisError(where(file, line, column) + ": empty, but the row is ok (a measurement)");
  if (!std::isfinite(*v) || *v < 0)
    throw AnalysisError(where(file, line, column) + ": '" + text + "' is not a finite time or rate >= 0");
  return *v;
}

// A sample's cells, read here from their text.
long integer(const std::string& text, const std::string& file, unsigned line, const std::string& column) {
  return whole_of(text.empty() ? 0 : number(text, file, line, column), text, file, line, column);
}
double measured(const std::string& text, const std::string& file, unsigned line, const std::string& column) {
  return measurement(text.empty() ? std::nullopt : std::optional<double>(number(text, file, line, column)), text,
                     file, line, column);
}

// A row's numeric columns as the reader read them (Result::numbers; 0 where empty), their text for messages.
struct Read {
  const Result& r;
  const std::optional<double>& at(const char* column) const {
    return r.numbers[std::size_t(result_column(column) - kResultColumns.data())];
  }
  double value(const char* column) const { return at(column).value_or(0); }
  bool empty(const char* column) const { return !at(column); }
  long whole(const char* column) const { return whole_of(value(column), r.fields.at(column), r.file, r.line, column); }
  double measured(const char* column) const { return measurement(at(column), r.fields.at(column), r.file, r.line, column); }
};

// The file's columns `wanted`, row by row (core/csv.hpp's reader); what it refuses is an AnalysisError.
// A row is whole only with its line end (the rule --resume keeps, core/csv.cpp): a file whose last line
// has none ends in a row cut short, by a crash or by a copy, whose last value may read as another
// number (5.39539175e-09 cut to 5.395). It is refused, never read.
std::unique_ptr<CsvColumns> open_columns(const std::string& path, const std::vector<std::string>& wanted) {
  if (const auto kept = kept_files::find(path)) {
    if (!kept->empty() && kept->back() != '\n') throw AnalysisError(path + ": its last line has no line end");
  } else if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    const bool cut = std::fseek(f, -1, SEEK_END) == 0 && std::fgetc(f) != '\n';
    std::fclose(f);
    if (cut)
      throw AnalysisError(path + ": its last line has no line end: a row cut short (a crash, or a copy cut it), "
                                 "not read; `mmlab run --resume` with its results file as the output cuts it off");
  }
  try {
    return std::make_unique<CsvColumns>(path, wanted);
  } catch (const UsageError& e) {
    throw AnalysisError(e.what());
  }
}

// The next row of `in`; the reader's refusals (a row of another width, a quote left open) as AnalysisErrors.
bool next_row(CsvColumns& in, CsvRow& row) {
  try {
    return in.next(row);
  } catch (const UsageError& e) {
    throw AnalysisError(e.what());
  }
}

// A version 7 row in version 8's words: a distributed row's engine is the spec its engine axis's value
// named (version 8 records the resolved spec of what ran the local products; the spec's algorithm and
// variant are what the analysis matches a baseline on). Its layout, bound and energy were not measured.
void upgrade_v7(std::map<std::string, std::string>& f) {
  if (f["grid"].empty()) return;
  if (const std::string spec = distributed_engine_spec(f["engine"]); !spec.empty()) f["engine"] = spec;
}

// A distributed row's parameters in the current names of its engine (core/distributed.hpp's
// kEngineAliases: `engine=tf32x3` before it was named `tensor_cores`), whatever its version.
void current_names(std::map<std::string, std::string>& f) {
  if (f["grid"].empty()) return;
  f["params"] = with_current_engine(f["params"]);
  f["resolved"] = with_current_engine(f["resolved"]);
}

// A version 6 row in version 7's words: how its trials were timed. Before version 7 every GPU trial
// was timed with events on an idle stream (the host's enqueue time inside the interval): `events`, or
// `graph` in the batched scope; host, streamed and distributed rows by the host's steady clock. The
// host's own time was not measured (host_ms stays empty).
void upgrade_v6(std::map<std::string, std::string>& f) {
  if (f["status"] != "ok") return;
  const bool host_clock =
      f["device"].rfind("cpu", 0) == 0 || !f["grid"].empty() || !f["verified_entries"].empty();
  f["timer"] = host_clock ? "host" : f["scope"] == "batched" ? "graph" : "events";
}

// A version 4 row in version 5's words: trials one configuration after another, no clocks.
void upgrade_v4(std::map<std::string, std::string>& f) {
  if (f["status"] == "ok") f["order"] = order_name(false);
}

// A version 3 row in version 4's words: uniform inputs and FP32 judging (the only kinds before); its
// error relative to sum |a b| was not measured and stays empty.
void upgrade_v3(std::map<std::string, std::string>& f) {
  f["inputs"] = "uniform";
  f["precision"] = "fp32";
}

// A version 2 row in version 3's words: one process; one GPU unless it ran on the host.
void upgrade_v2(std::map<std::string, std::string>& f) {
  f["ranks"] = "1";
  f["gpus"] = f["device"].rfind("cpu", 0) == 0 ? "0" : "1";
}

}  // namespace

const std::vector<std::string>& required_columns() { return result_columns(); }

namespace {

// A version 1 row in version 2's words: l2_flush 0/1 -> off/on, compute capability "9.0" ->
// "sm_90", versions -> "CUDA 13.0", verified empty where nothing ran, resolved = params.
void upgrade_v1(std::map<std::string, std::string>& f) {
  f["schema"] = "1";
  f["l2_flush"] = f["l2_flush"] == "1" ? "on" : "off";
  if (const std::string cc = f["compute_capability"]; cc.size() >= 3 && cc[1] == '.')
    f["compute_capability"] = "sm_" + cc.substr(0, 1) + cc.substr(2);
  for (const char* v : {"cuda_runtime", "driver"})
    if (!f[v].empty()) f[v] = std::string("CUDA ") + f[v];
  f["cuda_driver"] = f["driver"];  // version 1 wrote the driver's CUDA version there
  f["driver"] = "";
  if (f["status"] == "skipped") f["verified"] = "";
  f["resolved"] = f["params"];
}

}  // namespace

std::string Result::configuration() const {
  std::string s = algorithm;
  if (variant != "default" && !variant.empty()) s += " " + variant;
  if (!params.empty()) s += " " + params;
  return s;
}

double Result::number(const std::string& column, double absent) const {
  const Column* c = result_column(column);
  return c ? numbers[std::size_t(c - kResultColumns.data())].value_or(absent) : absent;
}

std::string engine_name(const std::string& spec) { return split_spec(spec).engine(); }

bool Result::distributed() const {
  const auto grid = fields.find("grid"), ranks = fields.find("ranks");
  return (grid != fields.end() && !grid->second.empty()) ||
         (ranks != fields.end() && !ranks->second.empty() && std::atol(ranks->second.c_str()) > 1);
}

std::string Result::dims() const {
  return square() ? std::to_string(m) : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string Result::shape() const { return uniform() ? dims() : dims() + "/" + inputs_name(inputs); }

std::string Result::problem() const {
  return shape() + "|" + scope_name(scope) + "|" + l2_flush_name(l2_flush);
}

std::string Result::block() const {
  const std::string& x = fields.at("block_x");
  if (x.empty()) return "";
  std::string s = x + "x" + fields.at("block_y");
  if (fields.at("block_z") != "1") s += "x" + fields.at("block_z");
  return s;
}

const std::string& Result::get(const std::string& column) const {
  auto it = fields.find(column);
  if (it == fields.end()) {
    std::string valid;
    for (const auto& c : required_columns()) valid += (valid.empty() ? "" : ", ") + c;
    valid += ", and the derived block, size, shape, run";
    throw AnalysisError("unknown column '" + column + "' (columns: " + valid + ")");
  }
  return it->second;
}

// A sample's time: present, finite and above 0 (a trial that took no time was not measured).
static double sample_time(const std::string& text, const std::string& file, unsigned line, const std::string& column) {
  const double v = measured(text, file, line, column);
  if (!(v > 0)) throw AnalysisError(where(file, line, column) + ": " + text + " ms: a trial takes time > 0");
  return v;
}

// Each ok row's samples, joined by run_id and put in trial order; each trial exactly once, as many as
// the row's `trials`. A row whose samples do not match it is an error, or (leave_out) is dropped with
// the reason on stderr.
static void attach_samples(const std::string& file, std::vector<Result>& rows, std::size_t first,
                           BadSamples bad) {
  const std::shared_ptr<const std::string> in_memory = kept_files::find(samples_path_for(file));
  const std::string path = in_memory ? samples_path_for(file) : samples_path_for(resolve_link(file));  // beside the file a link names
  if (!in_memory && !std::filesystem::exists(path))
    throw AnalysisError(file + ": its raw samples are missing (expected " + path + ")");
  struct Trial {
    double ms = 0;
    std::optional<double> clock, host, energy;
    unsigned line = 0;
  };
  std::unordered_map<std::string, std::map<long, Trial>> by_run;  // run_id -> trial number -> trial
  // An empty file: a run that timed nothing (its rows all skipped or failed) had no samples to write.
  if (in_memory ? !in_memory->empty() : std::filesystem::file_size(path) > 0) {
    const std::unique_ptr<CsvColumns> in =
        open_columns(path, {"run_id", "trial", "ms", "clock_mhz", "host_ms", "energy_j"});
    for (CsvRow f; next_row(*in, f);) {
      const std::string &run = f[0], &trial = f[1], &ms = f[2], &clock = f[3], &host = f[4], &energy = f[5];
      const unsigned line = unsigned(in->line());
      if (trial.empty()) throw AnalysisError(where(path, line, "trial") + ": empty");
      const long t = integer(trial, path, line, "trial");
      if (t < 0) throw AnalysisError(where(path, line, "trial") + ": " + trial + " is negative");
      Trial x;
      x.ms = sample_time(ms, path, line, "ms");
      if (!clock.empty()) x.clock = measured(clock, path, line, "clock_mhz");
      if (!host.empty()) x.host = sample_time(host, path, line, "host_ms");
      if (!energy.empty()) x.energy = measured(energy, path, line, "energy_j");
      x.line = line;
      auto [it, fresh] = by_run[run].emplace(t, x);
      if (!fresh)
        throw AnalysisError(path + ":" + std::to_string(line) + ": trial " + trial + " of run_id " + run +
                            " again (first on line " + std::to_string(it->second.line) +
                            "); each trial is recorded once");
    }
  }
  std::vector<Result> kept(rows.begin(), rows.begin() + long(first));
  for (std::size_t i = first; i < rows.size(); ++i) {
    Result& r = rows[i];
    const std::string row_at = file + ":" + std::to_string(r.line);
    std::string problem;
    auto it = by_run.find(r.run_id);
    if (!r.ok()) {
      // skipped and failed rows have no trials
    } else if (it == by_run.end()) {
      problem = path + ": no samples for run_id " + r.run_id + " (" + row_at + ")";
    } else if (it->second.size() != r.trials || it->second.rbegin()->first >= long(r.trials)) {
      const auto& trials = it->second;
      long missing = -1;
      for (long t = 0; t < long(r.trials) && missing < 0; ++t)
        if (!trials.count(t)) missing = t;
      problem = path + ": run_id " + r.run_id + " has " + std::to_string(trials.size()) +
                " samples, trials " + std::to_string(trials.begin()->first) + " to " +
                std::to_string(trials.rbegin()->first) + ", but its row (" + row_at + ") says " +
                std::to_string(r.trials) + " trials" +
                (missing >= 0 ? " (trial " + std::to_string(missing) + " is missing)"
                              : " (trials beyond them, from line " +
                                    std::to_string(trials.upper_bound(long(r.trials) - 1)->second.line) + ")");
    } else {
      bool clocks = true, host = true, energy = true;
      for (const auto& [t, x] : it->second) {
        r.samples.push_back(x.ms);
        clocks = clocks && x.clock, host = host && x.host, energy = energy && x.energy;
      }
      for (const auto& [t, x] : it->second) {
        if (clocks) r.sample_clocks.push_back(*x.clock);
        if (host) r.sample_host.push_back(*x.host);
        if (energy) r.sample_energy.push_back(*x.energy);
      }
    }
    if (problem.empty()) {
      kept.push_back(std::move(r));
    } else if (bad == BadSamples::leave_out) {
      std::fprintf(stderr, "mmlab-analyze: left out %s (%s): %s\n", row_at.c_str(), r.configuration().c_str(),
                   problem.c_str());
    } else {
      throw AnalysisError(problem + "; --bad-samples leave-out analyses the other rows without it");
    }
  }
  rows = std::move(kept);
}

std::vector<Result> select_run(const std::vector<Result>& rows, const std::string& run) {
  if (run == "all") return rows;
  std::vector<Result> out;
  if (run == "latest") {
    std::map<std::string, std::size_t> last;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Result& r = rows[i];
      last[r.configuration() + "|" + r.problem()] = i;
    }
    std::vector<std::size_t> keep;
    for (const auto& [key, i] : last) keep.push_back(i);
    std::sort(keep.begin(), keep.end());
    for (std::size_t i : keep) out.push_back(rows[i]);
    return out;
  }
  std::set<std::string> runs;
  for (const Result& r : rows) {
    runs.insert(r.fields.at("run"));
    if (r.fields.at("run") == run) out.push_back(r);
  }
  if (out.empty()) {
    std::string list;
    for (const auto& x : runs) list += (list.empty() ? "" : ", ") + x;
    throw AnalysisError("no rows of run '" + run + "' (runs in the files: " + list + "; or latest, all)");
  }
  return out;
}

// A results file that can be read: a regular file (through links), not a folder or a loop of links.
static void require_results_file(const std::string& file) {
  if (kept_files::find(file)) return;  // a run's rows kept in memory (core/kept_files.hpp)
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw AnalysisError(file + ": a loop of symbolic links (" + resolve_link(file) + " ...), not a results file");
  if (ec || !fs::exists(st)) throw AnalysisError(file + ": no such file");
  if (fs::is_directory(st))
    throw AnalysisError(file + ": a folder, not a results file (name its CSV files, e.g. " + file + "/*.csv)");
  if (!fs::is_regular_file(st)) throw AnalysisError(file + ": not a regular file");
}

std::vector<Result> load_results(const std::vector<std::string>& files, bool samples, BadSamples bad) {
  if (files.empty()) throw AnalysisError("no result files given");
  std::vector<Result> out;
  for (const std::string& file : files) {
    require_results_file(file);
    const std::size_t first = out.size();
    {
      const std::unique_ptr<CsvColumns> in = open_columns(file, required_columns());
      const int version = schema_version_of([&](const std::string& c) { return in->has(c); });
      for (const std::string& c : result_columns_of(version))
        if (!in->has(c))
          throw AnalysisError(file + ": not an mmlab results file (no column '" + c + "')");
      std::map<std::string, unsigned> run_ids;  // run_id -> its line
      for (CsvRow row; next_row(*in, row);) {
        if (row[0] == required_columns()[0] && row[1] == required_columns()[1])
          throw AnalysisError(file + ":" + std::to_string(in->line()) +
                              ": the header again (two files joined?); mmlab writes it once, on line 1");
        Result r;
        r.file = file;
        r.line = unsigned(in->line());
        for (std::size_t i = 0; i < kColumns; ++i) r.fields[required_columns()[i]] = std::move(row[i]);
        if (version == 1) upgrade_v1(r.fields);
        if (version <= 2) upgrade_v2(r.fields);
        if (version <= 3) upgrade_v3(r.fields);
        if (version <= 4) upgrade_v4(r.fields);
        if (version <= 6) upgrade_v6(r.fields);
        if (version <= 7) upgrade_v7(r.fields);
        current_names(r.fields);
        r.run_id = r.fields["run_id"];
        if (version >= 2 && r.fields["schema"] != std::to_string(version)) {
          const std::string& v = r.fields["schema"];
          char* end = nullptr;
          const long given = std::strtol(v.c_str(), &end, 10);
          const bool known = !v.empty() && !*end && given >= 2 && given <= std::stol(kSchemaVersion);
          throw AnalysisError(where(file, r.line, "schema") + ": '" + v + "': " +
                              (known ? "a row of version " + v + " in a file whose columns are version " +
                                           std::to_string(version) + " (two files joined?)"
                                     : "this mmlab-analyze reads schema versions 1 to " +
                                           std::string(kSchemaVersion) +
                                           " (a newer mmlab wrote it? build mmlab-analyze from the same revision)"));
        }
        if (auto [seen, fresh] = run_ids.emplace(r.run_id, r.line); !fresh)
          throw AnalysisError(where(file, r.line, "run_id") + ": " + r.run_id + " again (first on line " +
                              std::to_string(seen->second) + "); a run_id names one row (two runs joined?)");
        r.device = r.fields["device"];
        r.algorithm = r.fields["algorithm"];
        r.variant = r.fields["variant"];
        r.params = r.fields["params"];
        // The choices, each checked against its domain (core/schema.hpp), then into its type; a value no
        // mmlab writes is an error naming the valid ones. Order and timer may be empty (rows that did
        // not run; files before version 5 and 7 for rows the upgrades leave alone), and trial_inputs
        // (rows that were not timed; files before version 9, which do not say).
        for (const Column& c : kResultColumns) {
          const std::string& value = r.fields[c.name];
          const std::string name = c.name;
          const bool may_be_empty = name == "order" || name == "timer" || name == "trial_inputs";
          if (c.type == ColumnType::choice && !(value.empty() && may_be_empty) && !in_domain(c.name, value))
            throw AnalysisError(where(file, r.line, c.name) + ": '" + value + "' (valid: " + domain_names(c.name) +
                                ")");
        }
        r.scope = parse_scope(r.fields["scope"]);
        r.status = *parse_status(r.fields["status"]);
        r.inputs = *parse_inputs_name(r.fields["inputs"]);
        r.precision = r.fields["precision"] == precision_name(Precision::tf32) ? Precision::tf32 : Precision::fp32;
        r.l2_flush = r.fields["l2_flush"] == l2_flush_name(true);
        for (std::size_t i = 0; i < kColumns; ++i) {  // each number read once, here
          const Column& c = kResultColumns[i];
          const std::string& text = r.fields[c.name];
          if (!text.empty() && (c.type == ColumnType::whole || c.type == ColumnType::number))
            r.numbers[i] = number(text, file, r.line, c.name);
        }
        const Read read{r};
        auto num = [&](const char* c) { return read.value(c); };
        auto whole = [&](const char* c) { return read.whole(c); };
        r.m = whole("m");
        r.n = whole("n");
        r.k = whole("k");
        const long trials = whole("trials");
        if (trials < 0) throw AnalysisError(where(file, r.line, "trials") + ": negative");
        r.trials = std::size_t(trials);
        // An ok row's statistics are measurements: present, finite, >= 0. Other rows may leave them empty.
        const bool ok = r.ok();
        auto stat = [&](const char* c) { return ok ? read.measured(c) : num(c); };
        if (ok && r.trials == 0)
          throw AnalysisError(where(file, r.line, "trials") + ": 0, but the row is ok");
        // Schema 5 leaves the standard deviation empty below 2 trials and the median's CI below 3.
        auto optional_stat = [&](const char* c, std::size_t from) {
          return ok && r.trials < from && r.fields[c].empty() ? 0.0 : stat(c);
        };
        r.min_ms = stat("min_ms");
        r.max_ms = stat("max_ms");
        r.mean_ms = stat("mean_ms");
        r.std_ms = optional_stat("std_ms", 2);
        r.median_ms = stat("median_ms");
        r.ci_lo_ms = optional_stat("ci_lo_ms", kMinTrialsForCi);
        r.ci_hi_ms = optional_stat("ci_hi_ms", kMinTrialsForCi);
        r.gflops = stat("gflops");
        r.order = r.fields["order"];
        r.interleave_group = r.fields["interleave_group"];
        r.slow_trials = r.fields["slow_trials"].empty() ? 0 : whole("slow_trials");
        for (Timer t : kAllTimers)
          if (r.fields["timer"] == timer_name(t)) r.timer = t;
        if (!read.empty("host_ms")) r.host_ms = read.measured("host_ms");
        if (r.algorithm.empty()) throw AnalysisError(where(file, r.line, "algorithm") + ": empty");
        // Derived columns, for grouping and sorting: block "16x16", size/shape "4096" or "MxNxK".
        r.fields["block"] = r.block();
        r.fields["size"] = r.fields["shape"] = r.shape();
        r.fields["run"] = r.run_id.substr(0, r.run_id.rfind('-'));  // one mmlab invocation
        out.push_back(std::move(r));
      }
    }
    if (samples) attach_samples(file, out, first, bad);
  }
  return out;
}

}  // namespace mmlab
