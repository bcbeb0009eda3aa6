// mmlab: the command-line entry point. `mmlab list` and `mmlab run`; see `mmlab --help`.
#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <sstream>

#include "harness/cuda_check.hpp"
#include "harness/options.hpp"
#include "harness/runner.hpp"

namespace mmlab {
const char* git_revision();
}

namespace {

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
    "  --help, --version\n\n"
    "Example: mmlab run experiments/quick.ini\n";

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

int list(int argc, char** argv) {
  std::vector<const mmlab::Algorithm*> which;
  for (int i = 2; i < argc; ++i) {
    const mmlab::Algorithm* a = mmlab::find_algorithm(argv[i]);
    if (!a)
      throw mmlab::UsageError(std::string("unknown algorithm '") + argv[i] +
                              "' (valid: " + mmlab::algorithm_names() + ")");
    which.push_back(a);
  }
  if (which.empty()) which = mmlab::registry();
  for (const mmlab::Algorithm* a : which) {
    std::cout << a->name << "  (" << (a->backend == mmlab::Backend::device ? "GPU" : "host CPU") << ", "
              << a->source << ")\n  " << a->summary << "\n";
    std::cout << "  variants:\n";
    for (const auto& v : a->variants) std::cout << "    " << v.name << ": " << v.summary << "\n";
    if (!a->axes.empty()) std::cout << "  axes:\n";
    for (const auto& x : a->axes) {
      std::cout << "    " << x.name << " = " << x.default_value << " (default)  " << x.description
                << "\n      values swept by `all` and the GPU tests: " << join(x.values) << "\n";
      if (!x.variants.empty()) std::cout << "      only for variants: " << join(x.variants) << "\n";
    }
    if (!a->constraints.empty()) std::cout << "  constraints: " << a->constraints << "\n";
    std::cout << "\n";
  }
  return 0;
}

int run(int argc, char** argv) {
  const mmlab::Settings cli = mmlab::parse_command_line(argc - 1, argv + 1);
  if (cli.count("help")) {
    std::cout << mmlab::run_help();
    return 0;
  }
  mmlab::Settings file;
  if (cli.count("experiment")) file = mmlab::parse_experiment_file(cli.at("experiment"));
  const mmlab::RunPlan plan = mmlab::make_plan(cli, file);
  const mmlab::DeviceInfo device = mmlab::query_device(plan.device);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return mmlab::execute(plan, device, g_interrupted);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "list") return list(argc, argv);
    if (command == "run") return run(argc, argv);
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
  } catch (const mmlab::UsageError& e) {
    std::cerr << "mmlab: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mmlab: fatal: " << e.what() << "\n";
    return 1;
  }
}
