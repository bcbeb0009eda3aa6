// `mmlab-analyze readme`: README's generated headline and one report per experiment under
// docs/results/, all from the CSV files under data/. What the headline is built from is declared
// once, in data/headline.txt.
#include "analysis/readme.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/commands.hpp"
#include "analysis/plot.hpp"
#include "analysis/paper_tables.hpp"
#include "analysis/statistics.hpp"
#include "core/csv.hpp"

namespace fs = std::filesystem;

namespace mmlab::analysis {

namespace {

// A report draws the accuracy/speed frontier for at most this many problems (a panel each).
constexpr std::size_t kMostFrontierPanels = 24;


const char* kBegin = "<!-- mmlab-analyze readme: begin -->";
const char* kEnd = "<!-- mmlab-analyze readme: end -->";
// README's first screen: the headline claims, one row each (`front` lines of headline.txt).
const char* kFrontBegin = "<!-- mmlab-analyze front: begin -->";
const char* kFrontEnd = "<!-- mmlab-analyze front: end -->";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw AnalysisError(path + ": cannot be read");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// All results CSVs under a folder, relative to it, sorted: those with their raw samples beside them
// (mmlab writes both; other CSVs, such as ncu exports, are not results).
std::vector<std::string> result_files(const std::string& dir) {
  if (!fs::is_directory(dir)) throw AnalysisError(dir + ": no such folder");
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && e.path().extension() == ".csv" &&
        p.find(".samples.csv") == std::string::npos && fs::exists(samples_path_for(p)))
      out.push_back(fs::relative(e.path(), dir).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// How a row's trials were timed, for a reader: the GPU's time alone, or the host's enqueue time with it.
std::string timer_words(const std::string& timer) {
  if (timer == "blocked" || timer == "blocked_graph") return "the GPU's time only (timer " + timer + ")";
  if (timer == "events" || timer == "graph")
    return "events on an idle stream, the host's enqueue time inside (timer " + timer + ", before schema 7)";
  return "the host's clock (timer " + timer + ")";
}

std::string when_and_where(const std::vector<Result>& rows) {
  std::set<std::string> devices, days, revisions, timers;
  for (const Result& r : rows) {
    if (r.device.rfind("cpu", 0) != 0 && r.device != "none") devices.insert(r.device);
    days.insert(r.get(Col::timestamp).substr(0, 10));
    revisions.insert("`" + r.get(Col::git_revision) + "`");
    if (r.ok() && r.timer) timers.insert(timer_words(timer_name(*r.timer)));
  }
  auto join = [](const std::set<std::string>& s, const char* sep = ", ") {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : sep) + x;
    return out;
  };
  return (devices.empty() ? std::string("the CPU") : join(devices)) + ", " + join(days) + ", revision " +
         join(revisions) + (timers.empty() ? "" : "; timed: " + join(timers, "; "));
}

// The square size a report's headline uses: 4096 when cuBLAS ran there, else cuBLAS's largest.
std::string headline_size(const std::vector<Result>& rows) {
  long largest = 0;
  for (const Result& r : rows)
    if (r.ok() && r.fp32() && r.algorithm == "cublas" && r.square() && r.scope == Scope::kernel) {
      if (r.m == 4096) return "4096";
      largest = std::max(largest, r.m);
    }
  return largest ? std::to_string(largest) : "";
}

// One algorithm against cuBLAS, one configuration per shape: a head-to-head run.
bool head_to_head(const std::vector<Result>& rows) {
  std::set<std::string> algorithms;
  std::map<std::string, std::set<std::string>> per_shape;
  for (const Result& r : select_run(rows, "latest")) {
    if (!r.ok()) continue;
    algorithms.insert(r.algorithm);
    if (r.algorithm != "cublas") per_shape[r.shape() + "|" + scope_name(r.scope)].insert(r.configuration());
  }
  if (algorithms.size() != 2 || !algorithms.count("cublas")) return false;
  return std::all_of(per_shape.begin(), per_shape.end(), [](auto& kv) { return kv.second.size() == 1; });
}

const PaperTable* paper_table_of(const std::string& relative) {
  for (const PaperTable& p : paper_tables())
    if (p.data.size() == 1 && p.data.front() == relative) return &p;
  return nullptr;
}

// "12 faster, 3 inconclusive": a comparison table's verdicts counted by their first words.
std::string verdict_counts(const Table& t) {
  const std::size_t column =
      std::size_t(std::find(t.header.begin(), t.header.end(), "verdict") - t.header.begin());
  std::map<std::string, int> verdicts;
  for (const auto& r : t.rows) {
    std::string word = r.at(column).substr(0, r.at(column).find_first_of(":("));
    while (!word.empty() && word.back() == ' ') word.pop_back();
    verdicts[word]++;
  }
  std::string out;
  for (auto& [v, c] : verdicts) out += (out.empty() ? "" : ", ") + std::to_string(c) + " " + v;
  return out;
}

// The report's plots: size and roofline where four or more square sizes ran, else the
// per-configuration bars where one shape has five or more configurations.
std::vector<std::pair<PlotKind, std::string>> plots_for(const std::vector<Result>& rows) {
  std::set<long> sizes;
  std::map<std::string, int> per_shape;
  for (const Result& r : rows)
    if (r.ok() && r.scope == Scope::kernel) {
      if (r.square()) sizes.insert(r.m);
      per_shape[r.shape()]++;
    }
  if (sizes.size() >= 4) return {{PlotKind::size, "size"}, {PlotKind::roofline, "roofline"}};
  int most = 0;
  for (auto& [shape, count] : per_shape) most = std::max(most, count);
  if (most >= 5) return {{PlotKind::blocks, "configurations"}};
  return {};
}

std::string write_report(const std::string& data, const std::string& relative, const std::string& reports) {
  const std::string path = (fs::path(data) / relative).generic_string();
  const std::string name = report_name(relative);
  const std::vector<Result> rows = load_results({path}, true);
  std::ostringstream md;
  md << "# " << name << "\n\n<!-- generated by `build/bin/mmlab-analyze readme` from " << path
     << "; edit the analysis, not this text -->\n\n"
     << "From [`" << path << "`](../../" << path << ") (" << when_and_where(rows)
     << "). [`data/README.md`](../../data/README.md) gives the command that produced it. Medians of the "
        "recorded trials; every configuration was verified against float64 before it was timed.\n\n";
  std::size_t ok = 0, skipped = 0, failed = 0;
  for (const Result& r : rows) (r.ok() ? ok : r.status == Status::skipped ? skipped : failed)++;
  md << ok << " configurations ran, " << skipped << " were skipped, " << failed
     << " failed verification.\n\n";

  if (const std::string size = headline_size(rows); !size.empty()) {
    Table t = headline(rows, size);
    md << "## Each algorithm's best configuration at " << size << ", against cuBLAS in the same run\n\n"
       << render(t, Format::markdown) << "\n";
    CompareOptions o;
    o.baseline = "cublas";
    try {
      Table c = compare(rows, o);
      c.title.clear();
      md << "## Against cuBLAS (`mmlab-analyze compare " << path << " --baseline cublas`)\n\n";
      if (head_to_head(rows))
        md << render(c, Format::markdown) << "\n";
      else
        md << verdict_counts(c) << ".\n\n<details><summary>all " << c.rows.size()
           << " comparisons</summary>\n\n"
           << render(c, Format::markdown) << "\n</details>\n\n";
    } catch (const AnalysisError&) {  // cuBLAS alone in the file: nothing to compare
    }
  } else {
    Table t = summary(rows, {"algorithm", "variant", "params", "m", "n", "k", "scope"}, {}, false);
    t.title.clear();
    md << "## Summary\n\n" << render(t, Format::markdown) << "\n";
  }
  const bool distributed =
      std::any_of(rows.begin(), rows.end(), [](const Result& r) { return r.ok() && r.distributed(); });
  if (distributed) {
    try {
      Table t = scaling(rows);
      t.title.clear();
      md << "## Strong scaling against the same engine on one GPU (`mmlab-analyze scaling " << path << "`)\n\n"
         << render(t, Format::markdown) << "\n";
      const std::string file = name + "-scaling.svg";
      plot(PlotKind::scaling, rows, (fs::path(reports) / file).string(), PlotOptions{});
      md << "![" << name << ": scaling](" << file << ")\n\n";
    } catch (const AnalysisError&) {  // no cuBLAS row to scale against
    }
  }
  const bool accuracy = std::any_of(rows.begin(), rows.end(), [](const Result& r) {
    return r.ok() && (!r.fp32() || !r.uniform());
  });
  if (accuracy) {
    try {
      Table t = frontier(rows);
      t.title.clear();
      std::set<std::string> sizes;
      for (const auto& row : t.rows) sizes.insert(row[0]);
      md << "## Accuracy and speed (`mmlab-analyze frontier " << path << "`)\n\n";
      for (const std::string& size : sizes)
        if (const std::string advice = frontier_advice(t, size, "cublas"); !advice.empty())
          md << advice << "\n\n";
      md << render(t, Format::markdown) << "\n";
      if (sizes.size() > kMostFrontierPanels) {  // a panel per problem: megabytes of SVG nobody reads
        md << "(The frontier plot, a panel for each of " << sizes.size() << " problems, is left out here: `mmlab-analyze "
           << "plot frontier " << path << "` draws it.)\n\n";
      } else {
        const std::string file = name + "-frontier.svg";
        plot(PlotKind::frontier, rows, (fs::path(reports) / file).string(), PlotOptions{});
        md << "![" << name << ": frontier](" << file << ")\n\n";
      }
    } catch (const AnalysisError&) {  // no row with the error relative to sum |a b|
    }
  }
  if (const PaperTable* p = paper_table_of(relative)) {
    md << "## " << p->description << "\n\n";
    for (const Table& t : build_paper_table(p->name, rows)) md << render(t, Format::markdown) << "\n";
  }
  const auto plots = plots_for(rows);
  if (!plots.empty()) md << "## Plots\n\n";
  for (const auto& [kind, suffix] : plots) {
    const std::string file = name + "-" + suffix + ".svg";
    plot(kind, rows, (fs::path(reports) / file).string(), PlotOptions{});
    md << "![" << name << ": " << suffix << "](" << file << ")\n\n";
  }
  const std::string out = (fs::path(reports) / (name + ".md")).string();
  write_atomically(out, md.str());
  return out;
}

struct Headline {
  std::string size = "4096";
  std::vector<std::vector<std::string>> best;  // each: one file, or the runs of one experiment
  std::vector<std::pair<std::string, std::string>> versus;  // file, the inputs kept ("": all)
  std::vector<std::vector<std::string>> across;  // the runs of one experiment
  std::vector<std::pair<std::string, std::string>> scaling;    // file, size
  std::vector<std::pair<std::string, std::string>> plots;      // kind, file
  std::vector<std::pair<std::string, std::string>> frontiers;  // file, size
  struct Front {
    std::string label, size, baseline, configuration;
    std::vector<std::string> files;
  };
  std::vector<Front> front;  // README's first-screen claims
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Headline read_headline(const std::string& data) {
  const std::string path = (fs::path(data) / "headline.txt").string();
  std::istringstream in(read_text(path));
  Headline h;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key, a, b;
    words >> key >> a >> b;
    std::vector<std::string> rest;  // `best` takes every file on its line
    if (!b.empty()) rest.push_back(b);
    for (std::string more; words >> more;) rest.push_back(more);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    auto exists = [&](const std::string& f) {
      if (!fs::is_regular_file(fs::path(data) / f))
        throw AnalysisError(where + "no such file under " + data + ": " + f);
      return f;
    };
    if (key == "front") {  // front LABEL | SIZE | BASELINE | CONFIGURATION | FILE...
      std::vector<std::string> parts;
      std::stringstream ss(line.substr(line.find("front") + 5));
      for (std::string part; std::getline(ss, part, '|');) parts.push_back(trim(part));
      if (parts.size() != 5 || parts[4].empty())
        throw AnalysisError(where + "expected 'front LABEL | SIZE | BASELINE | CONFIGURATION | FILE...'");
      Headline::Front f{parts[0], parts[1], parts[2], parts[3], {}};
      std::istringstream files(parts[4]);
      for (std::string file; files >> file;) f.files.push_back(exists(file));
      h.front.push_back(f);
    } else if (key == "size" && !a.empty())
      h.size = a;
    else if (key == "best" && !a.empty()) {
      h.best.push_back({exists(a)});
      for (const std::string& f : rest) h.best.back().push_back(exists(f));
    }
    else if (key == "across" && !b.empty()) {
      h.across.push_back({exists(a)});
      for (const std::string& f : rest) h.across.back().push_back(exists(f));
    } else if (key == "versus" && !a.empty() && rest.size() <= 1)
      h.versus.emplace_back(exists(a), b);
    else if (key == "scaling" && !b.empty())
      h.scaling.emplace_back(exists(a), b);
    else if (key == "frontier" && !b.empty())
      h.frontiers.emplace_back(exists(a), b);
    else if (key == "plot" && !b.empty())
      parse_plot_kind(a), h.plots.emplace_back(a, exists(b));
    else
      throw AnalysisError(where +
                          "expected 'size N', 'best FILE...', 'across FILE FILE...', 'versus FILE [INPUTS]', "
                          "'scaling FILE SIZE', 'frontier FILE SIZE', 'plot KIND FILE' or "
                          "'front LABEL | SIZE | BASELINE | CONFIGURATION | FILE...'");
  }
  return h;
}

// The README's headline table: across the `best` lines, each algorithm's best configuration at the
// headline size against cuBLAS in the same run, best first. A line of one file gives that run's
// speed-up with its interval and verdict (one run: a measurement); a line of several files (the
// same experiment, separate runs) gives the speed-up across them, its interval from the run-to-run
// spread, and whether every run agrees: a claim.
Table best_table(const std::string& data, const Headline& h, std::vector<Result>* used) {
  struct Line {
    double ratio;
    std::vector<std::string> cells;
  };
  std::map<std::string, Line> best;
  CompareOptions o;
  o.baseline = "cublas";
  o.sizes = {h.size};
  for (const std::vector<std::string>& files : h.best) {
    std::vector<std::string> paths;
    std::string links;
    for (const std::string& f : files) {
      paths.push_back((fs::path(data) / f).generic_string());
      links += (links.empty() ? "" : ", ") + ("[" + f + "](data/" + f + ")");
    }
    const std::vector<Result> rows = load_results(paths, true);
    used->insert(used->end(), rows.begin(), rows.end());
    const auto column = [](const Table& t, const char* name) {
      return std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
    };
    if (files.size() == 1) {
      const Table t = headline(rows, h.size);
      Table c;
      try {
        c = compare(rows, o);
      } catch (const AnalysisError&) {  // cuBLAS alone: nothing to compare
      }
      // cuBLAS's own rate beside each row: its fastest FP32 kernel-scope row at the size and L2 setting,
      // as headline() takes it (not worked back from rounded figures).
      const std::size_t l2_column = column(t, "L2 flush"), tflops_column = column(t, "TFLOP/s");
      const auto base_tflops = [&](const std::string& l2) {
        double best_gflops = 0;
        for (const Result& r : select_run(rows, "latest"))
          if (r.ok() && r.fp32() && r.algorithm == "cublas" && r.shape() == h.size && r.scope == Scope::kernel &&
              (l2.empty() || l2_flush_name(r.l2_flush) == l2))
            best_gflops = std::max(best_gflops, r.gflops);
        return best_gflops / 1000;
      };
      for (const auto& row : t.rows) {
        if (row[0] == "cublas") continue;
        std::string ci, verdict;
        for (const auto& cr : c.rows)
          if (cr[column(c, "configuration")] == row[1] && cr[column(c, "size")] == h.size &&
              cr[column(c, "scope")] == "kernel")
            ci = cr[column(c, "CI 95%")], verdict = cr[column(c, "verdict")];
        const double ratio = std::stod(row.back());
        const std::string l2 = l2_column < row.size() ? row[l2_column] : "";
        Line line{ratio,
                  {row[0], row[1], row[tflops_column], fixed(base_tflops(l2), 2), fixed(ratio, 3), ci, verdict,
                   "1", links}};
        auto it = best.find(row[0]);
        if (it == best.end() || ratio > it->second.ratio) best[row[0]] = line;
      }
      continue;
    }
    o.across_runs = true;
    const Table c = compare_across_runs(rows, o);
    o.across_runs = false;
    const auto at = [&](const std::vector<std::string>& cr, const char* name) { return cr[column(c, name)]; };
    for (const auto& cr : c.rows) {
      if (at(cr, "size") != h.size || at(cr, "scope") != "kernel") continue;
      const std::string configuration = at(cr, "configuration"),
                        algorithm = configuration.substr(0, configuration.find(' '));
      std::vector<double> tflops, base;
      for (const Result& r : rows)
        if (r.ok() && r.shape() == h.size && r.scope == Scope::kernel) {
          if (r.configuration() == configuration) tflops.push_back(r.gflops / 1000);
          if (r.algorithm == "cublas" && r.fp32()) base.push_back(r.gflops / 1000);
        }
      const double ratio = std::stod(at(cr, "across runs"));
      const std::string holds_text = at(cr, "holds in every run");
      const std::string holds = holds_text == "no" ? "runs disagree" : "every run " + holds_text.substr(5);
      Line line{ratio,
                {algorithm, configuration, fixed(median(tflops), 2), fixed(median(base), 2), fixed(ratio, 3),
                 at(cr, "CI 95% of the mean"), at(cr, "verdict"),
                 at(cr, "runs") + ": " + at(cr, "run-to-run spread") + ", " + holds, links}};
      auto it = best.find(algorithm);
      if (it == best.end() || ratio > it->second.ratio || it->second.cells[7] == "1") best[algorithm] = line;
    }
  }
  std::vector<Line> lines;
  for (auto& [name, line] : best) lines.push_back(line);
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.ratio > b.ratio; });
  Table t;
  t.header = {"algorithm", "best configuration", "TFLOP/s", "cuBLAS TFLOP/s", "x cuBLAS", "CI 95%",
              "verdict (+-2%)", "runs", "data"};
  for (Line& l : lines) t.rows.push_back(std::move(l.cells));
  return t;
}

// A head-to-head table for the README: the square sizes row by row, the general shapes (labels
// MxNxK) in one sentence (how many, the speed-ups' median and range, the verdicts counted); every
// row stays in the report.
std::string versus_summary(Table& t) {
  std::vector<std::vector<std::string>> square;
  std::map<std::string, std::vector<double>> ratios;  // per configuration
  std::map<std::string, std::map<std::string, int>> verdicts;
  for (auto& r : t.rows) {
    if (r[0].find('x') == std::string::npos) {
      square.push_back(std::move(r));
      continue;
    }
    ratios[r[1]].push_back(std::stod(r[4]));
    ++verdicts[r[1]][r[6].substr(0, r[6].find_first_of(":("))];
  }
  t.rows = std::move(square);
  std::ostringstream out;
  for (auto& [configuration, v] : ratios) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    out << (out.tellp() ? " " : "") << configuration << " on " << n
        << " general shapes (MxNxK): speed-up median " << fixed(median, 3) << ", " << fixed(v[0], 3) << " to "
        << fixed(v.back(), 3) << "; ";
    std::size_t i = 0;
    for (const auto& [verdict, count] : verdicts[configuration]) {
      std::string word = verdict;
      while (!word.empty() && word.back() == ' ') word.pop_back();
      out << (i++ ? ", " : "") << word << " " << count;
    }
    out << ".";
  }
  return out.str();
}

}  // namespace

std::string report_name(const std::string& relative_csv) {
  const fs::path p(relative_csv);
  const std::string stem = p.stem().string();
  std::string folder = p.parent_path().generic_string();
  std::replace(folder.begin(), folder.end(), '/', '-');
  if (folder.empty()) return stem;
  const bool doubled =
      folder.size() >= stem.size() && folder.compare(folder.size() - stem.size(), stem.size(), stem) == 0;
  return doubled ? folder : folder + "-" + stem;
}

// The first screen's table: each `front` line's configuration against its baseline at its size, across
// its runs (one run: that run's interval), from compare's records.
std::string front_table(const std::string& data, const Headline& h) {
  Table t;
  t.header = {"", "configuration", "size", "against", "speed-up", "CI 95%", "verdict", "runs", "data"};
  std::vector<Result> all;
  for (const Headline::Front& f : h.front) {
    std::vector<std::string> paths;
    // The files, by their paths under the folder that holds them all, after that folder's link.
    fs::path common = fs::path(f.files.front()).parent_path();
    for (const std::string& file : f.files)
      while (!common.empty() && fs::path(file).lexically_relative(common).generic_string().rfind("..", 0) == 0)
        common = common.parent_path();
    std::string names;
    for (const std::string& file : f.files) {
      paths.push_back((fs::path(data) / file).generic_string());
      names += (names.empty() ? "" : ", ") + fs::path(file).lexically_relative(common).generic_string();
    }
    const std::string folder = data + "/" + common.generic_string() + "/";
    const std::string links = "[" + folder + "](" + folder + "): " + names;
    const std::vector<Result> rows = load_results(paths, true);
    all.insert(all.end(), rows.begin(), rows.end());
    CompareOptions o;
    o.baseline = f.baseline, o.sizes = {f.size};
    const bool runs = f.files.size() > 1;
    const Table c = runs ? compare_across_runs(rows, o) : compare(rows, o);
    const auto field = [&](const std::vector<Value>& rec, const std::string& name) -> const Value& {
      return rec[std::size_t(std::find(c.fields.begin(), c.fields.end(), name) - c.fields.begin())];
    };
    // The configuration whose name starts so (its last record where the comparison has several): the
    // one of exactly that name where several names start so, else an error (slabs=1 and slabs=4 after
    // the same start).
    const std::vector<Value>* found = nullptr;
    std::set<std::string> starts;
    bool exact = false;
    for (const auto& rec : c.records) {
      const std::string& name = field(rec, "configuration").text;
      if (name.rfind(f.configuration, 0) != 0 || (exact && name != f.configuration)) continue;
      starts.insert(name);
      if (name == f.configuration) exact = true;
      found = &rec;
    }
    if (!exact && starts.size() > 1) {
      std::string list;
      for (const std::string& n : starts) list += (list.empty() ? "" : ", ") + n;
      throw AnalysisError("headline.txt: front '" + f.label + "': '" + f.configuration +
                          "' starts several configurations (" + list + "): name one in full");
    }
    if (!found)
      throw AnalysisError("headline.txt: front '" + f.label + "': no " + f.configuration + " at " + f.size +
                          " against " + f.baseline + " in " + f.files.front());
    const auto num = [](const Value& v) { return v.kind == Value::Kind::number ? fixed(v.number, 3) : std::string(); };
    const Value& lo = field(*found, runs ? "mean_ci_lo" : "ci_lo");
    const Value& hi = field(*found, runs ? "mean_ci_hi" : "ci_hi");
    const std::string verdict = field(*found, "verdict").text;
    const std::string holds = runs ? (field(*found, "holds").yes ? ", every run" : ", not every run") : "";
    const std::string against = f.baseline.rfind("best:", 0) == 0 ? "the fastest of " + f.baseline.substr(5) : f.baseline;
    t.rows.push_back({f.label, field(*found, "configuration").text, f.size, against, num(field(*found, "speedup")),
                      lo.kind == Value::Kind::number ? num(lo) + " to " + num(hi) : "", verdict + holds,
                      runs ? std::to_string(f.files.size()) : "1", links});
  }
  return render(t, Format::markdown) + "\nMeasured on " + when_and_where(all) +
         ". speed-up: the baseline's median time over the configuration's, trials interleaved in one run (the "
         "baseline pure FP32: cuBLAS with CUBLAS_PEDANTIC_MATH); over several runs (separate processes) the "
         "geometric mean, its interval that of the mean; verdict against +-2% (`mmlab-analyze compare`).\n";
}

void regenerate(const std::string& data, const std::string& readme, const std::string& reports) {
  std::string text = read_text(readme);
  if (const auto fb = text.find(kFrontBegin), fe = text.find(kFrontEnd);
      fb != std::string::npos && fe != std::string::npos && fe > fb) {
    const Headline h = read_headline(data);
    if (!h.front.empty())
      text = text.substr(0, fb) + kFrontBegin + "\n" + front_table(data, h) + kFrontEnd +
             text.substr(fe + std::string(kFrontEnd).size());
  }
  const auto b = text.find(kBegin), e = text.find(kEnd);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw AnalysisError(readme + ": no '" + std::string(kBegin) + "' ... '" + kEnd + "' markers to fill");
  const Headline h = read_headline(data);

  std::vector<std::string> written;
  const std::vector<std::string> files = result_files(data);
  const bool terminal = ::isatty(STDERR_FILENO);
  for (const std::string& f : files) {
    // Progress (minutes for the whole of data/): one line updated in place on a terminal, else a line
    // every 50 reports.
    const std::size_t i = written.size() + 1;
    if (terminal)
      std::fprintf(stderr, "\rmmlab-analyze readme: report %zu of %zu\033[K", i, files.size());
    else if (i % 50 == 0 || i == files.size())
      std::fprintf(stderr, "mmlab-analyze readme: report %zu of %zu\n", i, files.size());
    try {
      written.push_back(write_report(data, f, reports));
    } catch (const AnalysisError& e) {
      throw AnalysisError(f + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error(f + ": " + e.what());
    }
  }

  if (terminal) std::fputc('\n', stderr);
  std::ostringstream md;
  md << kBegin << "\n<!-- generated by `build/bin/mmlab-analyze readme` from " << data
     << "/ (the files named in " << data << "/headline.txt); edit those, not this text -->\n\n";
  md << "Medians of the recorded trials; every configuration verified against float64 first; cuBLAS is "
        "pure FP32 (`CUBLAS_PEDANTIC_MATH`) and ran in the same run as each row. Each table names the GPU and "
        "revision it was measured on. A figure from one run is a measurement; a claim holds across runs "
        "(column runs: how many, their spread, and whether every run's verdict agrees).\n\n";
  std::vector<Result> used;
  const Table best = best_table(data, h, &used);
  md << "**Each algorithm's best configuration at " << h.size << " against cuBLAS:**\n\n"
     << render(best, Format::markdown) << "\nMeasured on " << when_and_where(used)
     << ". x cuBLAS: one run's ratio of medians, or the geometric mean over the runs of one experiment; "
        "verdict: faster or slower when the 95% interval lies beyond +-2%, equivalent inside it "
        "(`mmlab-analyze compare`).\n\n";
  for (const std::vector<std::string>& files : h.across) {
    std::vector<std::string> paths;
    std::string names;
    for (const std::string& f : files) {
      paths.push_back((fs::path(data) / f).generic_string());
      names += (names.empty() ? "`" : ", `") + f + "`";
    }
    const std::vector<Result> rows = load_results(paths, true);
    CompareOptions o;
    o.baseline = "cublas";
    Table t = compare_across_runs(rows, o);
    t.title.clear();
    for (auto& r : t.rows) r.erase(r.begin() + 1), r.pop_back();  // scope: kernel, clock: GPU time throughout
    t.header.erase(t.header.begin() + 1), t.header.pop_back();
    t.note = "Measured on " + when_and_where(rows) + ", " + std::to_string(files.size()) +
             " runs (separate processes, minutes apart). " + t.note;
    md << "**Claims across runs, " << names << ":**\n\n" << render(t, Format::markdown) << "\n";
  }
  for (const auto& [f, inputs] : h.versus) {
    const std::string path = (fs::path(data) / f).generic_string();
    CompareOptions o;
    o.baseline = "cublas";
    std::vector<Result> rows = load_results({path}, true);
    if (const std::string& kind = inputs; !kind.empty())  // (a structured binding is not captured before C++20)
      rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Result& r) { return inputs_name(r.inputs) != kind; }),
                 rows.end());
    Table t = compare(rows, o);
    t.title.clear();
    std::vector<std::size_t> keep;  // size, configuration, the medians, speed-up, CI, verdict
    for (const char* name : {"size", "configuration", "median ms", "baseline ms", "speed-up", "CI 95%", "verdict"})
      keep.push_back(std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin()));
    const auto slice = [&](const std::vector<std::string>& r) {
      std::vector<std::string> out;
      for (std::size_t i : keep) out.push_back(r[i]);
      return out;
    };
    t.header = slice(t.header);
    for (auto& r : t.rows) r = slice(r);
    const std::string shapes = versus_summary(t);
    t.note = "Measured on " + when_and_where(rows) + ", one run" +
             (inputs.empty() ? "" : ", " + inputs + " inputs") +
             ". speed-up = cuBLAS median / median with its 95% interval; verdict against +-2%. " + shapes +
             " Every row, the methods and the family: [" + report_name(f) + "](docs/results/" +
             report_name(f) + ".md).";
    md << "**Head-to-head by size, `" << f << "`" << (inputs.empty() ? "" : " (" + inputs + " inputs)")
       << ":**\n\n"
       << render(t, Format::markdown) << "\n";
  }
  for (const auto& [f, size] : h.scaling) {
    const std::string path = (fs::path(data) / f).generic_string();
    const std::vector<Result> rows = load_results({path}, true);
    Table t = scaling(rows);
    t.title.clear();
    std::vector<std::size_t> shown;
    for (const char* name : {"algorithm", "configuration", "engine", "GPUs or ranks", "median ms", "x 1 GPU", "CI 95%",
                             "efficiency", "x cuBLASMp", "time / bound"})
      shown.push_back(std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin()));
    std::vector<std::vector<std::string>> keep;
    for (auto& r : t.rows)
      if (r[0] == size) {
        keep.emplace_back();
        for (std::size_t c : shown) keep.back().push_back(r[c]);
      }
    t.rows = keep;
    std::vector<std::string> header;
    for (std::size_t c : shown) header.push_back(t.header[c]);
    t.header = header;
    t.note = "Measured on " + when_and_where(rows) +
             ", one run. Across GPUs of one host (one rank each), each row against its own engine on one GPU in "
             "the same job, every method from the same starting layout. Every size, the clocks, energy, bounds "
             "and the split into compute, communication and waiting: [" +
             report_name(f) + "](docs/results/" + report_name(f) + ".md).";
    md << "**Strong scaling at " << size << ", `" << f << "`:**\n\n" << render(t, Format::markdown) << "\n";
  }
  for (const auto& [f, size] : h.frontiers) {
    const std::string path = (fs::path(data) / f).generic_string();
    const std::vector<Result> rows = load_results({path}, false);
    Table t = frontier(rows, {size});
    t.title.clear();
    md << "**FP32 products on tensor cores: accuracy against speed at " << size << ", `" << f << "`:**\n\n"
       << frontier_advice(t, size, "cublas") << "\n\n"
       << render(frontier_summary(t, size, "cublas"), Format::markdown) << "\nMeasured on "
       << when_and_where(rows) << ", one run. Each kind of inputs, every size and the frontier plot: [" << report_name(f) << "](docs/results/"
       << report_name(f) << ".md).\n\n";
  }
  md << "**The papers' tables, regenerated** (each report sets mmlab's figures beside the paper's own):\n\n";
  for (const PaperTable& p : paper_tables())
    if (fs::exists(fs::path(data) / p.data.front()))
      md << "- [" << p.description << "](docs/results/" << report_name(p.data.front()) << ".md)\n";
  md << "\n";
  for (const auto& [kind, f] : h.plots) {  // the report's own plot where it drew one of that kind
    const std::string suffix = kind == "blocks" ? "configurations" : kind;
    const fs::path file = fs::path(reports) / (report_name(f) + "-" + suffix + ".svg");
    if (!fs::exists(file))
      plot(parse_plot_kind(kind), load_results({(fs::path(data) / f).string()}, false), file.string(),
           PlotOptions{});
    md << "![" << report_name(f) << ": " << kind << "](" << file.generic_string() << ")\n\n";
  }
  std::ostringstream index;
  index << "# Reports\n\nGenerated by `build/bin/mmlab-analyze readme`: one per results file under " << data
        << "/ (all comparisons, plots).\n\n";
  for (const std::string& w : written) {
    const std::string name = fs::path(w).stem().string();
    index << "- [" << name << "](" << name << ".md)\n";
  }
  const std::string index_file = (fs::path(reports) / "index.md").generic_string();
  write_atomically(index_file, index.str());
  md << "Every experiment has its report (all comparisons, plots): [" << written.size() << " reports]("
     << index_file << ")";
  md << ".\n" << kEnd;
  write_atomically(readme, text.substr(0, b) + md.str() + text.substr(e + std::string(kEnd).size()));
}

}  // namespace mmlab::analysis
