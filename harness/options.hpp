// The `mmlab run` options: declared once (from the registry, so every algorithm's axes are keys),
// read from the command line and an experiment file (Boost.Program_options config syntax; Boost stays
// inside options.cpp), and resolved into a validated RunPlan. Precedence, highest first:
//   CLI <alg>.<axis>  >  CLI <axis>  >  file [alg] <axis>  >  file <axis>  >  the axis default.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/csv.hpp"  // samples_path_for
#include "core/stats.hpp"
#include "harness/sweep.hpp"
#include "runtime/timing.hpp"  // kDefaultBlockTimeoutSeconds

namespace mmlab {

// A setting as given, and where it was given ("--size", "experiments/x.ini:3"), so that an error about
// its value says where to look.
struct Setting {
  std::string value, origin;
  Setting(std::string v = {}, std::string o = {}) : value(std::move(v)), origin(std::move(o)) {}
  Setting(const char* v) : value(v) {}  // a value whose origin does not matter (tests, fuzzing)
  operator const std::string&() const { return value; }
  bool operator==(const std::string& s) const { return value == s; }
  bool operator==(const char* s) const { return value == s; }
};
inline std::ostream& operator<<(std::ostream& o, const Setting& s) { return o << s.value; }
using Settings = std::map<std::string, Setting>;  // option name -> its text and origin

// What make_plan reads from the options (their defaults are in options.cpp's table; a
// default-constructed one times one trial, without warm-up).
struct TimingOptions {
  StopRule stop;
  int warmup = 0;
  int repeats = 1;             // launches per trial in the batched scope
  double max_seconds = 1e300;  // per configuration, for adaptive trials
  double block_timeout_s = kDefaultBlockTimeoutSeconds;  // the blocking kernel's hold on the stream, at most
  bool blocking = true;        // false: GPU trials timed with events on an idle stream (--timer events)
};

struct RunPlan {
  std::string experiment;  // the experiment file, or ""
  std::vector<Configuration> configurations;
  std::size_t not_compiled = 0;  // points of the asked axis values left out: no kernel compiled for them
  TimingOptions timing;
  bool interleaved = true;     // the trials of a problem's configurations round-robin (--order)
  std::string output;          // the CSV
  std::string samples_output;  // its raw samples
  bool resume = false, overwrite = false, dry_run = false;
  unsigned long long seed = 20240601;
  int device = 0;
  bool device_given = false;  // --device or the file's `device`: under mpirun the ranks keep it
  double rank_timeout_s = 600;  // under mpirun: the watchdog's bound on one wait (runtime/job.hpp)
  double stop_after_s = 0;      // no configuration starts after this many seconds of the run (0: none)
};

// The options' help: every key of the registry's algorithms (their axes, variants and own problems) is one.
std::string run_help(const Registry& registry);

// Whether the option (its name as the table spells it: "dry-run") is a switch, given without a value.
bool is_flag_option(const std::string& name);

Settings parse_command_line(int argc, const char* const* argv, const Registry& registry);  // argv[0] is "run"
Settings parse_experiment_file(const std::string& path, const Registry& registry);
RunPlan make_plan(const Settings& cli, const Settings& file, const Registry& registry);

// The plugins to load before anything else is read: --plugin PATH (repeatable) and --plugin=PATH
// taken out of `args` (the arguments after the command), then the `plugin = A, B` line of the
// experiment file they name (`experiment`: the first other argument may name one, as in `mmlab run`).
// Each entry may be a comma list.
std::vector<std::string> take_plugin_paths(std::vector<std::string>& args, bool experiment = true);

}  // namespace mmlab
