#include "harness/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/csv.hpp"
#include "core/schema.hpp"

namespace po = boost::program_options;

namespace mmlab {

namespace {

// Every option that is not an algorithm's axis, declared once: what it takes, its default, its help.
// `mmlab run --help`, the parsers and make_plan all read this table.
enum class Takes {
  text,      // any text
  list,      // a comma list (of names, sizes or ranges)
  count,     // a whole number in lo ... hi
  fraction,  // a decimal number in (0, hi]
  trials,    // a count in lo ... hi, or `auto`
  flag,      // a switch (command line only)
};

struct Option;
// An option's parser: reads the value's text into its one field of the settings (UsageError when malformed).
using Reader = void (*)(SweepSettings&, const Setting&, const Option&, const Registry&);

struct Option {
  const char* name;
  Takes takes;
  Reader read;
  const char* default_value;  // "" for none
  const char* help;
  unsigned long long lo = 0, hi = 0;  // count, trials: the range; fraction: (0, hi]
};

constexpr unsigned long long kAnyCount = ~0ull;

// A decimal number in (0, hi]: all of the text, finite.
double parse_fraction(const std::string& text, const std::string& what, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || !(v > 0) || v > hi)
    throw UsageError(what + ": '" + text + "' is not a number in (0, " + format_double(hi, 6) + "]");
  return v;
}

template <class T>
void put(Field<T>& field, T value, const Setting& given) {
  field = Given<T>{std::move(value), given};
}

// The parsers of the table's kinds of value, each for the field it is given.
template <Field<std::string> SweepSettings::*F>
void read_text(SweepSettings& s, const Setting& v, const Option&, const Registry&) {
  put(s.*F, v.value, v);
}
template <Field<unsigned long long> SweepSettings::*F>
void read_count(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  put(s.*F, parse_bounded(v, o.name, o.lo, o.hi), v);
}
template <Field<double> SweepSettings::*F>
void read_fraction(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  put(s.*F, parse_fraction(v, o.name, double(o.hi)), v);
}
template <Field<std::vector<long>> SweepSettings::*F>
void read_sizes(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  put(s.*F, parse_int_list(v, o.name), v);
}
template <Field<bool> SweepSettings::*F>
void read_switch(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  if (v.value != "1" && v.value != "true" && v.value != "0" && v.value != "false")
    throw UsageError("'" + std::string(o.name) + "' is a flag: true or false, not '" + v.value + "'");
  put(s.*F, v.value == "1" || v.value == "true", v);
}
template <Field<std::vector<std::string>> SweepSettings::*F>
void read_names(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  put(s.*F, v.value == "all" ? std::vector<std::string>{"all"} : split_list(v, o.name), v);
}

void read_algorithms(SweepSettings& s, const Setting& v, const Option& o, const Registry& registry) {
  read_names<&SweepSettings::algorithms>(s, v, o, registry);
  if (v.value != "all")
    for (const std::string& name : s.algorithms->value)
      if (!registry.find(name)) throw UsageError(registry.unknown(name));
}
void read_shapes(SweepSettings& s, const Setting& v, const Option&, const Registry&) {
  put(s.shape, parse_shapes(v), v);
}
void read_scopes(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  std::vector<Scope> scopes;
  for (const std::string& x : split_list(v, o.name)) scopes.push_back(parse_scope(x));
  put(s.scope, scopes, v);
}
void read_l2_flush(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  std::vector<bool> l2;
  for (const std::string& x : split_list(v, o.name)) {
    if (!in_domain(column_name(Col::l2_flush), x))
      throw UsageError("l2-flush: '" + x + "' (valid: " + domain_names(column_name(Col::l2_flush)) + ")");
    l2.push_back(x == l2_flush_name(true));
  }
  put(s.l2_flush, l2, v);
}
void read_inputs(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  std::vector<Inputs> inputs;  // in the order given, each kind once
  for (const std::string& x : split_list(v, o.name))
    if (const Inputs kind = parse_inputs(x); std::find(inputs.begin(), inputs.end(), kind) == inputs.end())
      inputs.push_back(kind);
  put(s.inputs, inputs, v);
}
void read_order(SweepSettings& s, const Setting& v, const Option&, const Registry&) {
  if (!in_domain(column_name(Col::order), v))
    throw UsageError("order: '" + v.value + "' must be " + order_name(true) + " or " + order_name(false));
  put(s.interleaved, v.value == order_name(true), v);
}
void read_trials(SweepSettings& s, const Setting& v, const Option& o, const Registry&) {
  put(s.trials, v.value == "auto" ? TrialCount{true, 0} : TrialCount{false, parse_bounded(v, o.name, o.lo, o.hi)}, v);
}
void read_timer(SweepSettings& s, const Setting& v, const Option&, const Registry&) {
  // The two GPU timers a run may ask for (the `timer` column's words; the others follow from the scope).
  const std::string blocked = timer_name(Timer::blocked), events = timer_name(Timer::events);
  if (v.value != blocked && v.value != events)
    throw UsageError("timer: '" + v.value + "' must be " + blocked + " or " + events);
  put(s.blocking, v.value == blocked, v);
}
void read_stop_after(SweepSettings& s, const Setting& v, const Option&, const Registry&) {
  put(s.stop_after, v.value == "none" ? 0.0 : double(parse_bounded(v, "stop-after (seconds, or none)", 1, 365ull * 24 * 3600)), v);
}

const Option kOptions[] = {
    {"output", Takes::text, read_text<&SweepSettings::output>, "results/<experiment>.csv",
     "CSV to append to; <experiment> is the experiment file's name, mmlab without one. Raw samples go to "
     "<name>.samples.csv"},
    {"algorithms", Takes::list, read_algorithms, "all", "algorithms to run, a list or 'all' (see `mmlab list`)"},
    {"variant", Takes::list, read_names<&SweepSettings::variant>, "all",
     "variants to run for every algorithm, a list or 'all' (every variant but those `mmlab list` marks 'on "
     "request', which run when named); <algorithm>.variant overrides it"},
    {"size", Takes::list, read_sizes<&SweepSettings::size>, "1024",
     "square sizes n (m = n = k): a list and/or ranges start:stop:step, e.g. 256:4096:256,1000; the default "
     "applies when no size, shape or m, n, k is given"},
    {"shape", Takes::list, read_shapes, "", "general problems m x n x k, e.g. 1041x1247x139,535x792x414"},
    {"m", Takes::list, read_sizes<&SweepSettings::m>, "", "rows of A and C (with n and k: their cross product)"},
    {"n", Takes::list, read_sizes<&SweepSettings::n>, "", "columns of B and C"},
    {"k", Takes::list, read_sizes<&SweepSettings::k>, "", "columns of A, rows of B"},
    {"scope", Takes::list, read_scopes, "kernel",
     "kernel (one launch per trial), batched (a CUDA graph of `repeats` launches), end_to_end (copies in, "
     "launch, copy out); a list"},
    {"l2-flush", Takes::list, read_l2_flush, "off", "off, on, or off,on: overwrite the L2 cache before every trial"},
    {"inputs", Takes::list, read_inputs, "uniform",
     "what A and B are made of: uniform (U(-1, 1)), wide_exponent (U(-1, 1) x 2^(-16 ... 16)), "
     "ill_conditioned (sums that cancel to about 2^-10 of sum |a b|), badly_scaled (rows of A and columns of "
     "B times 2^(-40 ... 40)), exp_spread:PHI ((U(0, 1) - 0.5) exp(PHI N(0, 1)), the Ozaki-scheme papers' "
     "inputs, 0 < PHI <= 8); a list"},
    {"order", Takes::text, read_order, "interleaved",
     "interleaved (the trials of a problem's configurations round-robin, each round shuffled, so drift "
     "hits all alike and trial i of each can be paired) or sequential (one configuration's trials, then the "
     "next's)"},
    {"trials", Takes::trials, read_trials, "20",
     "trials per configuration: a number, or 'auto' to stop once the median's 95% CI is within ci-width", 1,
     1000000},
    {"min-trials", Takes::count, read_count<&SweepSettings::min_trials>, "10", "with trials=auto: at least this many", 1, 1000000},
    {"max-trials", Takes::count, read_count<&SweepSettings::max_trials>, "200", "with trials=auto: at most this many", 1, 1000000},
    {"ci-width", Takes::fraction, read_fraction<&SweepSettings::ci_width>, "0.02", "with trials=auto: target width of the median's CI, relative", 0,
     1},
    {"max-seconds", Takes::fraction, read_fraction<&SweepSettings::max_seconds>, "20", "with trials=auto: stop a configuration after this many seconds",
     0, 7 * 24 * 3600},
    {"warmup", Takes::count, read_count<&SweepSettings::warmup>, "3", "untimed launches before the trials", 0, 1000000},
    {"repeats", Takes::count, read_count<&SweepSettings::repeats>, "20", "launches per trial in the batched scope", 1, 100000},
    {"timer", Takes::text, read_timer, "blocked",
     "how GPU trials are timed: blocked (a blocking kernel holds the stream while the L2 flush, the start event, "
     "the work and the stop event are enqueued: the GPU's time only) or events (events on an idle stream, as "
     "before schema 7: the host's enqueue time inside the interval)"},
    {"block-timeout", Takes::fraction, read_fraction<&SweepSettings::block_timeout>, "1",
     "seconds a GPU trial's blocking kernel may hold the stream while the work is enqueued behind it; a run() "
     "that takes longer (one that waits for the GPU inside) is timed with events on an idle stream instead, "
     "its row saying so (timer events)",
     0, 3600},
    {"rank-timeout", Takes::fraction, read_fraction<&SweepSettings::rank_timeout>, "600",
     "under mpirun: seconds a rank may wait for the others in one collective before it ends the job, naming "
     "itself, the wait and the step (a rank that never comes: mismatched command lines, a stuck GPU)",
     0, 7 * 24 * 3600},
    {"stop-after", Takes::text, read_stop_after, "none",
     "seconds after which no further configuration (or interleaved group) starts: the run ends as an interrupt "
     "does (exit 130, every finished row kept; --resume completes it); none: no limit"},
    {"seed", Takes::count, read_count<&SweepSettings::seed>, "20240601", "seed of the random inputs", 0, kAnyCount},
    {"device", Takes::count, read_count<&SweepSettings::device>, "0", "CUDA device ordinal", 0, 1023},
    {"resume", Takes::flag, read_switch<&SweepSettings::resume>, "", "skip configurations already recorded in the output"},
    {"overwrite", Takes::flag, read_switch<&SweepSettings::overwrite>, "", "truncate the output and its samples first (default: append)"},
    {"dry-run", Takes::flag, read_switch<&SweepSettings::dry_run>, "", "print the configurations that would run, and stop"},
    {"plugin", Takes::list, read_names<&SweepSettings::plugin>, "",
     "shared libraries of more algorithms (include/mmlab/plugin.h), a list; --plugin may be repeated. Loaded "
     "before the other options are read, so their algorithms' axes are options too"},
};

bool is_flag(const std::string& name) {
  for (const Option& o : kOptions)
    if (name == o.name) return o.takes == Takes::flag;
  return false;
}

// The help line: the text, then what the value may be and the default, from the same row.
std::string help_of(const Option& o) {
  std::string range;
  if (o.takes == Takes::count || o.takes == Takes::trials)
    range = o.hi == kAnyCount ? "any whole number >= " + std::to_string(o.lo)
                              : std::to_string(o.lo) + " ... " + std::to_string(o.hi);
  if (o.takes == Takes::fraction) range = "in (0, " + format_double(double(o.hi), 6) + "]";
  const std::string given = *o.default_value ? std::string("default ") + o.default_value : "";
  if (range.empty() && given.empty()) return o.help;
  return std::string(o.help) + " (" + range + (range.empty() || given.empty() ? "" : "; ") + given + ")";
}

std::set<std::string> axis_names(const Registry& registry) {
  std::set<std::string> out;
  for (const Algorithm* a : registry.all())
    for (const Axis& x : a->axes) out.insert(x.name);
  return out;
}

// The option names of a run, compared with '-' and '_' alike (`--l2_flush` is `--l2-flush`,
// `--comm-ctas` is `--comm_ctas`), and the nearest one to a name that is none of them.
class KeyNames {
 public:
  explicit KeyNames(const po::options_description& d) {
    for (const auto& o : d.options()) by_folded_[folded(o->long_name())] = o->long_name();
  }
  // The declared spelling of `name`, or `name` when it is no option.
  std::string canonical(const std::string& name) const {
    const auto it = by_folded_.find(folded(name));
    return it == by_folded_.end() ? name : it->second;
  }
  // "; did you mean --X?" for the one nearest option within two edits, else "".
  std::string suggestion(const std::string& name, const char* prefix = "--") const {
    const std::string f = folded(name);
    std::size_t best = 3, ties = 0;
    std::string pick;
    for (const auto& [key, real] : by_folded_) {
      const std::size_t d = distance(f, key);
      if (d < best)
        best = d, pick = real, ties = 1;
      else if (d == best)
        ++ties;
    }
    if (pick.empty() || ties > 1 || (f.size() < 4 && best > 1)) return "";
    return "; did you mean " + std::string(prefix) + pick + "?";
  }

 private:
  static std::string folded(std::string s) {
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
  }
  // Edits (insert, delete, substitute, swap two neighbours) from a to b.
  static std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  }
  std::map<std::string, std::string> by_folded_;
};

Settings to_settings(const po::variables_map& vm) {
  Settings out;
  for (const auto& [key, value] : vm) {
    if (value.defaulted() || key == "experiment") continue;
    if (const auto* s = boost::any_cast<std::string>(&value.value()))
      out[key] = Setting(*s, "--" + key);
    else if (const auto* b = boost::any_cast<bool>(&value.value())) {
      if (*b) out[key] = Setting("1", "--" + key);
    }
  }
  return out;
}

// Every key of the registry's algorithms (their axes, variants and own problems) is an option.
po::options_description run_options(const Registry& registry) {
  po::options_description all("mmlab run options");
  po::options_description general("Sweep and timing (also valid as keys of an experiment file)");
  po::options_description flags("Command-line only");
  for (const Option& o : kOptions) {
    if (o.takes == Takes::flag)
      flags.add_options()(o.name, po::bool_switch(), o.help);
    else
      general.add_options()(o.name, po::value<std::string>(), help_of(o).c_str());
  }
  flags.add_options()("help,h", po::bool_switch(), "this help");

  po::options_description axes(
      "Parameter axes for every algorithm that has them (lists; 'all' = every listed value)");
  for (const std::string& name : axis_names(registry)) {
    std::string help = "used by:";
    for (const Algorithm* a : registry.all())
      if (const Axis* x = a->find_axis(name)) help += " " + a->name + " (default " + x->default_value + ")";
    axes.add_options()(name.c_str(), po::value<std::string>(), help.c_str());
  }
  po::options_description per("Per algorithm, overriding the above (in a file: [algorithm] section)");
  for (const Algorithm* a : registry.all()) {
    std::string variants;
    for (const Variant& v : a->variants) variants += (variants.empty() ? "" : ", ") + v.name;
    per.add_options()((a->name + ".variant").c_str(), po::value<std::string>(),
                      ("variants of " + a->name + ": " + variants + ", or all (default all)").c_str());
    for (const Axis& x : a->axes)
      per.add_options()((a->name + "." + x.name).c_str(), po::value<std::string>(),
                        (x.description + " (default " + x.default_value + ")").c_str());
  }
  po::options_description own("Problems of one algorithm or variant, replacing `size`/`shape` for it");
  for (const Algorithm* a : registry.all()) {
    for (const char* what : {"size", "shape"}) {
      own.add_options()((a->name + "." + what).c_str(), po::value<std::string>(),
                        (std::string(what) + " list for " + a->name + " only").c_str());
      for (const Variant& v : a->variants)
        own.add_options()((a->name + "." + v.name + "." + what).c_str(), po::value<std::string>(),
                          (std::string(what) + " list for " + a->name + " " + v.name + " only").c_str());
    }
  }
  all.add(general).add(flags).add(axes).add(per).add(own);
  return all;
}

}  // namespace

std::string run_help(const Registry& registry) {
  std::ostringstream os;
  os << "usage: mmlab run [EXPERIMENT.ini] [options]\n\n"
        "Sweeps algorithms x variants x parameter values x problem sizes x scopes. Every\n"
        "configuration is first checked against a float64 reference (output poisoned with NaN);\n"
        "a mismatch is a `failed` row, never a speed. Configurations that cannot run (too many\n"
        "threads or too much shared memory for the device, a problem larger than free device\n"
        "memory, no GPU) are `skipped` rows with the reason. One CSV row per configuration is\n"
        "appended and synced as it finishes; raw per-trial times go to <output>.samples.csv.\n"
        "Options given on the command line override the experiment file.\n\n"
        "Example:\n  mmlab run experiments/quick.ini --size 512:2048:512 --tiled.tile 16,32\n"
        "  mmlab run --algorithms naive --block 16x16,32x8 --shape 1041x1247x139 --trials auto\n\n"
     << run_options(registry)
     << "\nExit status: 0 all configurations ran or were skipped; 1 a configuration failed\n"
        "verification (or a CUDA error ended the run); 2 bad input (nothing written); 3 an output\n"
        "could not be written (a full disk, an I/O error; finished rows are kept whole); 130\n"
        "interrupted (finished rows are kept; rerun with --resume to complete).\n";
  return os.str();
}

Settings parse_command_line(int argc, const char* const* argv, const Registry& registry) {
  po::options_description desc = run_options(registry);
  desc.add_options()("experiment", po::value<std::string>());
  const KeyNames names(desc);
  // Each --name in its declared spelling, '-' and '_' alike.
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && a.size() > 2 && a.compare(0, 2, "--") == 0) {
      const auto eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      a = "--" + names.canonical(name) + (eq == std::string::npos ? "" : a.substr(eq));
    }
    args.push_back(a);
  }
  std::vector<const char*> pointers;
  for (const std::string& a : args) pointers.push_back(a.c_str());
  po::positional_options_description pos;
  pos.add("experiment", 1);
  po::variables_map vm;
  try {
    po::store(
        po::command_line_parser(int(pointers.size()), pointers.data()).options(desc).positional(pos).run(),
        vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    while (!name.empty() && name[0] == '-') name.erase(0, 1);
    name = name.substr(0, name.find('='));  // --name=value: the name alone
    throw UsageError("unknown option '--" + name + "'" + names.suggestion(name) +
                     " (`mmlab run --help` lists every option, `mmlab list` every algorithm's axes)");
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  Settings s = to_settings(vm);
  if (vm.count("experiment")) s["experiment"] = Setting(vm["experiment"].as<std::string>(), "the experiment file");
  if (vm["help"].as<bool>()) s["help"] = Setting("1", "--help");
  return s;
}

namespace {

constexpr std::size_t kMaxExperimentBytes = 1 << 20;

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The file's settings as `section.key = value` lines, each key in its declared spelling (at most 1
// MiB, a regular file, without a UTF-8 byte-order mark), and where each key is set: `key = value`
// lines, under `[section]` headers (section.key).
// The file's settings as Boost's config syntax reads them, each key's "file:line" into `origins`.
std::string experiment_text(const std::string& path, const KeyNames& names,
                            std::map<std::string, std::string>& origins) {
  require_regular_file(path, "an experiment file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(path + ": cannot read the experiment file (" + std::string(std::strerror(errno)) + ")");
  std::string text(kMaxExperimentBytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(std::size_t(in.gcount()));
  if (text.size() > kMaxExperimentBytes)
    throw UsageError(path +
                     ": larger than 1 MiB; not an experiment file (keys like `size = 1024`, one per line)");
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  if (text.find('\0') != std::string::npos)
    throw UsageError(path +
                     ": contains NUL bytes; not an experiment file (a text file of `key = value` lines)");
  std::istringstream lines(text);
  std::string line, section, settings;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string t = trimmed(line.substr(0, line.find('#')));
    if (t.empty()) continue;
    if (t.front() == '[' && t.back() == ']') {
      section = trimmed(t.substr(1, t.size() - 2));
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string::npos)
      throw UsageError(path + ":" + std::to_string(number) + ": '" + t +
                       "' is not a setting (key = value) or a [section]");
    const std::string key = names.canonical(section.empty() ? trimmed(t.substr(0, eq))
                                                            : section + "." + trimmed(t.substr(0, eq)));
    if (const auto seen = origins.find(key); seen != origins.end())
      throw UsageError(path + ":" + std::to_string(number) + ": '" + key + "' again (first at " + seen->second +
                       "); set each key once (a list takes commas: size = 1024, 2048)");
    origins[key] = path + ":" + std::to_string(number);
    settings += key + " = " + trimmed(t.substr(eq + 1)) + "\n";
  }
  if (origins.empty())
    throw UsageError(path +
                     ": sets nothing (an experiment file has `key = value` lines; see mmlab run --help)");
  return settings;
}

std::string origin_of(const std::map<std::string, std::string>& origins, const std::string& key,
                      const std::string& path) {
  const auto it = origins.find(key);
  return it == origins.end() ? path : it->second;
}

}  // namespace

Settings parse_experiment_file(const std::string& path, const Registry& registry) {
  const po::options_description all = run_options(registry);
  po::options_description file_options;
  for (const auto& opt : all.options()) {
    const std::string name = opt->long_name();
    const bool flag = name == "help" || is_flag(name);
    if (!flag) file_options.add(opt);
  }
  const KeyNames names(file_options);
  std::map<std::string, std::string> origins;
  std::istringstream in(experiment_text(path, names, origins));
  po::variables_map vm;
  try {
    po::store(po::parse_config_file(in, file_options, false), vm);
  } catch (const po::unknown_option& e) {
    throw UsageError(origin_of(origins, e.get_option_name(), path) + ": unknown key '" + e.get_option_name() + "'" +
                     names.suggestion(e.get_option_name(), "") +
                     " (`mmlab run --help` lists every key, `mmlab list` every algorithm's axes)");
  } catch (const po::error& e) {
    throw UsageError(path + ": " + e.what());
  }
  Settings out = to_settings(vm);
  for (auto& [key, value] : out) value.origin = origin_of(origins, key, path);
  return out;
}

namespace {

std::vector<std::string> items_of(const Setting& v, const std::string& key) {
  return v.value == "all" ? std::vector<std::string>{"all"} : split_list(v, key);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The registry's keys: AXIS (each value taken by at least one algorithm that has the axis; each
// algorithm's own check is make_plan's), ALGORITHM.AXIS (canonical), ALGORITHM.variant and
// ALGORITHM[.VARIANT].size and .shape.
void read_registry_key(SweepSettings& s, const std::string& key, const Setting& v, const Registry& registry) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) {
    const std::vector<std::string> items = items_of(v, key);
    for (const std::string& item : items) {
      if (item == "all") break;
      std::string error;
      bool taken = false;
      for (const Algorithm* a : registry.all())
        if (const Axis* x = a->find_axis(key); x && !taken) try {
            canonical_value(*x, item), taken = true;
          } catch (const UsageError& e) {
            if (error.empty()) error = e.what();
          }
      if (!taken) throw UsageError(error.empty() ? "unknown option '" + key + "'" : error);
    }
    s.axes[key] = {items, v};
    return;
  }
  const Algorithm* a = registry.find(key.substr(0, dot));
  if (!a) throw UsageError("unknown option '" + key + "'");
  const std::string rest = key.substr(dot + 1);
  if (rest == "variant") {
    const std::vector<std::string> items = items_of(v, key);
    for (const std::string& name : items)
      if (v.value != "all" && !a->find_variant(name))
        throw UsageError("unknown variant '" + name + "' of " + a->name + " (valid: " + a->variant_names() + ")");
    s.variants[a->name] = {items, v};
  } else if (ends_with(rest, "size") || ends_with(rest, "shape")) {
    std::vector<Problem> problems;
    if (ends_with(rest, "size"))
      for (long n : parse_int_list(v, key)) problems.push_back({n, n, n});
    else
      problems = parse_shapes(v);
    s.problems[key] = {problems, v};
  } else if (const Axis* x = a->find_axis(rest)) {
    std::vector<std::string> values = items_of(v, key);
    if (v.value != "all")
      for (std::string& value : values) value = canonical_value(*x, value);
    s.axes[key] = {values, v};
  } else {
    throw UsageError("unknown option '" + key + "'");
  }
}

}  // namespace

bool is_flag_option(const std::string& name) { return is_flag(name); }

UsageError located(const std::string& key, const Setting& v, const UsageError& e) {
  const std::string what = e.what();
  if (v.origin.rfind("--", 0) != 0) return UsageError(v.origin + ": " + key + " = " + v.value + ": " + what);
  if (what.find(key) == std::string::npos) return UsageError("--" + key + " " + v.value + ": " + what);
  return e;
}

void read_setting(SweepSettings& into, const std::string& key, const Setting& value, const Registry& registry) {
  try {
    if (key == "experiment") return put(into.experiment, value.value, value);
    if (key == "help") return put(into.help, true, value);
    for (const Option& o : kOptions)
      if (key == o.name) return o.read(into, value, o, registry);
    read_registry_key(into, key, value, registry);
  } catch (const UsageError& e) {
    throw located(key, value, e);
  }
}

SweepSettings read_settings(const Settings& text, const Registry& registry) {
  SweepSettings out;
  for (const auto& [key, value] : text) read_setting(out, key, value, registry);
  return out;
}

const SweepSettings& default_settings() {
  static const SweepSettings defaults = [] {
    SweepSettings s;
    for (const Option& o : kOptions)
      if (*o.default_value) o.read(s, Setting(o.default_value, "the default"), o, Registry{});
    return s;
  }();
  return defaults;
}
}  // namespace mmlab

namespace mmlab {

std::vector<std::string> take_plugin_paths(std::vector<std::string>& args, bool reads_experiment) {
  std::vector<std::string> paths, rest;
  const auto add = [&](const std::string& list) {
    std::string item;
    std::istringstream in(list);
    while (std::getline(in, item, ',')) {
      const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
      if (b != std::string::npos) paths.push_back(item.substr(b, e - b + 1));
    }
  };
  const auto takes_value = [](std::string o) {  // `--size` takes the next argument; `--resume`, `--size=8` do not
    if (o.size() < 3 || o.compare(0, 2, "--") != 0 || o.find('=') != std::string::npos) return false;
    std::replace(o.begin(), o.end(), '_', '-');
    return !is_flag(o.substr(2));
  };
  std::string experiment;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--plugin") {
      if (i + 1 == args.size()) throw UsageError("--plugin needs a path to a shared library");
      add(args[++i]);
    } else if (a.rfind("--plugin=", 0) == 0) {
      add(a.substr(9));
    } else {
      if (reads_experiment && experiment.empty() && !a.empty() && a[0] != '-' &&
          (rest.empty() || !takes_value(rest.back())))
        experiment = a;
      rest.push_back(a);
    }
  }
  args = rest;
  // The experiment file's `plugin = A, B`, read by the experiment reader every key goes through (its
  // general keys: the algorithms' own keys are not known before their plugins are loaded).
  std::error_code ec;
  if (!experiment.empty() && std::filesystem::is_regular_file(experiment, ec)) {
    const po::options_description general = run_options(Registry{});
    std::map<std::string, std::string> origins;
    std::istringstream text(experiment_text(experiment, KeyNames(general), origins));
    po::options_description plugin_only;
    plugin_only.add_options()("plugin", po::value<std::string>());
    po::variables_map vm;
    try {
      po::store(po::parse_config_file(text, plugin_only, true), vm);
    } catch (const po::error& e) {
      throw UsageError(origin_of(origins, "plugin", experiment) + ": " + e.what());
    }
    if (vm.count("plugin")) add(vm["plugin"].as<std::string>());
  }
  return paths;
}

}  // namespace mmlab
