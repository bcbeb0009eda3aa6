// mmlab: the command-line entry point. `mmlab list`, `mmlab run` and `mmlab terms`; see `mmlab
// --help`. The one place that knows which algorithms the program has: it joins algorithms/ and
// distributed/'s lists into the Registry it hands to the harness.
#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

#include "core/distributed.hpp"
#include "core/plugin.hpp"
#include "core/revision.hpp"
#include "distributed/registry.hpp"
#include "harness/options.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "harness/terms.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/job.hpp"

namespace {

// The plugins named on the command line or in the experiment file, loaded before anything else is
// read (their algorithms' axes are options), and kept for the life of the program.
std::vector<std::shared_ptr<const mmlab::Plugin>>& plugins() {
  static std::vector<std::shared_ptr<const mmlab::Plugin>> loaded;
  return loaded;
}

const mmlab::Registry& lab() {
  static const mmlab::Registry registry =
      mmlab::lab_registry(plugins());
  return registry;
}

// argv without its --plugin arguments, the plugins loaded (before lab() is first asked for); with
// `experiment`, also those of the experiment file a first argument names.
std::vector<char*> load_plugins(int argc, char** argv, std::vector<std::string>& storage, bool experiment = true) {
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const std::string& path : mmlab::take_plugin_paths(args, experiment))
    plugins().push_back(mmlab::Plugin::load(path));
  storage = args;
  std::vector<char*> out = {argv[0], argv[1]};
  for (std::string& a : storage) out.push_back(a.data());
  return out;
}

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int sig) {
  if (g_interrupted.exchange(true)) {  // a second Ctrl-C: stop at once (rows are already whole)
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
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
    "usage: mmlab list [--plugin LIB.so] [ALGORITHM...]\n\n"
    "Each algorithm (all without names): where it runs, its summary and source, its variants (on request,\n"
    "deterministic or not), its parameter axes with their values and defaults, the configurations its\n"
    "kernels were compiled for and its limits.\n\n"
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

int list(int argc, char** argv) {
  std::vector<std::string> names;
  if (!plain_arguments(argc, argv, kListUsage, names)) return 0;
  std::vector<const mmlab::Algorithm*> which;
  for (const std::string& name : names) {
    const mmlab::Algorithm* a = lab().find(name);
    if (!a) throw mmlab::UsageError("unknown algorithm '" + name + "' (valid: " + lab().names() + ")");
    which.push_back(a);
  }
  if (which.empty()) which = lab().all();
  for (const mmlab::Algorithm* a : which) {
    std::cout << a->name << "  ("
              << (a->backend == mmlab::Backend::device ? "GPU"
                  : a->backend == mmlab::Backend::host ? "host CPU"
                  : a->backend == mmlab::Backend::streamed
                      ? "GPU, operands in host memory, timed host to host"
                      : "MPI ranks: GPUs over NCCL or the copy engines, or CPUs over MPI")
              << ", " << (a->plugin_hash.empty() ? "" : "plugin ") << a->source << ")\n  " << a->summary
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
    std::cout << "\n";
  }
  return 0;
}

const char* kTermsUsage =
    "usage: mmlab terms [--plugin LIB.so] RESULTS.csv [RESULTS.csv ...]\n\n"
    "For each row of an algorithm with a linear cost model (algorithms/models/: ms = c0 + c1 f1 + c2 f2 +\n"
    "c3 f3): its file and line, the resolved configuration, m, n, k, the fitted row that prices it, the\n"
    "terms f1, f2, f3, the row's coefficients and the model's time (empty where the configuration has no\n"
    "fitted row), as CSV on standard output. Priced on the H100's description with the row's SM count,\n"
    "without a GPU. scripts/fit-flagship and scripts/pick-regret read it.\n\n"
    "Example: mmlab terms data/flagship/streamk/training.csv > terms.csv\n";

int terms(int argc, char** argv) {
  std::vector<std::string> files;
  if (!plain_arguments(argc, argv, kTermsUsage, files)) return 0;
  if (files.empty()) throw mmlab::UsageError("terms: name at least one results file (mmlab terms --help)");
  mmlab::write_model_terms(files, lab(), std::cout);
  return 0;
}

bool uses_gpus(const mmlab::Configuration& c) {
  if (c.algorithm->backend == mmlab::Backend::device || c.algorithm->backend == mmlab::Backend::streamed)
    return true;
  return c.algorithm->backend == mmlab::Backend::distributed && c.params.has("engine") &&
         c.params.text("engine") != "eigen";
}

// Under mpirun: one GPU per rank, chosen by the node-local rank; every rank takes the same plan,
// and a sweep none of whose grids uses this many ranks is an error on every rank.
mmlab::DeviceInfo job_device(mmlab::RunPlan& plan, bool device_given) {
  const mmlab::Job& j = mmlab::job();
  bool gpus = false, distributed = false, fits = false;
  std::set<std::string> grids;
  for (const mmlab::Configuration& c : plan.configurations) {
    gpus = gpus || uses_gpus(c);
    if (c.algorithm->backend != mmlab::Backend::distributed) continue;
    distributed = true;
    const mmlab::Grid g = mmlab::parse_grid(c.params.text("grid"));
    grids.insert(g.text());
    fits = fits || g.volume() == j.size;
  }
  if (j.size > 1 && !distributed)
    throw mmlab::UsageError(
        "launched on " + std::to_string(j.size) +
        " ranks, but the sweep has no distributed algorithm (dist_cannon, dist_summa, dist_dns)");
  if (j.size > 1 && !fits) {
    std::string list;
    for (const auto& g : grids) list += (list.empty() ? "" : ", ") + g;
    throw mmlab::UsageError("no grid of the sweep (" + list + ") uses " + std::to_string(j.size) +
                            " ranks; run with mpirun -np <rows x cols x layers>");
  }
  if (j.size > 1 && !device_given) plan.device = j.local_rank;
  try {
    return mmlab::query_device(plan.device);
  } catch (const mmlab::CudaError& e) {
    if (gpus && j.size > 1)
      throw mmlab::UsageError(std::to_string(j.local_size) + " ranks on this node, more than its GPUs (" +
                              e.what() + "); launch one rank per GPU, or --device 0 to put every rank on "
                              "GPU 0 (transport copy_engine runs; NCCL refuses ranks that share a GPU)");
    if (gpus) throw;
    mmlab::DeviceInfo none;
    none.absent_reason = "this rank has no GPU of its own";
    return none;
  }
}

// `mmlab run`: its plugins, options, plan and GPU, each rank's own; under mpirun every rank's errors
// are agreed on before any rank goes on (a GPU absent or a plugin missing on one host ends every rank
// with that rank's message), then where the ranks' GPUs are, then the runs.
int run(int argc, char** argv) {
  mmlab::RunPlan plan;
  mmlab::DeviceInfo device;
  std::string error;
  bool help = false;
  try {
    std::vector<std::string> storage;
    std::vector<char*> args = load_plugins(argc, argv, storage);
    const mmlab::Settings cli = mmlab::parse_command_line(int(args.size()) - 1, args.data() + 1, lab());
    help = cli.count("help") > 0;
    if (!help) {
      mmlab::Settings file;
      if (cli.count("experiment")) file = mmlab::parse_experiment_file(cli.at("experiment"), lab());
      plan = mmlab::make_plan(cli, file, lab());
      device = job_device(plan, cli.count("device") || file.count("device"));
    }
  } catch (const mmlab::UsageError& e) {
    error = e.what();
  }
  mmlab::agree_on_errors(error);
  if (help) {
    std::cout << mmlab::run_help(lab());
    return 0;
  }
  mmlab::set_placement(mmlab::find_placement(device));
  mmlab::set_rank_timeout(plan.rank_timeout_s);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return mmlab::execute(plan, device, g_interrupted);
}

}  // namespace

int dispatch(int argc, char** argv);

int main(int argc, char** argv) {
  mmlab::init_job(&argc, &argv);
  const int status = dispatch(argc, argv);
  mmlab::finalize_job();
  return status;
}

int dispatch(int argc, char** argv) {
  const bool speaks = mmlab::job().rank == 0;  // under mpirun, rank 0 alone reports errors
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "run") return run(argc, argv);
    if (command == "list") {
      std::vector<std::string> storage;
      std::vector<char*> args = load_plugins(argc, argv, storage);
      return list(int(args.size()), args.data());
    }
    if (command == "terms") {
      std::vector<std::string> storage;
      std::vector<char*> args = load_plugins(argc, argv, storage, false);
      return terms(int(args.size()), args.data());
    }
    if (command == "--version") {
      std::cout << "mmlab " << mmlab::git_revision() << "\n";
      return 0;
    }
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << (command.empty() ? "mmlab: no command given\n"
                                  : "mmlab: unknown command '" + command + "'\n")
              << kUsage;
    return 2;
  } catch (const mmlab::IoError& e) {  // an output could not be written: rows already written stay whole
    mmlab::end_progress_line();
    std::cerr << "mmlab: error: " << e.what() << "\n";
    if (mmlab::job().size > 1) mmlab::abort_job(3);
    return 3;
  } catch (const mmlab::UsageError& e) {  // every rank reads the same input: every rank ends here
    if (speaks) std::cerr << "mmlab: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    mmlab::end_progress_line();
    std::cerr << "mmlab: fatal"
              << (mmlab::job().size > 1 ? " (rank " + std::to_string(mmlab::job().rank) + ")" : "") << ": "
              << e.what() << "\n";
    if (mmlab::job().size > 1) mmlab::abort_job(1);  // the others may be waiting in a collective
    return 1;
  }
}
