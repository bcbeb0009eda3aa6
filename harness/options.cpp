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

struct Option {
  const char* name;
  Takes takes;
  const char* default_value;  // "" for none
  const char* help;
  unsigned long long lo = 0, hi = 0;  // count, trials: the range; fraction: (0, hi]
};

constexpr unsigned long long kAnyCount = ~0ull;

const Option kOptions[] = {
    {"output", Takes::text, "results/<experiment>.csv",
     "CSV to append to; <experiment> is the experiment file's name, mmlab without one. Raw samples go to "
     "<name>.samples.csv"},
    {"algorithms", Takes::list, "all", "algorithms to run, a list or 'all' (see `mmlab list`)"},
    {"variant", Takes::list, "all",
     "variants to run for every algorithm, a list or 'all' (every variant but those `mmlab list` marks 'on "
     "request', which run when named); <algorithm>.variant overrides it"},
    {"size", Takes::list, "1024",
     "square sizes n (m = n = k): a list and/or ranges start:stop:step, e.g. 256:4096:256,1000; the default "
     "applies when no size, shape or m, n, k is given"},
    {"shape", Takes::list, "", "general problems m x n x k, e.g. 1041x1247x139,535x792x414"},
    {"m", Takes::list, "", "rows of A and C (with n and k: their cross product)"},
    {"n", Takes::list, "", "columns of B and C"},
    {"k", Takes::list, "", "columns of A, rows of B"},
    {"scope", Takes::list, "kernel",
     "kernel (one launch per trial), batched (a CUDA graph of `repeats` launches), end_to_end (copies in, "
     "launch, copy out); a list"},
    {"l2-flush", Takes::list, "off", "off, on, or off,on: overwrite the L2 cache before every trial"},
    {"inputs", Takes::list, "uniform",
     "what A and B are made of: uniform (U(-1, 1)), wide_exponent (U(-1, 1) x 2^(-16 ... 16)), "
     "ill_conditioned (sums that cancel to about 2^-10 of sum |a b|), badly_scaled (rows of A and columns of "
     "B times 2^(-40 ... 40)), exp_spread:PHI ((U(0, 1) - 0.5) exp(PHI N(0, 1)), the Ozaki-scheme papers' "
     "inputs, 0 < PHI <= 8); a list"},
    {"order", Takes::text, "interleaved",
     "interleaved (the trials of a problem's configurations round-robin, each round shuffled, so drift "
     "hits all alike and trial i of each can be paired) or sequential (one configuration's trials, then the "
     "next's)"},
    {"trials", Takes::trials, "20",
     "trials per configuration: a number, or 'auto' to stop once the median's 95% CI is within ci-width", 1,
     1000000},
    {"min-trials", Takes::count, "10", "with trials=auto: at least this many", 1, 1000000},
    {"max-trials", Takes::count, "200", "with trials=auto: at most this many", 1, 1000000},
    {"ci-width", Takes::fraction, "0.02", "with trials=auto: target width of the median's CI, relative", 0,
     1},
    {"max-seconds", Takes::fraction, "20", "with trials=auto: stop a configuration after this many seconds",
     0, 7 * 24 * 3600},
    {"warmup", Takes::count, "3", "untimed launches before the trials", 0, 1000000},
    {"repeats", Takes::count, "20", "launches per trial in the batched scope", 1, 100000},
    {"timer", Takes::text, "blocked",
     "how GPU trials are timed: blocked (a blocking kernel holds the stream while the L2 flush, the start event, "
     "the work and the stop event are enqueued: the GPU's time only) or events (events on an idle stream, as "
     "before schema 7: the host's enqueue time inside the interval)"},
    {"block-timeout", Takes::fraction, "1",
     "seconds a GPU trial's blocking kernel may hold the stream while the work is enqueued behind it; a run() "
     "that takes longer (one that waits for the GPU inside) is timed with events on an idle stream instead, "
     "its row saying so (timer events)",
     0, 3600},
    {"rank-timeout", Takes::fraction, "600",
     "under mpirun: seconds a rank may wait for the others in one collective before it ends the job, naming "
     "itself, the wait and the step (a rank that never comes: mismatched command lines, a stuck GPU)",
     0, 7 * 24 * 3600},
    {"stop-after", Takes::text, "none",
     "seconds after which no further configuration (or interleaved group) starts: the run ends as an interrupt "
     "does (exit 130, every finished row kept; --resume completes it); none: no limit"},
    {"seed", Takes::count, "20240601", "seed of the random inputs", 0, kAnyCount},
    {"device", Takes::count, "0", "CUDA device ordinal", 0, 1023},
    {"resume", Takes::flag, "", "skip configurations already recorded in the output"},
    {"overwrite", Takes::flag, "", "truncate the output and its samples first (default: append)"},
    {"dry-run", Takes::flag, "", "print the configurations that would run, and stop"},
    {"plugin", Takes::list, "",
     "shared libraries of more algorithms (include/mmlab/plugin.h), a list; --plugin may be repeated. Loaded "
     "before the other options are read, so their algorithms' axes are options too"},
};

const Option& option(const std::string& name) {
  for (const Option& o : kOptions)
    if (name == o.name) return o;
  throw std::logic_error("no option '" + name + "' in the table");
}

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

std::string value_of(const Settings& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? std::string() : it->second.value;
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

// A decimal number in (0, hi]: all of the text, finite.
double parse_fraction(const std::string& text, const std::string& what, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || !(v > 0) || v > hi)
    throw UsageError(what + ": '" + text + "' is not a number in (0, " + format_double(hi, 6) + "]");
  return v;
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

// What a plan is reading now: the setting it took last (its key, text and origin), so that an error
// about a value names where it was given. One per make_plan call.
struct Reading {
  std::string key;
  const Setting* last = nullptr;
};

const std::string& take(Reading& r, const Settings& s, const std::string& key) {
  r.key = key, r.last = &s.at(key);
  return r.last->value;
}

// The value of `key` by precedence; `fallback` when nobody set it.
std::string resolve(Reading& r, const Settings& cli, const Settings& file, const std::string& key,
                    const std::string& fallback) {
  if (cli.count(key)) return take(r, cli, key);
  if (file.count(key)) return take(r, file, key);
  r.last = nullptr;
  return fallback;
}

// A key of the option table, by precedence, else its default; typed as the table says.
std::string setting(Reading& r, const Settings& cli, const Settings& file, const std::string& key) {
  return resolve(r, cli, file, key, option(key).default_value);
}
unsigned long long count_setting(Reading& r, const Settings& cli, const Settings& file, const std::string& key) {
  const Option& o = option(key);
  return parse_bounded(setting(r, cli, file, key), key, o.lo, o.hi);
}
double fraction_setting(Reading& r, const Settings& cli, const Settings& file, const std::string& key) {
  return parse_fraction(setting(r, cli, file, key), key, double(option(key).hi));
}

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

static std::vector<AlgorithmChoice> choose_algorithms(Reading& r, const Settings& cli, const Settings& file,
                                                      const Registry& registry) {
  std::vector<AlgorithmChoice> out;
  const std::string list = setting(r, cli, file, "algorithms");
  std::vector<const Algorithm*> algorithms;
  if (list == "all") {
    algorithms = registry.all();
  } else {
    for (const std::string& name : split_list(list, "algorithms")) {
      const Algorithm* a = registry.find(name);
      if (!a) throw UsageError(registry.unknown(name));
      algorithms.push_back(a);
    }
  }
  for (const Algorithm* a : algorithms) {
    AlgorithmChoice c;
    c.algorithm = a;
    const std::string specific = a->name + ".variant";
    const bool own = cli.count(specific) || file.count(specific);
    const std::string variants =
        own ? resolve(r, cli, file, specific, option("variant").default_value) : setting(r, cli, file, "variant");
    if (variants == "all") {
      for (const Variant& v : a->variants)
        if (!v.on_request) c.variants.push_back(v.name);
    } else if (!own) {  // the global list: the variants of it that this algorithm has
      for (const std::string& v : split_list(variants, "variant"))
        if (a->find_variant(v)) c.variants.push_back(v);
      if (c.variants.empty()) {
        std::string valid;
        for (const Variant& x : a->variants) valid += (valid.empty() ? "" : ", ") + x.name;
        throw UsageError(a->name + " has none of the variants '" + variants + "' (its variants: " + valid +
                         "); set " + specific + " or leave it out of --algorithms");
      }
    } else {
      for (const std::string& v : split_list(variants, specific)) {
        if (!a->find_variant(v)) {
          std::string valid;
          for (const Variant& x : a->variants) valid += (valid.empty() ? "" : ", ") + x.name;
          throw UsageError("unknown variant '" + v + "' of " + a->name + " (valid: " + valid + ")");
        }
        c.variants.push_back(v);
      }
    }
    for (const Axis& axis : a->axes) {
      const std::string specific = a->name + "." + axis.name;
      std::string text;
      if (cli.count(specific))
        text = take(r, cli, specific);
      else if (cli.count(axis.name))
        text = take(r, cli, axis.name);
      else if (file.count(specific))
        text = take(r, file, specific);
      else if (file.count(axis.name))
        text = take(r, file, axis.name);
      else
        continue;  // the default
      std::vector<std::string> values;
      const auto items = text == "all" ? axis.values : split_list(text, specific);
      for (const std::string& item : items) values.push_back(canonical_value(axis, item));
      c.axis_values.emplace_back(axis.name, values);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The problems one source gives under `prefix` ("" for the sweep, "alg." or "alg.variant."): size
// and shape lists, and (for the sweep) the m x n x k cross product. Empty when none is given.
static std::vector<Problem> problems_from(Reading& r, const Settings& src, const std::string& prefix) {
  std::vector<Problem> out;
  if (src.count(prefix + "size"))
    for (long n : parse_int_list(take(r, src, prefix + "size"), prefix + "size")) out.push_back({n, n, n});
  if (src.count(prefix + "shape"))
    for (const Problem& p : parse_shapes(take(r, src, prefix + "shape"))) out.push_back(p);
  if (!prefix.empty()) return out;
  const int given = int(src.count("m") + src.count("n") + src.count("k"));
  if (given != 0 && given != 3)
    throw UsageError("m, n and k go together: give all three (or use size / shape)");
  if (given == 3)
    for (long m : parse_int_list(take(r, src, "m"), "m"))
      for (long n : parse_int_list(take(r, src, "n"), "n"))
        for (long k : parse_int_list(take(r, src, "k"), "k")) out.push_back({m, n, k});
  return out;
}

static bool names_problems(const Settings& s) {
  for (const auto& setting : s) {
    const std::string& key = setting.first;
    const auto ends = [&](const std::string& suffix) {
      return key.size() >= suffix.size() &&
             key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (key == "m" || key == "n" || key == "k" || ends("size") || ends("shape")) return true;
  }
  return false;
}

// The command line's problems replace the file's as a whole, so `--size 64` means "just 64".
// Within one source: <alg>.<variant>.size/shape > <alg>.size/shape > size/shape/m,n,k > the default size.
static std::vector<Problem> choose_problems(Reading& r, const Settings& cli, const Settings& file,
                                            std::vector<AlgorithmChoice>& choices) {
  const Settings& src = names_problems(cli) ? cli : file;
  std::vector<Problem> sweep = problems_from(r, src, "");
  for (AlgorithmChoice& c : choices) {
    const std::vector<Problem> own = problems_from(r, src, c.algorithm->name + ".");
    for (const std::string& v : c.variants) {
      std::vector<Problem> mine = problems_from(r, src, c.algorithm->name + "." + v + ".");
      if (mine.empty()) mine = own;
      if (!mine.empty()) c.problems[v] = mine;
    }
  }
  if (sweep.empty()) {
    bool all_own = !choices.empty();
    for (const AlgorithmChoice& c : choices) all_own = all_own && c.problems.size() == c.variants.size();
    if (!all_own)  // the default size
      for (long n : parse_int_list(option("size").default_value, "size")) sweep.push_back({n, n, n});
  }
  return sweep;
}

static RunPlan make_plan_unlocated(Reading& r, const Settings& cli, const Settings& file, const Registry& registry);

// A value error names where the value came from: the experiment file's line, or the option.
bool is_flag_option(const std::string& name) { return is_flag(name); }

RunPlan make_plan(const Settings& cli, const Settings& file, const Registry& registry) {
  Reading r;
  try {
    return make_plan_unlocated(r, cli, file, registry);
  } catch (const UsageError& e) {
    if (!r.last) throw;
    const bool option = r.last->origin.rfind("--", 0) == 0;
    if (!option)
      throw UsageError(r.last->origin + ": " + r.key + " = " + r.last->value + ": " + e.what());
    if (std::string(e.what()).find(r.key) == std::string::npos)
      throw UsageError("--" + r.key + " " + r.last->value + ": " + e.what());
    throw;
  }
}

static RunPlan make_plan_unlocated(Reading& r, const Settings& cli, const Settings& file, const Registry& registry) {
  RunPlan plan;
  plan.experiment = value_of(cli, "experiment");
  auto algorithms = choose_algorithms(r, cli, file, registry);
  const auto problems = choose_problems(r, cli, file, algorithms);

  std::vector<Scope> scopes;
  for (const std::string& s : split_list(setting(r, cli, file, "scope"), "scope"))
    scopes.push_back(parse_scope(s));
  std::vector<bool> l2;
  for (const std::string& s : split_list(setting(r, cli, file, "l2-flush"), "l2-flush")) {
    if (!in_domain(column_name(Col::l2_flush), s))
      throw UsageError("l2-flush: '" + s + "' (valid: " + domain_names(column_name(Col::l2_flush)) + ")");
    l2.push_back(s == l2_flush_name(true));
  }
  std::vector<Inputs> inputs;  // in the order given, each kind once
  for (const std::string& s : split_list(setting(r, cli, file, "inputs"), "inputs"))
    if (const Inputs x = parse_inputs(s); std::find(inputs.begin(), inputs.end(), x) == inputs.end())
      inputs.push_back(x);
  plan.configurations = with_inputs(expand(algorithms, problems, scopes, l2, &plan.not_compiled), inputs);

  TimingOptions& t = plan.timing;
  const std::string order = setting(r, cli, file, "order");
  if (!in_domain(column_name(Col::order), order))
    throw UsageError("order: '" + order + "' must be " + order_name(true) + " or " + order_name(false));
  plan.interleaved = order == order_name(true);
  const std::string trials = setting(r, cli, file, "trials");
  t.stop.adaptive = trials == "auto";
  if (t.stop.adaptive) {
    t.stop.min_trials = count_setting(r, cli, file, "min-trials");
    t.stop.max_trials = count_setting(r, cli, file, "max-trials");
    if (t.stop.max_trials < t.stop.min_trials) throw UsageError("max-trials must be >= min-trials");
    t.stop.rel_width = fraction_setting(r, cli, file, "ci-width");
    t.max_seconds = fraction_setting(r, cli, file, "max-seconds");
  } else {
    t.stop.min_trials = t.stop.max_trials =
        parse_bounded(trials, "trials", option("trials").lo, option("trials").hi);
  }
  t.warmup = int(count_setting(r, cli, file, "warmup"));
  t.repeats = int(count_setting(r, cli, file, "repeats"));
  t.block_timeout_s = fraction_setting(r, cli, file, "block-timeout");
  const std::string timer = setting(r, cli, file, "timer");
  // The two GPU timers a run may ask for (the `timer` column's words; the others follow from the scope).
  const std::string blocked = timer_name(Timer::blocked), events = timer_name(Timer::events);
  if (timer != blocked && timer != events)
    throw UsageError("timer: '" + timer + "' must be " + blocked + " or " + events);
  t.blocking = timer == blocked;
  plan.rank_timeout_s = fraction_setting(r, cli, file, "rank-timeout");
  if (const std::string stop = setting(r, cli, file, "stop-after"); stop != "none")
    plan.stop_after_s = double(parse_bounded(stop, "stop-after (seconds, or none)", 1, 365ull * 24 * 3600));
  plan.seed = count_setting(r, cli, file, "seed");
  plan.device = int(count_setting(r, cli, file, "device"));
  plan.device_given = cli.count("device") || file.count("device");

  const std::string stem =
      plan.experiment.empty() ? "mmlab" : std::filesystem::path(plan.experiment).stem().string();
  std::string output = setting(r, cli, file, "output");
  if (const auto at = output.find("<experiment>");
      at != std::string::npos && !cli.count("output") && !file.count("output"))
    output.replace(at, std::string("<experiment>").size(), stem);
  plan.output = resolve_link(output);  // a link's target: the samples go beside the file written
  plan.samples_output = samples_path_for(plan.output);
  // An output that is one of the run's inputs would be overwritten by rows.
  if (!plan.experiment.empty())
    for (const std::string& out : {plan.output, plan.samples_output}) {
      std::error_code ec;
      if (std::filesystem::equivalent(plan.experiment, out, ec))
        throw UsageError("--output " + output + ": " + out + " is the experiment file " + plan.experiment +
                         " itself; choose another output");
    }
  plan.resume = cli.count("resume");
  plan.overwrite = cli.count("overwrite");
  plan.dry_run = cli.count("dry-run");
  if (plan.resume && plan.overwrite) throw UsageError("--resume and --overwrite exclude each other");
  return plan;
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
