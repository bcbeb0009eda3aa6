// The `mmlab run` options: declared once (from the registry, so every algorithm's axes are keys),
// read from the command line and an experiment file (Boost.Program_options config syntax; Boost stays
// inside options.cpp), and resolved into a validated RunPlan. Precedence, highest first:
//   CLI <alg>.<axis>  >  CLI <axis>  >  file [alg] <axis>  >  file <axis>  >  the axis default.
#pragma once

#include <map>
#include <optional>
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

// A setting read by its parser: the typed value, and the text and origin it came from (an error about
// it found when the sweep is made names where it was given).
template <class T>
struct Given {
  T value{};
  Setting given;
};
template <class T>
using Field = std::optional<Given<T>>;

struct TrialCount {
  bool adaptive = false;         // `auto`: until the median's CI is narrow enough
  unsigned long long count = 0;  // else exactly this many
};

// One source's settings (a command line, a plan's keywords, an experiment file), typed: each key is read
// once, by its own parser (a row of the option table in options.cpp, or the registry's keys), into its
// field. The sweep is made from them once, by make_plan. The defaults are default_settings().
struct SweepSettings {
  Field<std::string> experiment, output;
  Field<std::vector<std::string>> algorithms, variant;  // names, or {"all"}
  Field<std::vector<long>> size, m, n, k;
  Field<std::vector<Problem>> shape;
  Field<std::vector<Scope>> scope;
  Field<std::vector<bool>> l2_flush;
  Field<std::vector<Inputs>> inputs;  // each kind once, in the order given
  Field<bool> interleaved;            // order
  Field<TrialCount> trials;
  Field<unsigned long long> min_trials, max_trials, warmup, repeats, seed, device;
  Field<double> ci_width, max_seconds, block_timeout, rank_timeout, stop_after;  // stop_after 0: none
  Field<bool> blocking;                                                       // timer
  Field<bool> resume, overwrite, dry_run, help;                               // switches: on or off
  Field<std::vector<std::string>> plugin;
  // The registry's keys: AXIS and ALGORITHM.AXIS (the values as given, or {"all"}; an algorithm's own
  // axis's canonical), ALGORITHM.variant, ALGORITHM[.VARIANT].size and .shape (problems).
  std::map<std::string, Given<std::vector<std::string>>> axes, variants;
  std::map<std::string, Given<std::vector<Problem>>> problems;
};

// The option table's defaults, read by the same parsers.
const SweepSettings& default_settings();

// Reads `key` (as the option table or the registry spells it) into `into` by its own parser: UsageError
// naming where the value was given when it is malformed (an axis value no algorithm with the axis takes,
// an unknown algorithm or variant, a count out of range). The checks that join keys are make_plan's.
// An error about the value `given` of `key`, naming where it was given: "f.ini:3: key = value: why", or
// "--key value: why" (where `why` does not name the key already).
UsageError located(const std::string& key, const Setting& given, const UsageError& why);

void read_setting(SweepSettings& into, const std::string& key, const Setting& value, const Registry& registry);
SweepSettings read_settings(const Settings& text, const Registry& registry);

// The options' help: every key of the registry's algorithms (their axes, variants and own problems) is one.
std::string run_help(const Registry& registry);

// Whether the option (its name as the table spells it: "dry-run") is a switch, given without a value.
bool is_flag_option(const std::string& name);

Settings parse_command_line(int argc, const char* const* argv, const Registry& registry);  // argv[0] is "run"
Settings parse_experiment_file(const std::string& path, const Registry& registry);
// The sweep, made once from the typed settings (the command line's over the file's; see the top).
RunPlan make_plan(const SweepSettings& cli, const SweepSettings& file, const Registry& registry);
inline RunPlan make_plan(const Settings& cli, const Settings& file, const Registry& registry) {
  return make_plan(read_settings(cli, registry), read_settings(file, registry), registry);
}

// The plugins to load before anything else is read: --plugin PATH (repeatable) and --plugin=PATH
// taken out of `args` (the arguments after the command), then the `plugin = A, B` line of the
// experiment file they name (`experiment`: the first other argument may name one, as in `mmlab run`).
// Each entry may be a comma list.
std::vector<std::string> take_plugin_paths(std::vector<std::string>& args, bool experiment = true);

}  // namespace mmlab
