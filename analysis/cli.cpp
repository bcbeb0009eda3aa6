// mmlab-analyze's commands: statistics, comparisons, the papers' tables and plots from mmlab's CSV
// files, for the program (analysis/main.cpp) and the lab's C API. Plain C++ (no CUDA).
#include "analysis/cli.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/exit_status.hpp"
#include "analysis/commands.hpp"
#include "analysis/plot.hpp"
#include "analysis/model.hpp"
#include "analysis/paper_tables.hpp"
#include "analysis/readme.hpp"
#include "core/csv.hpp"
#include "core/params.hpp"
#include "core/random.hpp"
#include "core/revision.hpp"
#include "core/schema.hpp"
#include "core/scope.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace mmlab::analysis;

namespace {

const char* kUsage =
    "usage: mmlab-analyze <command> [options]   (mmlab-analyze <command> --help: one command)\n";
const char* kCommon = R"(
Common: --format md|latex (for reading) or json|csv|tsv (for programs: one record per row, numbers as
numbers at full precision; default md), --output FILE (default stdout; written whole or not at all)
Exit status: 0 done; 2 bad input (a missing or malformed file, an unknown column or name, absent
data: nothing written); 1 another failure (e.g. gnuplot).
)";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void emit(const std::string& text, const std::string& output) {
  if (output.empty())
    std::cout << text;
  else
    write_atomically(output, text);
}

// What a command produces, written by run(): its tables in `format` (or, as JSON records, handed to the
// caller's sink: Session::tables), or text it made itself; nothing for a command that writes its own files.
struct Output {
  std::vector<Table> tables;
  Format format = Format::markdown;
  std::optional<std::string> text;
};

Output tables_out(std::vector<Table> tables, const po::variables_map& vm) {
  return {std::move(tables), parse_format(vm["format"].as<std::string>()), std::nullopt};
}

po::options_description options() {
  po::options_description o("Options");
  auto add = o.add_options();
  add("help,h", "this help");
  add("version", "the git revision this tool was built from");
  add("format", po::value<std::string>()->default_value("md"),
      "md or latex (tables to read), json, csv or tsv (records a program reads: numbers as numbers)");
  add("output,o", po::value<std::string>()->default_value(""),
      "write here (whole or not at all), not stdout");
  add("by", po::value<std::string>(),
      "summary: group by these columns (default algorithm,variant,params,m,n,k,scope)");
  add("sort", po::value<std::string>()->default_value(""), "summary: sort by these columns");
  add("all", po::bool_switch(), "summary: keep skipped and failed rows");
  add("best", po::bool_switch(), "scaling: only each shape's fastest lab row and cuBLASMp row of each engine");
  add("baseline", po::value<std::string>(),
      "compare: ALG[:variant[:params]], or best:SPEC,SPEC... (at each problem the fastest FP32 row of "
      "those yardsticks, e.g. best:cublas,cutlass); headline: ALG (default cublas)");
  add("run", po::value<std::string>()->default_value("latest"),
      "compare, summary, plot ratio: which run: latest (per configuration, its last row), all, or a run "
      "(the run_id without its -i)");
  add("margin", po::value<double>()->default_value(0.02, "0.02"),
      "compare: the practical margin, a fraction: faster / slower beyond it, equivalent within it");
  add("family", po::value<std::string>()->default_value("problem"),
      "compare: the multiple-comparison family Holm adjusts within: problem (each shape, scope, L2 "
      "setting and run) or table");
  add("cycles", po::bool_switch(), "compare: in SM clock cycles (ms x the clock sampled after each trial)");
  add("metric", po::value<std::string>()->default_value("gpu"),
      "compare: gpu (the GPU's time of each trial), host (the host's time to enqueue its work: a library's "
      "heuristics, a dispatcher's models, the launches) or sum (both; schema 7 rows)");
  add("baseline-scope", po::value<std::string>()->default_value(""),
      "compare: the baseline's rows at this scope (e.g. kernel: in-core cuBLAS) against every "
      "configuration at the same shape, whatever its scope (out-of-core rows are end_to_end)");
  add("across-runs", po::bool_switch(),
      "compare: every run in the files, one estimate per configuration with the run-to-run spread");
  add("size", po::value<std::string>()->default_value(""),
      "compare: only these shapes; headline, plot blocks: one; model --fit: the shapes fitted on");
  add("fit", po::value<std::string>()->default_value(""),
      "model: fit the model's factors to these files' rows (FILE,FILE...; --size: only those shapes) and "
      "judge it on the rows of FILE... it was not fitted on");
  add("level", po::value<double>()->default_value(0.95, "0.95"), "compare: confidence level, in (0, 1)");
  add("resamples", po::value<int>()->default_value(4000), "compare: bootstrap resamples (>= 100)");
  add("seed", po::value<unsigned long long>()->default_value(1), "compare: bootstrap seed");
  add("bad-samples", po::value<std::string>()->default_value(kBadSamplesNames[0]),
      "a row whose samples do not match it (a trial missing, repeated or extra): error (exit 2, naming file "
      "and line) or leave-out (the row is left out, the reason on stderr)");
  add("data", po::value<std::string>()->default_value("data"), "tables, readme: the results folder");
  add("out-dir", po::value<std::string>()->default_value("results/tables"), "tables: where to write them");
  add("readme", po::value<std::string>()->default_value("README.md"),
      "readme: the file whose section is filled");
  add("reports", po::value<std::string>()->default_value("docs/results"), "readme: where the reports go");
  add("title", po::value<std::string>()->default_value(""), "plot: title");
  add("scope", po::value<std::string>()->default_value("kernel"), "plot: the scope of the rows plotted");
  add("inputs", po::value<std::string>()->default_value(""),
      "plot: the inputs of the rows plotted (default uniform; frontier: all)");
  add("engine-gflops", po::value<std::string>()->default_value("cublas=51400"),
      "model: each engine's local rate per GPU, NAME=GFLOPS,... (cuBLAS SGEMM on an H100: 51400)");
  add("nvlink-gbs", po::value<double>()->default_value(358), "model: GB/s per GPU within an NVLink domain");
  add("fabric-gbs", po::value<double>()->default_value(50), "model: GB/s per GPU between domains (InfiniBand)");
  add("domain", po::value<int>()->default_value(8), "model: GPUs per NVLink domain");
  add("gpu-memory", po::value<double>()->default_value(80), "model: GB per GPU (grids needing more are left out)");
  add("step-ms", po::value<double>()->default_value(0), "model: a fixed cost per step, ms");
  add("sizes", po::value<std::string>()->default_value("8192,16384,32768,65536,131072"), "model: the sizes N");
  add("gpus", po::value<std::string>()->default_value("4,8,16,32,64,128,256,512,1024,2048,4096"),
      "model: the GPU counts");
  add("plot", po::value<std::string>()->default_value(""), "model: also draw the predicted winners here (.svg/.png)");
  add("error", po::value<std::string>()->default_value("max_sumabs_err"),
      "plot frontier: the error column on the x axis (max_sumabs_err, mean_sumabs_err, max_rel_err)");
  return o;
}

using Args = std::vector<std::string>;

// The commands that read each option: `<command> --help` lists these only ("" : every command).
const std::map<std::string, std::string> kOptionCommands = {
    {"help", ""}, {"version", ""}, {"format", ""}, {"output", ""}, {"bad-samples", ""},
    {"by", "summary"}, {"sort", "summary"}, {"all", "summary"}, {"best", "scaling"},
    {"baseline", "compare,headline,scaling,frontier,plot"}, {"run", "compare,summary,plot"},
    {"margin", "compare"}, {"family", "compare"}, {"cycles", "compare"}, {"metric", "compare"},
    {"baseline-scope", "compare"}, {"across-runs", "compare"}, {"size", "compare,headline,frontier,plot,model"},
    {"level", "compare"}, {"resamples", "compare,scaling"}, {"seed", "compare"}, {"data", "tables,readme"},
    {"out-dir", "tables"}, {"readme", "readme"}, {"reports", "readme"}, {"title", "plot"}, {"scope", "plot"},
    {"inputs", "plot"}, {"error", "plot"}, {"engine-gflops", "model"}, {"nvlink-gbs", "model"},
    {"fabric-gbs", "model"}, {"domain", "model"}, {"gpu-memory", "model"}, {"step-ms", "model"},
    {"sizes", "model"}, {"gpus", "model"}, {"plot", "model"}, {"fit", "model"}};

po::options_description options_of(const po::options_description& all, const std::string& command) {
  po::options_description out("Options of " + command);
  for (const auto& o : all.options()) {
    const auto it = kOptionCommands.find(o->long_name());
    if (it == kOptionCommands.end() || it->second.empty() ||
        ("," + it->second + ",").find("," + command + ",") != std::string::npos)
      out.add(o);
  }
  return out;
}

// A plot's file: a bare name goes under results/ (as the runs' CSVs do), a path as given.
std::string plot_path(const std::string& out) {
  return fs::path(out).has_parent_path() ? out : (fs::path("results") / out).string();
}

// The results files of a command, read as --bad-samples says.
std::vector<Result> load(const Args& files, bool samples, const po::variables_map& vm) {
  return load_results(files, samples, bad_samples_option(vm["bad-samples"].as<std::string>()));
}

std::string baseline_or_cublas(const po::variables_map& vm) {
  return vm.count("baseline") ? vm["baseline"].as<std::string>() : "cublas";
}

Output summary_command(Args& args, const po::variables_map& vm) {
  const std::string by = vm.count("by") ? vm["by"].as<std::string>() : "algorithm,variant,params,m,n,k,scope";
  const auto rows = select_run(load(args, false, vm), vm["run"].as<std::string>());
  bool pooled = false;
  {
    std::set<std::vector<std::string>> seen;
    for (const Result& r : rows) {
      std::vector<std::string> key;
      for (const auto& c : split(by)) key.push_back(r.get(c));
      pooled = pooled || !seen.insert(key).second;
    }
  }
  const auto with_samples = pooled ? select_run(load(args, true, vm), vm["run"].as<std::string>()) : rows;
  return tables_out({summary(with_samples, split(by), split(vm["sort"].as<std::string>()), vm["all"].as<bool>())}, vm);
}

// The rows as this reader reads them: one CSV of this schema's columns, older files' rows upgraded
// (what their version lacked filled as the analysis fills it, `schema` still the version each row was
// written in), after the reader's checks (a torn row, a foreign file or a row of another version is an
// error); with --format json, typed records (numbers as numbers) with each column's type: what
// Python's mmlab.read builds its frames from, one reader of results, here.
Output rows_command(Args& args, const po::variables_map& vm) {
  const auto rows = load(args, false, vm);
  if (parse_format(vm["format"].as<std::string>()) == Format::json) {  // typed records, with the columns' types
    Table t;
    t.title = "rows";
    std::vector<bool> numeric;  // asked once a column, not once a cell
    for (const mmlab::Column& c : mmlab::kResultColumns) {
      t.fields.push_back(c.name);
      t.types.push_back(mmlab::column_type_name(c.type));
      numeric.push_back(mmlab::numeric_column(c.name));
    }
    for (const Result& r : rows) {  // a number as the reader read it, text as the file holds it
      std::vector<Value> record;
      record.reserve(numeric.size());
      for (std::size_t i = 0; i < numeric.size(); ++i) {
        if (numeric[i]) {
          record.push_back(r.numbers[i] ? Value(*r.numbers[i]) : Value());
          continue;
        }
        const auto it = r.fields.find(mmlab::kResultColumns[i].name);
        record.push_back(Value(it == r.fields.end() ? std::string() : it->second));
      }
      t.records.push_back(std::move(record));
    }
    return {{std::move(t)}, Format::json, std::nullopt};
  }
  std::string text;
  for (const std::string& c : mmlab::result_columns()) text += (text.empty() ? "" : ",") + mmlab::csv_escape(c);
  text += "\n";
  for (const Result& r : rows) {
    bool first = true;
    for (const std::string& c : mmlab::result_columns()) {
      const auto it = r.fields.find(c);
      text += (first ? "" : ",") + mmlab::csv_escape(it == r.fields.end() ? std::string() : it->second);
      first = false;
    }
    text += "\n";
  }
  return {{}, Format::csv, std::move(text)};
}

// One CSV as records (--format json: typed): a samples file's columns typed by the samples schema (a
// cell that is not a number is an error naming the file, row and column), any other program's table
// as text. With `rows`, what Python's mmlab.read builds every frame from: no CSV is parsed there.
Output records_command(Args& args, const po::variables_map& vm) {
  if (args.size() != 1) throw AnalysisError("records: one FILE (a results file: mmlab-analyze rows)");
  return tables_out({records(args.front())}, vm);
}

Output compare_command(Args& args, const po::variables_map& vm) {
  if (!vm.count("baseline")) throw AnalysisError("compare: --baseline ALG[:variant[:params]] is required");
  CompareOptions o;
  o.baseline = vm["baseline"].as<std::string>();
  o.level = vm["level"].as<double>();
  o.resamples = vm["resamples"].as<int>();
  o.seed = vm["seed"].as<unsigned long long>();
  o.sizes = split(vm["size"].as<std::string>());
  o.run = vm["run"].as<std::string>();
  o.margin = vm["margin"].as<double>();
  o.family = vm["family"].as<std::string>();
  o.cycles = vm["cycles"].as<bool>();
  o.metric = vm["metric"].as<std::string>();
  o.across_runs = vm["across-runs"].as<bool>();
  if (const std::string scope = vm["baseline-scope"].as<std::string>(); !scope.empty()) o.baseline_scope = scope_option(scope, "compare: --baseline-scope");
  check(o);
  return tables_out({compare(load(args, true, vm), o)}, vm);
}

Output headline_command(Args& args, const po::variables_map& vm) {
  if (vm["size"].as<std::string>().empty()) throw AnalysisError("headline: --size N is required");
  return tables_out({headline(load(args, false, vm), vm["size"].as<std::string>(), baseline_or_cublas(vm))}, vm);
}

Output frontier_command(Args& args, const po::variables_map& vm) {
  return tables_out({frontier(load(args, false, vm), split(vm["size"].as<std::string>()), baseline_or_cublas(vm))}, vm);
}

Output scaling_command(Args& args, const po::variables_map& vm) {
  return tables_out({scaling(load(args, true, vm), vm.count("baseline") ? vm["baseline"].as<std::string>() : "",
                             vm["resamples"].as<int>(), vm["best"].as<bool>())},
                    vm);
}

Output model_command(Args& args, const po::variables_map& vm) {
  Machine m;
  m.engines = parse_engines(vm["engine-gflops"].as<std::string>());
  m.nvlink_gbs = vm["nvlink-gbs"].as<double>(), m.fabric_gbs = vm["fabric-gbs"].as<double>();
  m.domain = vm["domain"].as<int>(), m.memory_bytes = vm["gpu-memory"].as<double>() * 1e9;
  m.step_ms = vm["step-ms"].as<double>();
  if (!(m.nvlink_gbs > 0) || !(m.fabric_gbs > 0) || m.domain < 1 || !(m.memory_bytes > 0) || m.step_ms < 0)
    throw AnalysisError("model: --nvlink-gbs, --fabric-gbs, --domain and --gpu-memory must be positive, --step-ms >= 0");
  std::vector<long> sizes;
  std::vector<int> gpus;
  try {
    for (const std::string& s : split(vm["sizes"].as<std::string>()))
      sizes.push_back(mmlab::parse_integer(s, "--sizes"));
    for (const std::string& s : split(vm["gpus"].as<std::string>()))
      gpus.push_back(int(mmlab::parse_bounded(s, "--gpus", 1, 65536)));
  } catch (const mmlab::UsageError& e) {
    throw AnalysisError(e.what());
  }
  if (sizes.empty() || gpus.empty()) throw AnalysisError("model: --sizes and --gpus need at least one value");
  std::vector<Table> tables;
  if (const std::string fit = vm["fit"].as<std::string>(); !fit.empty()) {
    if (args.empty()) throw AnalysisError("model --fit: name the files to judge it on too");
    const std::vector<std::string> shapes = split(vm["size"].as<std::string>());
    std::vector<Result> fitted_on;
    std::set<std::string> ids;
    for (Result& r : load(split(fit), false, vm))
      if (shapes.empty() || std::find(shapes.begin(), shapes.end(), r.dims()) != shapes.end()) {
        ids.insert(r.run_id);
        fitted_on.push_back(std::move(r));
      }
    std::vector<Result> judged;
    for (Result& r : load(args, false, vm))
      if (!ids.count(r.run_id)) judged.push_back(std::move(r));
    tables.push_back(model_judged(judged, fit_model(fitted_on)));
  } else if (!args.empty()) {
    tables.push_back(model_validation(load(args, false, vm)));
  }
  tables.push_back(model_prediction(sizes, gpus, m));
  if (const std::string plot = vm["plot"].as<std::string>(); !plot.empty()) {
    plot_winners(tables.back(), plot_path(plot), "the predicted winner over GPUs and N");
    std::cerr << "mmlab-analyze: wrote " << plot_path(plot) << "\n";
  }
  return tables_out(std::move(tables), vm);
}

Output table_command(Args& args, const po::variables_map& vm) {
  if (args.empty()) throw AnalysisError("table: name the table, then the result files");
  const std::string name = args.front();
  find_paper_table(name);
  args.erase(args.begin());
  return tables_out(build_paper_table(name, load(args, false, vm)), vm);
}

Output tables_command(Args&, const po::variables_map& vm) {
  const Format format = parse_format(vm["format"].as<std::string>());
  const std::string data = vm["data"].as<std::string>(), out_dir = vm["out-dir"].as<std::string>();
  int written = 0;
  for (const PaperTable& p : paper_tables()) {
    std::vector<std::string> inputs;
    for (const std::string& d : p.data) inputs.push_back((fs::path(data) / d).string());
    if (!std::all_of(inputs.begin(), inputs.end(), [](const std::string& x) { return fs::exists(x); })) {
      std::cerr << "mmlab-analyze: " << p.name << ": no data under " << data << "/, skipped\n";
      continue;
    }
    const std::string ext = format == Format::csv     ? ".csv"
                            : format == Format::tsv   ? ".tsv"
                            : format == Format::json  ? ".json"
                            : format == Format::latex ? ".tex"
                                                      : ".md";
    const std::string path = (fs::path(out_dir) / (p.name + ext)).string();
    write_atomically(path, render_all(build_paper_table(p.name, load(inputs, false, vm)), format));
    std::cerr << "mmlab-analyze: " << path << "\n";
    ++written;
  }
  if (written == 0) throw AnalysisError("tables: no table has data under " + data + "/");
  return {};
}

Output plot_command(Args& args, const po::variables_map& vm) {
  if (args.size() < 2) throw AnalysisError("plot: give KIND and result files");
  const PlotKind kind = parse_plot_kind(args.front());
  args.erase(args.begin());
  const std::string out = vm["output"].as<std::string>();
  if (out.empty()) throw AnalysisError("plot: -o OUT.svg|png is required");
  PlotOptions o;
  o.title = vm["title"].as<std::string>();
  o.shape = vm["size"].as<std::string>();
  o.scope = scope_option(vm["scope"].as<std::string>(), "plot: --scope");
  if (vm.count("baseline")) o.baseline = vm["baseline"].as<std::string>();
  o.inputs = vm["inputs"].as<std::string>();
  o.error = vm["error"].as<std::string>();
  if (o.error != "max_sumabs_err" && o.error != "mean_sumabs_err" && o.error != "max_rel_err")
    throw AnalysisError("plot: --error '" + o.error +
                        "' (valid: max_sumabs_err, mean_sumabs_err, max_rel_err)");
  if (kind == PlotKind::frontier && !o.shape.empty()) o.shapes = split(o.shape);
  std::vector<Result> rows;
  if (kind == PlotKind::ratio) {  // pairs within one run of each file
    for (const std::string& file : args)
      for (Result& r : select_run(load({file}, false, vm), vm["run"].as<std::string>()))
        rows.push_back(std::move(r));
  } else {
    rows = load(args, false, vm);
  }
  plot(kind, rows, plot_path(out), o);
  std::cerr << "mmlab-analyze: wrote " << plot_path(out) << "\n";
  return {};
}

Output readme_command(Args&, const po::variables_map& vm) {
  regenerate(vm["data"].as<std::string>(), vm["readme"].as<std::string>(), vm["reports"].as<std::string>());
  std::cerr << "mmlab-analyze: wrote the headline of " << vm["readme"].as<std::string>()
            << " and the reports in " << vm["reports"].as<std::string>() << "/\n";
  return {};
}

// The commands: name, the help that `mmlab-analyze --help` lists (and `<command> --help` prints
// alone), and the handler, which receives the arguments after the name.
struct Command {
  const char* name;
  const char* usage;
  Output (*handler)(Args&, const po::variables_map&);
};

const Command kCommands[] = {
    {"summary",
     R"(  summary FILE...              trial statistics per configuration, grouped and sorted as asked
                               (--by COLUMNS, --sort COLUMNS, --all to keep skipped/failed rows);
                               rows sharing a group are pooled from their raw samples
)",
     summary_command},
    {"rows",
     R"(  rows FILE...                 the rows as this reader reads them: one CSV of this schema's
                               columns (--format json: typed records), older files upgraded
                               (`schema`: the version each row was written in), after its checks
                               (what mmlab.read builds frames from)
)",
     rows_command},
    {"records",
     R"(  records FILE                 one CSV as records (--format json: typed): a samples file's columns
                               as the samples schema types them, any other table's cells as text
                               (what mmlab.read builds samples' and other tables' frames from)
)",
     records_command},
    {"compare", R"(  compare FILE... --baseline ALG[:variant[:params]]
                               every other configuration at the baseline's sizes, estimate first:
                               the speed-up with a distribution-free CI (paired by round where the
                               trials were interleaved), a verdict against --margin (faster, slower,
                               equivalent, or inconclusive with the trials that would decide it),
                               and the test (Wilcoxon signed-rank or Mann-Whitney U) Holm-adjusted
                               within --family; --metric gpu|host|sum compares the GPU's time
                               (default), the host's time to enqueue the work, or both;
                               --cycles compares clock cycles, --across-runs combines the runs in
                               the files, --baseline-scope S takes the baseline at scope S against
                               every scope (--size SHAPES, --run, --level)
)",
     compare_command},
    {"headline",
     R"(  headline FILE... --size N    each algorithm's best configuration at N vs the baseline (--baseline,
                               default cublas) measured with it, per L2 setting
)",
     headline_command},
    {"scaling",
     R"(  scaling FILE...              distributed rows against their own engine on one GPU in the same
                               job (cublas:default, cublas:tf32, flagship:tensor_cores; --baseline
                               ALG[:variant[:params]] names one for all): speed-up (CI), efficiency,
                               at equal clocks, x FP32 cuBLAS, x cuBLASMp, time / bound, GFLOP/J,
                               layout, compute/communication/waiting, overlap, measured vs the model;
                               --best: each shape's fastest lab and cuBLASMp row of each engine
)",
     scaling_command},
    {"frontier",
     R"(  frontier FILE...             accuracy and speed: per problem (size and inputs), each algorithm and
                               variant's fastest configuration, TFLOP/s and error (error relative
                               to sum |a b|, max_rel_err), both against --baseline's FP32 row
                               (default cublas) in the same file (--size SHAPES)
)",
     frontier_command},
    {"model",
     R"(  model [FILE...]              the distributed algorithms' model: against every measured distributed
                               row of the FILEs (measured / predicted with the row's own rates),
                               then predicted for --engine-gflops, --sizes, --gpus and a machine of
                               NVLink domains (--domain, --nvlink-gbs) joined by a fabric
                               (--fabric-gbs): each decomposition's best grid and the winner;
                               --plot OUT draws the winners over (GPUs, N)
)",
     model_command},
    {"table",
     R"(  table NAME FILE...           a paper's table in its own layout, the paper's figures beside mmlab's
)",
     table_command},
    {"tables", R"(  tables [--data DIR] [--out-dir DIR]
                               every paper table that has data under DIR (default data/)
)",
     tables_command},
    {"plot", R"(  plot KIND FILE... -o OUT     KIND: size (GFLOP/s vs n, log-x), blocks (per configuration at
                               --size, default the largest), roofline, scaling (speed-up vs GPUs),
                               ratio (speed-up over --baseline, default cublas, vs m n k),
                               frontier (TFLOP/s vs --error, default max_sumabs_err, of each
                               algorithm and variant's fastest row, a panel per problem: --size
                               SHAPES picks them); rows of --inputs (default uniform; frontier:
                               all); OUT: .svg or .png (a bare name goes under results/)
)",
     plot_command},
    {"readme", R"(  readme [--data DIR] [--readme FILE] [--reports DIR]
                               one report per experiment (DIR/<experiment>.md, default docs/results)
                               and README's headline (between its markers), from the files that
                               DATA/headline.txt names
)",
     readme_command},
};

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

void print_help(const po::options_description& opts) {
  std::cout << kUsage << "\nCommands:\n";
  for (const Command& c : kCommands) std::cout << c.usage;
  std::cout << kCommon << "\nTables: ";
  for (const PaperTable& t : paper_tables()) std::cout << "\n  " << t.name << ": " << t.description;
  std::cout << "\n\n" << opts;
}

int run(int argc, char** argv, mmlab::analysis::Session& session) {
  po::options_description opts = options();
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>(), "");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  } catch (const po::error& e) {
    throw AnalysisError(e.what());
  }
  Args args = vm.count("args") ? vm["args"].as<Args>() : Args{};
  if (vm.count("version")) {
    std::cout << "mmlab-analyze " << mmlab::git_revision() << "\n";
    return 0;
  }
  if (args.empty()) {
    print_help(opts);
    return vm.count("help") ? 0 : 2;
  }
  const Command* command = find_command(args.front());
  if (!command) throw AnalysisError("unknown command '" + args.front() + "' (see mmlab-analyze --help)");
  args.erase(args.begin());
  if (vm.count("help")) {
    const std::string usage = command->usage;
    std::cout << "usage: mmlab-analyze " << usage.substr(usage.find_first_not_of(' ')) << kCommon << "\n"
              << options_of(opts, command->name);
    return 0;
  }
  parse_format(vm["format"].as<std::string>());  // a bad --format is an error for every command
  const Output out = command->handler(args, vm);
  if (session.tables && out.format == Format::json && !out.tables.empty()) {  // records to the caller, no text
    for (const Table& t : out.tables) send(t, *session.tables);
  } else if (out.text || !out.tables.empty()) {
    emit(out.text ? *out.text : render_all(out.tables, out.format), vm["output"].as<std::string>());
  }
  return 0;
}

}  // namespace

namespace mmlab::analysis {

int cli(int argc, char** argv, Session* session) {
  Session own;
  Session& s = session ? *session : own;
  s.error.clear();
  try {
    return ::run(argc, argv, s);
  } catch (const std::exception& e) {
    s.error = e.what();
    const int status = exit_status_of(e);
    std::cerr << "mmlab-analyze: " << (status == MMLAB_BAD_INPUT ? "error: " : "fatal: ") << e.what() << "\n";
    return status;
  }
}

}  // namespace mmlab::analysis
