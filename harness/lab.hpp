// The lab as a library: a Lab (the algorithms it knows: the built-in lists joined with the plugins
// loaded from files or added in memory) and a Plan (one sweep, built alike from a command line, an
// experiment file or keywords), and run(), which sends a plan's rows to its files and a sink. mmlab's
// commands (harness/cli.cpp) and the C API (api/lab.cpp, include/mmlab/lab.h) stand on them.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/lab_states.hpp"
#include "core/plugin.hpp"
#include "harness/options.hpp"
#include "harness/sink.hpp"

namespace mmlab {

// The built-in lists joined with a set of plugins (lab_registry, distributed/registry.hpp).
using LabFactory = std::function<Registry(const std::vector<std::shared_ptr<const Plugin>>&)>;

// The algorithms at one moment: a registry and the plugins its algorithms live in, kept alive with it
// (a command goes on with the catalog it started with while another thread adds algorithms).
struct Catalog {
  std::vector<std::shared_ptr<const Plugin>> plugins;
  Registry registry;
};

// Safe to share between threads: every member may be called from any thread at any time.
class Lab {
 public:
  explicit Lab(LabFactory compose);

  std::shared_ptr<const Catalog> catalog() const;
  // A plugin file (a path loaded before is not loaded again). PluginError when it cannot be loaded.
  void load_plugin(const std::string& path);
  // Algorithms held in memory (Plugin::adopt: the Python package's): one named like an algorithm added
  // this way before replaces it; UsageError, and nothing changed, on a clash with a built-in or a file
  // plugin's algorithm.
  void add_plugin(std::shared_ptr<const Plugin> plugin);
  // What its algorithms keep across its runs (the flagship's measured picks and their GPU state), freed
  // with it; the current LabStates while it runs a plan (core/lab_states.hpp).
  LabStates& states() { return states_; }

 private:
  void set(std::vector<std::shared_ptr<const Plugin>> plugins);  // mutex_ held

  mutable std::mutex mutex_;
  LabFactory compose_;
  std::shared_ptr<const Catalog> catalog_;
  LabStates states_;
};

// One sweep, as `mmlab run` takes it: the command line's arguments, an experiment file (the first
// argument, or experiment()) and keywords (set(): an option's name without its dashes, '-' and '_'
// alike, or ALGORITHM.AXIS), all read by the same option table (harness/options.cpp), so an option the
// command line has is a keyword too. Each is read once, by its option's parser, into typed settings;
// the sweep is made from them once, by resolve() (at run). Plugins it names (--plugin, the file's
// plugin line, the `plugin` key) are loaded into its lab as they are named.
class Plan {
 public:
  explicit Plan(Lab& lab) : lab_(&lab) {}
  // `mmlab run ARGS...` (the arguments after "run"); writes files as the program does (the default output).
  static Plan from_arguments(Lab& lab, std::vector<std::string> args);

  void experiment(const std::string& path);
  // A keyword, read now by its own parser (the plan unchanged and UsageError naming it when unknown or
  // malformed). A flag takes "true"/"1" or "false"/"0"; `plugin` loads the plugins it lists. What joins
  // keys (a variant of the algorithms chosen, an axis value for each algorithm that has the axis, m, n
  // and k together) is checked by resolve().
  void set(const std::string& key, const std::string& value);
  // Whether `--help` was asked (the command line's).
  bool help() const;
  // The validated sweep against the lab's catalog of now (UsageError on bad input). A plan made from
  // keywords writes files only where `output` was set; one from a command line, as `mmlab run` does.
  RunPlan resolve(const Catalog& catalog) const;
  Lab& lab() const { return *lab_; }

 private:
  Lab* lab_;
  SweepSettings cli_;          // the command line's (from_arguments) and the keywords (set)
  SweepSettings file_;         // the experiment file's (its positional argument, or experiment())
  std::string argument_error_;  // the command line's, given at resolve() (as `mmlab run` reports it)
  bool help_ = false;          // the command line asked for --help
  bool files_by_default_ = false;
};

// Runs a plan: its configurations verified and timed, each row and its samples to the plan's output
// files (where it has them) and to `sink` (when not null) as it finishes. Under mpirun, the ranks agree
// on input errors first and then take a GPU each. The exit status (0 done, 1 a failed row, 130
// interrupted); UsageError on bad input. Ctrl-C (SIGINT, SIGTERM) stops it after the configuration it
// is in; the process's own handlers are back when it returns. One run at a time in a process (the GPU,
// the signal handlers): callers on several threads take turns (the C API does).
int run(const Plan& plan, RowSink* sink);

// Whether the last run() was stopped by Ctrl-C (rows already written stay whole).
bool interrupted();

}  // namespace mmlab
