// mmlab's commands: `mmlab list`, `mmlab run` and `mmlab terms` (see `mmlab --help`), for the program
// (harness/main.cpp) and the lab's C API (api/lab.cpp), each of which hands in the lab's algorithms.
#include "harness/cli.hpp"

#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/distributed.hpp"
#include "core/exit_status.hpp"
#include "core/json.hpp"
#include "core/plugin.hpp"
#include "core/revision.hpp"
#include "harness/options.hpp"
#include "harness/pipelines.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "harness/terms.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/job.hpp"

namespace {

// The plugins a command's --plugin options (and, with `experiment`, the experiment file a first argument
// names) list, loaded into the lab; argv without those options.
std::vector<char*> load_plugins(mmlab::Lab& lab, int argc, char** argv, std::vector<std::string>& storage,
                                bool experiment = true) {
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const std::string& path : mmlab::take_plugin_paths(args, experiment)) lab.load_plugin(path);
  storage = args;
  std::vector<char*> out = {argv[0], argv[1]};
  for (std::string& a : storage) out.push_back(a.data());
  return out;
}

const char* kUsage =
    "usage: mmlab <command> [options]\n\n"
    "Commands:\n"
    "  list [ALGORITHM...]           algorithms, their variants and parameter axes\n"
    "  run [EXPERIMENT.ini] [opts]   sweep, verify and time; append rows to a CSV\n"
    "                                (`mmlab run --help` for every option)\n"
    "  terms RESULTS.csv...          each row's cost-model terms and modelled time, as CSV\n"
    "  --help, --version\n\n"
    "Example: mmlab run experiments/quick.ini\n";

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const char* kListUsage =
    "usage: mmlab list [--plugin LIB.so] [--format text|json] [ALGORITHM...]\n\n"
    "Each algorithm (all without names): where it runs, its summary and source, its variants (on request,\n"
    "deterministic or not), its parameter axes with their values and defaults, the configurations its\n"
    "kernels were compiled for and its limits. --format json: the same as one JSON array, an object per\n"
    "algorithm (what the Python package's mmlab.algorithms() reads).\n\n"
    "Example: mmlab list flagship cublas\n";

// A command's arguments after argv[1], none of them an option (--plugin is already taken out);
// false when --help was asked (its usage printed).
bool plain_arguments(int argc, char** argv, const char* usage, std::vector<std::string>& out) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return false;
    }
    if (!arg.empty() && arg[0] == '-')
      throw mmlab::UsageError(std::string(argv[1]) + ": unknown option '" + arg + "' (mmlab " + argv[1] +
                              " --help)");
    out.push_back(arg);
  }
  return true;
}

int list(const mmlab::Registry& lab, int argc, char** argv) {
  std::vector<std::string> names;
  std::vector<char*> args = {argv[0], argv[1]};
  std::string format = "text";
  for (int i = 2; i < argc; ++i) {  // --format FORMAT or --format=FORMAT; the rest are names
    const std::string arg = argv[i];
    if (arg == "--format" && i + 1 < argc) format = argv[++i];
    else if (arg.rfind("--format=", 0) == 0) format = arg.substr(9);
    else args.push_back(argv[i]);
  }
  if (format != "text" && format != "json")
    throw mmlab::UsageError("list: --format '" + format + "' (valid: text, json)");
  if (!plain_arguments(int(args.size()), args.data(), kListUsage, names)) return 0;
  std::vector<const mmlab::Algorithm*> which;
  for (const std::string& name : names) {
    const mmlab::Algorithm* a = lab.find(name);
    if (!a) throw mmlab::UsageError(lab.unknown(name));
    which.push_back(a);
  }
  if (which.empty()) which = lab.all();
  if (format == "json") {
    mmlab::list_json(which, std::cout);
    return 0;
  }
  for (const mmlab::Algorithm* a : which) {
    std::cout << a->name << "  (" << mmlab::pipeline_of(*a).where << ", " << (a->plugin_hash.empty() ? "" : "plugin ") << a->source << ")\n  " << a->summary
              << "\n";
    std::cout << "  variants:\n";
    for (const auto& v : a->variants)
      std::cout << "    " << v.name << ": " << v.summary
                << (v.on_request ? " (on request: run when named)" : "")
                << (v.nondeterminism.empty() ? " [deterministic]"
                                             : " [not deterministic: " + v.nondeterminism + "]")
                << "\n";
    if (!a->axes.empty()) std::cout << "  axes:\n";
    for (const auto& x : a->axes) {
      std::cout << "    " << x.name << " = " << x.default_value << " (default)  " << x.description
                << "\n      values swept by `all` and the GPU tests: " << join(x.values) << "\n";
      if (!x.on_request.empty()) std::cout << "      on request (run when named): " << join(x.on_request) << "\n";
      if (!x.variants.empty()) std::cout << "      only for variants: " << join(x.variants) << "\n";
    }
    if (!a->constraints.empty()) std::cout << "  constraints: " << a->constraints << "\n";
    if (a->unavailable)
      if (const std::string why = a->unavailable(); !why.empty()) std::cout << "  unavailable here: " << why << "\n";
    std::cout << "\n";
  }
  return 0;
}

const char* kTermsUsage =
    "usage: mmlab terms [--plugin LIB.so] RESULTS.csv [RESULTS.csv ...]\n\n"
    "For each row of an algorithm with a linear cost model (algorithms/models/: ms = c0 + c1 f1 + c2 f2 +\n"
    "c3 f3): its file, line and run_id, the resolved configuration, m, n, k, the fitted row that prices it, the\n"
    "terms f1, f2, f3, the row's coefficients and the model's time (empty where the configuration has no\n"
    "fitted row), as CSV on standard output. Priced on the H100's description with the row's SM count,\n"
    "without a GPU. scripts/fit-flagship and scripts/pick-regret read it.\n\n"
    "Example: mmlab terms data/flagship/streamk/training.csv > terms.csv\n";

int terms(const mmlab::Registry& lab, int argc, char** argv) {
  std::vector<std::string> files;
  if (!plain_arguments(argc, argv, kTermsUsage, files)) return 0;
  if (files.empty()) throw mmlab::UsageError("terms: name at least one results file (mmlab terms --help)");
  std::string note;
  if (mmlab::write_model_terms(files, lab, std::cout, &note) == 0) std::cerr << "mmlab terms: " << note << "\n";
  return 0;
}

// `mmlab run`: its plugins, options and plan (harness/lab.hpp); under mpirun every rank's errors are
// agreed on before any rank goes on.
int run(mmlab::Lab& lab, int argc, char** argv) {
  std::optional<mmlab::Plan> plan;
  std::string error;
  try {
    plan.emplace(mmlab::Plan::from_arguments(lab, std::vector<std::string>(argv + 2, argv + argc)));
  } catch (const mmlab::UsageError& e) {
    error = e.what();
  }
  if (!plan || plan->help()) {  // the same on every rank: agreed on here, as run() agrees on its own
    mmlab::agree_on_errors(error);
    std::cout << mmlab::run_help(lab.catalog()->registry);
    return 0;
  }
  return mmlab::run(*plan, nullptr);
}

}  // namespace

namespace mmlab {

static std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + mmlab::json_string(v[i]);
  return out + "]";
}

void list_json(const std::vector<const Algorithm*>& which, std::ostream& os) {
  using mmlab::json_string;
  os << "[";
  for (std::size_t i = 0; i < which.size(); ++i) {
    const mmlab::Algorithm& a = *which[i];
    os << (i ? ",\n " : "") << "{\"name\": " << json_string(a.name) << ", \"backend\": " << json_string(mmlab::pipeline_of(a).name)
       << ", \"summary\": " << json_string(a.summary) << ", \"source\": " << json_string(a.source)
       << ", \"plugin_hash\": " << json_string(a.plugin_hash) << ", \"constraints\": " << json_string(a.constraints)
       << ", \"unavailable\": " << json_string(a.unavailable ? a.unavailable() : std::string())
       << ", \"variants\": [";
    for (std::size_t j = 0; j < a.variants.size(); ++j) {
      const auto& v = a.variants[j];
      os << (j ? ", " : "") << "{\"name\": " << json_string(v.name) << ", \"summary\": " << json_string(v.summary)
         << ", \"on_request\": " << (v.on_request ? "true" : "false")
         << ", \"deterministic\": " << (v.nondeterminism.empty() ? "true" : "false")
         << ", \"nondeterminism\": " << json_string(v.nondeterminism) << ", \"candidates\": [";
      for (std::size_t c = 0; c < v.candidates.size(); ++c)
        os << (c ? ", " : "") << "{\"algorithm\": " << json_string(v.candidates[c].algorithm)
           << ", \"variant\": " << json_string(v.candidates[c].variant)
           << ", \"params\": " << json_string(v.candidates[c].params) << "}";
      os << "], \"rules\": {";
      for (std::size_t r = 0; r < v.rules.size(); ++r)
        os << (r ? ", " : "") << json_string(v.rules[r].first) << ": " << mmlab::shortest_text(v.rules[r].second);
      os << "}}";
    }
    os << "], \"axes\": [";
    for (std::size_t j = 0; j < a.axes.size(); ++j) {
      const auto& x = a.axes[j];
      os << (j ? ", " : "") << "{\"name\": " << json_string(x.name) << ", \"default\": " << json_string(x.default_value)
         << ", \"description\": " << json_string(x.description) << ", \"values\": " << json_list(x.values)
         << ", \"on_request\": " << json_list(x.on_request) << ", \"variants\": " << json_list(x.variants) << "}";
    }
    os << "]}";
  }
  os << "]\n";
}


int cli(Lab& lab, int argc, char** argv, std::string* message) {
  std::string ignored;
  std::string& error = message ? *message : ignored;
  error.clear();
  const bool speaks = mmlab::job().rank == 0;  // under mpirun, rank 0 alone reports errors
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "run") return ::run(lab, argc, argv);
    if (command == "list") {
      std::vector<std::string> storage;
      std::vector<char*> args = ::load_plugins(lab, argc, argv, storage);
      return ::list(lab.catalog()->registry, int(args.size()), args.data());
    }
    if (command == "terms") {
      std::vector<std::string> storage;
      std::vector<char*> args = ::load_plugins(lab, argc, argv, storage, false);
      return ::terms(lab.catalog()->registry, int(args.size()), args.data());
    }
    if (command == "--version") {
      std::cout << "mmlab " << mmlab::git_revision() << "\n";
      return 0;
    }
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    error = command.empty() ? "no command given" : "unknown command '" + command + "'";
    std::cerr << (command.empty() ? "mmlab: no command given\n"
                                  : "mmlab: unknown command '" + command + "'\n")
              << kUsage;
    return MMLAB_BAD_INPUT;
  } catch (const mmlab::IoError& e) {  // an output could not be written: rows already written stay whole
    mmlab::end_progress_line();
    error = e.what();
    std::cerr << "mmlab: error: " << e.what() << "\n";
    if (mmlab::job().size > 1) mmlab::abort_job(MMLAB_NOT_WRITTEN);
    return MMLAB_NOT_WRITTEN;
  } catch (const mmlab::UsageError& e) {  // every rank reads the same input: every rank ends here
    error = e.what();
    if (speaks) std::cerr << "mmlab: error: " << e.what() << "\n";
    return MMLAB_BAD_INPUT;
  } catch (const std::exception& e) {
    mmlab::end_progress_line();
    error = e.what();
    std::cerr << "mmlab: fatal"
              << (mmlab::job().size > 1 ? " (rank " + std::to_string(mmlab::job().rank) + ")" : "") << ": "
              << e.what() << "\n";
    if (mmlab::job().size > 1) mmlab::abort_job(MMLAB_FAILED);  // the others may be waiting in a collective
    return MMLAB_FAILED;
  }
}

}  // namespace mmlab
