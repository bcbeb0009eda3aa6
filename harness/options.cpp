#include "harness/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/csv.hpp"

namespace po = boost::program_options;

namespace mmlab {

namespace {

struct Generic {
  const char* name;
  const char* help;
};

// Keys valid both on the command line and in an experiment file.
const Generic kGeneric[] = {
    {"output", "CSV to append to (default results/<experiment>.csv); raw samples go to <name>.samples.csv"},
    {"algorithms", "algorithms to run, a list or 'all' (default all; see `mmlab list`)"},
    {"variant",
     "variants to run for every algorithm, a list or 'all' (default all: every variant but those `mmlab "
     "list` "
     "marks 'on request', which run when named); <algorithm>.variant overrides it"},
    {"size", "square sizes n (m = n = k): a list and/or ranges start:stop:step, e.g. 256:4096:256,1000"},
    {"shape", "general problems m x n x k, e.g. 1041x1247x139,535x792x414"},
    {"m", "rows of A and C (with n and k: their cross product)"},
    {"n", "columns of B and C"},
    {"k", "columns of A, rows of B"},
    {"scope",
     "kernel (one launch per trial), batched (a CUDA graph of `repeats` launches), "
     "end_to_end (copies in, launch, copy out); a list (default kernel)"},
    {"l2-flush", "off, on, or off,on: overwrite the L2 cache before every trial (default off)"},
    {"inputs",
     "what A and B are made of: uniform (U(-1, 1)), wide_exponent (U(-1, 1) x 2^(-16 ... 16)), "
     "ill_conditioned (sums that cancel to about 2^-10 of sum |a b|), badly_scaled (rows of A and columns of "
     "B times 2^(-40 ... 40)); a list (default uniform)"},
    {"trials",
     "trials per configuration: a number (1 ... 1000000), or 'auto' to stop once the median's 95% CI "
     "is within ci-width (default 20)"},
    {"min-trials", "with trials=auto: at least this many (default 10)"},
    {"max-trials", "with trials=auto: at most this many (default 200)"},
    {"ci-width", "with trials=auto: target width of the median's CI, relative, in (0, 1] (default 0.02)"},
    {"max-seconds", "with trials=auto: stop a configuration after this long (default 20)"},
    {"warmup", "untimed launches before the trials, 0 ... 1000000 (default 3)"},
    {"repeats", "launches per trial in the batched scope, 1 ... 100000 (default 20)"},
    {"seed", "seed of the random inputs, any whole number >= 0 (default 20240601)"},
    {"device", "CUDA device ordinal (default 0)"},
};

const char* kFlags[][2] = {
    {"resume", "skip configurations already recorded in the output"},
    {"overwrite", "truncate the output and its samples first (default: append)"},
    {"dry-run", "print the configurations that would run, and stop"},
};

std::set<std::string> axis_names(const Registry& registry) {
  std::set<std::string> out;
  for (const Algorithm* a : registry.all())
    for (const Axis& x : a->axes) out.insert(x.name);
  return out;
}

std::string value_of(const Settings& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? std::string() : it->second;
}

// The value of `key` by precedence; `fallback` when nobody set it.
std::string resolve(const Settings& cli, const Settings& file, const std::string& key,
                    const std::string& fallback);

std::string valid_keys_message(const Registry& registry) {
  std::ostringstream os;
  os << "valid keys:";
  for (const Generic& g : kGeneric) os << ' ' << g.name;
  for (const std::string& a : axis_names(registry)) os << ' ' << a;
  for (const Algorithm* a : registry.all()) {
    os << ' ' << a->name << ".variant";
    for (const Axis& x : a->axes) os << ' ' << a->name << '.' << x.name;
  }
  os << " and <algorithm>.size|shape, <algorithm>.<variant>.size|shape";
  return os.str();
}

Settings to_settings(const po::variables_map& vm) {
  Settings out;
  for (const auto& [key, value] : vm) {
    if (value.defaulted() || key == "experiment") continue;
    if (const auto* s = boost::any_cast<std::string>(&value.value()))
      out[key] = *s;
    else if (const auto* b = boost::any_cast<bool>(&value.value())) {
      if (*b) out[key] = "1";
    }
  }
  return out;
}

// Upper bounds of the timing options: far beyond any sensible run, well inside every type used.
constexpr unsigned long long kMaxTrials = 1000000, kMaxWarmup = 1000000, kMaxRepeats = 100000,
                             kMaxDevice = 1023;
constexpr double kMaxSeconds = 7 * 24 * 3600.0;

// A decimal number in (0, hi]: all of the text, finite.
double parse_fraction(const std::string& text, const std::string& what, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || !(v > 0) || v > hi)
    throw UsageError(what + ": '" + text + "' is not a number in (0, " + format_double(hi, 6) + "]");
  return v;
}

}  // namespace

po::options_description run_options(const Registry& registry) {
  po::options_description all("mmlab run options");
  po::options_description general("Sweep and timing (also valid as keys of an experiment file)");
  for (const Generic& g : kGeneric) general.add_options()(g.name, po::value<std::string>(), g.help);
  po::options_description flags("Command-line only");
  for (auto& f : kFlags) flags.add_options()(f[0], po::bool_switch(), f[1]);
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
        "verification; 2 bad input (nothing written); 130 interrupted (finished rows are kept;\n"
        "rerun with --resume to complete).\n";
  return os.str();
}

Settings parse_command_line(int argc, const char* const* argv, const Registry& registry) {
  po::options_description desc = run_options(registry);
  desc.add_options()("experiment", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("experiment", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
  } catch (const po::unknown_option& e) {
    throw UsageError("unknown option '" + e.get_option_name() + "'; " + valid_keys_message(registry));
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  Settings s = to_settings(vm);
  if (vm.count("experiment")) s["experiment"] = vm["experiment"].as<std::string>();
  if (vm["help"].as<bool>()) s["help"] = "1";
  return s;
}

namespace {

// Where each key of the experiment file was set ("file:line"), for the errors about its value.
std::map<std::string, std::string>& experiment_origins() {
  static std::map<std::string, std::string> origins;
  return origins;
}

// The key whose value is being read (set by `take`); an error while reading it names its origin.
const Settings* g_source = nullptr;
std::string g_key;

const std::string& take(const Settings& s, const std::string& key) {
  g_source = &s, g_key = key;
  return s.at(key);
}

std::string resolve(const Settings& cli, const Settings& file, const std::string& key,
                    const std::string& fallback) {
  if (cli.count(key)) return take(cli, key);
  if (file.count(key)) return take(file, key);
  g_source = nullptr;
  return fallback;
}

constexpr std::size_t kMaxExperimentBytes = 1 << 20;

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The file's text (at most 1 MiB, a regular file, without a UTF-8 byte-order mark), and where each
// key is set: `key = value` lines, under `[section]` headers (section.key).
std::string experiment_text(const std::string& path) {
  require_regular_file(path, "an experiment file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot read the experiment file");
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
  auto& origins = experiment_origins();
  origins.clear();
  std::istringstream lines(text);
  std::string line, section;
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
    const std::string key = trimmed(t.substr(0, eq));
    origins[section.empty() ? key : section + "." + key] = path + ":" + std::to_string(number);
  }
  if (origins.empty())
    throw UsageError(path +
                     ": sets nothing (an experiment file has `key = value` lines; see mmlab run --help)");
  return text;
}

std::string origin_of(const std::string& key, const std::string& path) {
  const auto& origins = experiment_origins();
  const auto it = origins.find(key);
  return it == origins.end() ? path : it->second;
}

}  // namespace

Settings parse_experiment_file(const std::string& path, const Registry& registry) {
  std::istringstream in(experiment_text(path));
  const po::options_description all = run_options(registry);
  po::options_description file_options;
  for (const auto& opt : all.options()) {
    const std::string name = opt->long_name();
    bool flag = name == "help";
    for (auto& f : kFlags) flag = flag || name == f[0];
    if (!flag) file_options.add(opt);
  }
  po::variables_map vm;
  try {
    po::store(po::parse_config_file(in, file_options, false), vm);
  } catch (const po::unknown_option& e) {
    throw UsageError(origin_of(e.get_option_name(), path) + ": unknown key '" + e.get_option_name() + "'; " +
                     valid_keys_message(registry));
  } catch (const po::error& e) {
    throw UsageError(path + ": " + e.what());
  }
  return to_settings(vm);
}

static std::vector<AlgorithmChoice> choose_algorithms(const Settings& cli, const Settings& file,
                                                      const Registry& registry) {
  std::vector<AlgorithmChoice> out;
  const std::string list = resolve(cli, file, "algorithms", "all");
  std::vector<const Algorithm*> algorithms;
  if (list == "all") {
    algorithms = registry.all();
  } else {
    for (const std::string& name : split_list(list, "algorithms")) {
      const Algorithm* a = registry.find(name);
      if (!a) throw UsageError("unknown algorithm '" + name + "' (valid: " + registry.names() + ")");
      algorithms.push_back(a);
    }
  }
  for (const Algorithm* a : algorithms) {
    AlgorithmChoice c;
    c.algorithm = a;
    const std::string specific = a->name + ".variant";
    const bool own = cli.count(specific) || file.count(specific);
    const std::string variants =
        own ? resolve(cli, file, specific, "all") : resolve(cli, file, "variant", "all");
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
        text = take(cli, specific);
      else if (cli.count(axis.name))
        text = take(cli, axis.name);
      else if (file.count(specific))
        text = take(file, specific);
      else if (file.count(axis.name))
        text = take(file, axis.name);
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
static std::vector<Problem> problems_from(const Settings& src, const std::string& prefix) {
  std::vector<Problem> out;
  if (src.count(prefix + "size"))
    for (long n : parse_int_list(take(src, prefix + "size"), prefix + "size")) out.push_back({n, n, n});
  if (src.count(prefix + "shape"))
    for (const Problem& p : parse_shapes(take(src, prefix + "shape"))) out.push_back(p);
  if (!prefix.empty()) return out;
  const int given = int(src.count("m") + src.count("n") + src.count("k"));
  if (given != 0 && given != 3)
    throw UsageError("m, n and k go together: give all three (or use size / shape)");
  if (given == 3)
    for (long m : parse_int_list(take(src, "m"), "m"))
      for (long n : parse_int_list(take(src, "n"), "n"))
        for (long k : parse_int_list(take(src, "k"), "k")) out.push_back({m, n, k});
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
// Within one source: <alg>.<variant>.size/shape > <alg>.size/shape > size/shape/m,n,k > 1024^3.
static std::vector<Problem> choose_problems(const Settings& cli, const Settings& file,
                                            std::vector<AlgorithmChoice>& choices) {
  const Settings& src = names_problems(cli) ? cli : file;
  std::vector<Problem> sweep = problems_from(src, "");
  for (AlgorithmChoice& c : choices) {
    const std::vector<Problem> own = problems_from(src, c.algorithm->name + ".");
    for (const std::string& v : c.variants) {
      std::vector<Problem> mine = problems_from(src, c.algorithm->name + "." + v + ".");
      if (mine.empty()) mine = own;
      if (!mine.empty()) c.problems[v] = mine;
    }
  }
  if (sweep.empty()) {
    bool all_own = !choices.empty();
    for (const AlgorithmChoice& c : choices) all_own = all_own && c.problems.size() == c.variants.size();
    if (!all_own) sweep.push_back({1024, 1024, 1024});
  }
  return sweep;
}

static RunPlan make_plan_unlocated(const Settings& cli, const Settings& file, const Registry& registry);

// A value error names where the value came from: the experiment file's line, or the option.
RunPlan make_plan(const Settings& cli, const Settings& file, const Registry& registry) {
  g_source = nullptr;
  try {
    return make_plan_unlocated(cli, file, registry);
  } catch (const UsageError& e) {
    if (g_source == &file && file.count(g_key))
      throw UsageError(origin_of(g_key, "the experiment file") + ": " + g_key + " = " + file.at(g_key) +
                       ": " + e.what());
    if (g_source == &cli && cli.count(g_key) && std::string(e.what()).find(g_key) == std::string::npos)
      throw UsageError("--" + g_key + " " + cli.at(g_key) + ": " + e.what());
    throw;
  }
}

static RunPlan make_plan_unlocated(const Settings& cli, const Settings& file, const Registry& registry) {
  RunPlan plan;
  plan.experiment = value_of(cli, "experiment");
  auto algorithms = choose_algorithms(cli, file, registry);
  const auto problems = choose_problems(cli, file, algorithms);

  std::vector<Scope> scopes;
  for (const std::string& s : split_list(resolve(cli, file, "scope", "kernel"), "scope"))
    scopes.push_back(parse_scope(s));
  std::vector<bool> l2;
  for (const std::string& s : split_list(resolve(cli, file, "l2-flush", "off"), "l2-flush")) {
    if (s != "on" && s != "off") throw UsageError("l2-flush: '" + s + "' must be on or off");
    l2.push_back(s == "on");
  }
  std::vector<Inputs> inputs;  // in the order given, each kind once
  for (const std::string& s : split_list(resolve(cli, file, "inputs", "uniform"), "inputs"))
    if (const Inputs x = parse_inputs(s); std::find(inputs.begin(), inputs.end(), x) == inputs.end())
      inputs.push_back(x);
  plan.configurations = with_inputs(expand(algorithms, problems, scopes, l2, &plan.not_compiled), inputs);

  TimingOptions& t = plan.timing;
  const std::string trials = resolve(cli, file, "trials", "20");
  t.stop.adaptive = trials == "auto";
  if (t.stop.adaptive) {
    t.stop.min_trials = parse_bounded(resolve(cli, file, "min-trials", "10"), "min-trials", 1, kMaxTrials);
    t.stop.max_trials = parse_bounded(resolve(cli, file, "max-trials", "200"), "max-trials", 1, kMaxTrials);
    if (t.stop.max_trials < t.stop.min_trials) throw UsageError("max-trials must be >= min-trials");
    t.stop.rel_width = parse_fraction(resolve(cli, file, "ci-width", "0.02"), "ci-width", 1.0);
    t.max_seconds = parse_fraction(resolve(cli, file, "max-seconds", "20"), "max-seconds", kMaxSeconds);
  } else {
    t.stop.min_trials = t.stop.max_trials = parse_bounded(trials, "trials", 1, kMaxTrials);
  }
  t.warmup = int(parse_bounded(resolve(cli, file, "warmup", "3"), "warmup", 0, kMaxWarmup));
  t.repeats = int(parse_bounded(resolve(cli, file, "repeats", "20"), "repeats", 1, kMaxRepeats));
  plan.seed = parse_bounded(resolve(cli, file, "seed", "20240601"), "seed", 0, ~0ull);
  plan.device = int(parse_bounded(resolve(cli, file, "device", "0"), "device", 0, kMaxDevice));

  std::string stem = "mmlab";
  if (!plan.experiment.empty()) stem = std::filesystem::path(plan.experiment).stem().string();
  plan.output = resolve(cli, file, "output", "results/" + stem + ".csv");
  plan.samples_output = samples_path_for(plan.output);
  plan.resume = cli.count("resume");
  plan.overwrite = cli.count("overwrite");
  plan.dry_run = cli.count("dry-run");
  if (plan.resume && plan.overwrite) throw UsageError("--resume and --overwrite exclude each other");
  return plan;
}

}  // namespace mmlab
