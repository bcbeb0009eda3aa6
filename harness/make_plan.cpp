// make_plan: the sweep made once from typed settings (options.cpp reads each key into its field). Here
// are the checks that join keys (the variants of the algorithms chosen, an axis's values for each
// algorithm that has it, m, n and k together), the precedence of the command line over the file, and
// the expansion into configurations.
#include <filesystem>

#include "harness/options.hpp"

namespace mmlab {

namespace {

// The command line's settings over the file's over the table's defaults.
class Sources {
 public:
  Sources(const SweepSettings& cli, const SweepSettings& file) : cli_(cli), file_(file) {}

  // The field's value by precedence (the default where nobody set it; a key without one must be set).
  template <class T>
  const Given<T>& operator[](Field<T> SweepSettings::*f) const {
    if (cli_.*f) return *(cli_.*f);
    if (file_.*f) return *(file_.*f);
    return *(default_settings().*f);
  }
  template <class T>
  bool given(Field<T> SweepSettings::*f) const {
    return bool(cli_.*f) || bool(file_.*f);
  }
  // An algorithm's key by precedence: CLI ALG.KEY > CLI KEY > file ALG.KEY > file KEY; null when unset.
  const Given<std::vector<std::string>>* axis(const std::string& algorithm, const std::string& name) const {
    for (const SweepSettings* s : {&cli_, &file_})
      for (const std::string& key : {algorithm + "." + name, name})
        if (const auto it = s->axes.find(key); it != s->axes.end()) return &it->second;
    return nullptr;
  }
  const Given<std::vector<std::string>>* variants(const std::string& algorithm) const {
    for (const SweepSettings* s : {&cli_, &file_})
      if (const auto it = s->variants.find(algorithm); it != s->variants.end()) return &it->second;
    return nullptr;
  }
  // The command line's problems replace the file's as a whole, so `--size 64` means "just 64".
  const SweepSettings& problems() const { return names_problems(cli_) ? cli_ : file_; }
  const SweepSettings& cli() const { return cli_; }

 private:
  static bool names_problems(const SweepSettings& s) { return s.size || s.shape || s.m || s.n || s.k || !s.problems.empty(); }
  const SweepSettings& cli_;
  const SweepSettings& file_;
};

// A value the rest of the sweep refuses: the error names where it was given.
template <class T>
[[noreturn]] void refuse(const std::string& key, const Given<T>& g, const std::string& why) {
  throw located(key, g.given, UsageError(why));
}

std::vector<AlgorithmChoice> choose_algorithms(const Sources& src, const Registry& registry) {
  std::vector<AlgorithmChoice> out;
  const auto& list = src[&SweepSettings::algorithms];
  std::vector<const Algorithm*> algorithms;
  if (list.given.value == "all") {
    algorithms = registry.all();
  } else {
    for (const std::string& name : list.value) {
      const Algorithm* a = registry.find(name);
      if (!a) refuse("algorithms", list, registry.unknown(name));
      algorithms.push_back(a);
    }
  }
  for (const Algorithm* a : algorithms) {
    AlgorithmChoice c;
    c.algorithm = a;
    const auto* own = src.variants(a->name);
    const auto& variants = own ? *own : src[&SweepSettings::variant];
    if (variants.given.value == "all") {
      for (const Variant& v : a->variants)
        if (!v.on_request) c.variants.push_back(v.name);
    } else if (!own) {  // the global list: the variants of it that this algorithm has
      for (const std::string& v : variants.value)
        if (a->find_variant(v)) c.variants.push_back(v);
      if (c.variants.empty())
        refuse("variant", variants,
               a->name + " has none of the variants '" + variants.given.value + "' (its variants: " +
                   a->variant_names() + "); set " + a->name + ".variant or leave it out of --algorithms");
    } else {
      c.variants = variants.value;  // checked against the algorithm when read
    }
    for (const Axis& axis : a->axes) {
      const auto* asked = src.axis(a->name, axis.name);
      if (!asked) continue;  // the default
      std::vector<std::string> values;
      const auto items = asked->given.value == "all" ? axis.values : asked->value;
      for (const std::string& item : items) try {
          values.push_back(canonical_value(axis, item));
        } catch (const UsageError& e) {
          throw located(axis.name, asked->given, e);
        }
      c.axis_values.emplace_back(axis.name, values);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The problems one source gives under `prefix` ("" for the sweep, "alg." or "alg.variant."): size
// and shape lists, and (for the sweep) the m x n x k cross product. Empty when none is given.
std::vector<Problem> problems_from(const SweepSettings& s, const std::string& prefix) {
  std::vector<Problem> out;
  if (!prefix.empty()) {
    for (const char* what : {"size", "shape"})
      if (const auto it = s.problems.find(prefix + what); it != s.problems.end())
        out.insert(out.end(), it->second.value.begin(), it->second.value.end());
    return out;
  }
  if (s.size)
    for (long n : s.size->value) out.push_back({n, n, n});
  if (s.shape) out.insert(out.end(), s.shape->value.begin(), s.shape->value.end());
  const int given = int(bool(s.m) + bool(s.n) + bool(s.k));
  if (given != 0 && given != 3) throw UsageError("m, n and k go together: give all three (or use size / shape)");
  if (given == 3)
    for (long m : s.m->value)
      for (long n : s.n->value)
        for (long k : s.k->value) out.push_back({m, n, k});
  return out;
}

// Within one source: <alg>.<variant>.size/shape > <alg>.size/shape > size/shape/m,n,k > the default size.
std::vector<Problem> choose_problems(const Sources& src, std::vector<AlgorithmChoice>& choices) {
  const SweepSettings& s = src.problems();
  std::vector<Problem> sweep = problems_from(s, "");
  for (AlgorithmChoice& c : choices) {
    const std::vector<Problem> own = problems_from(s, c.algorithm->name + ".");
    for (const std::string& v : c.variants) {
      std::vector<Problem> mine = problems_from(s, c.algorithm->name + "." + v + ".");
      if (mine.empty()) mine = own;
      if (!mine.empty()) c.problems[v] = mine;
    }
  }
  if (sweep.empty()) {
    bool all_own = !choices.empty();
    for (const AlgorithmChoice& c : choices) all_own = all_own && c.problems.size() == c.variants.size();
    if (!all_own)  // the default size
      for (long n : default_settings().size->value) sweep.push_back({n, n, n});
  }
  return sweep;
}

}  // namespace

RunPlan make_plan(const SweepSettings& cli, const SweepSettings& file, const Registry& registry) {
  const Sources src(cli, file);
  RunPlan plan;
  if (cli.experiment) plan.experiment = cli.experiment->value;
  auto algorithms = choose_algorithms(src, registry);
  const auto problems = choose_problems(src, algorithms);
  plan.configurations = with_inputs(expand(algorithms, problems, src[&SweepSettings::scope].value,
                                           src[&SweepSettings::l2_flush].value, &plan.not_compiled),
                                    src[&SweepSettings::inputs].value);

  TimingOptions& t = plan.timing;
  plan.interleaved = src[&SweepSettings::interleaved].value;
  const TrialCount trials = src[&SweepSettings::trials].value;
  t.stop.adaptive = trials.adaptive;
  if (t.stop.adaptive) {
    t.stop.min_trials = src[&SweepSettings::min_trials].value;
    const auto& most = src[&SweepSettings::max_trials];
    t.stop.max_trials = most.value;
    if (t.stop.max_trials < t.stop.min_trials) refuse("max-trials", most, "max-trials must be >= min-trials");
    t.stop.rel_width = src[&SweepSettings::ci_width].value;
    t.max_seconds = src[&SweepSettings::max_seconds].value;
  } else {
    t.stop.min_trials = t.stop.max_trials = trials.count;
  }
  t.warmup = int(src[&SweepSettings::warmup].value);
  t.repeats = int(src[&SweepSettings::repeats].value);
  t.block_timeout_s = src[&SweepSettings::block_timeout].value;
  t.blocking = src[&SweepSettings::blocking].value;
  plan.rank_timeout_s = src[&SweepSettings::rank_timeout].value;
  plan.stop_after_s = src[&SweepSettings::stop_after].value;
  plan.seed = src[&SweepSettings::seed].value;
  plan.device = int(src[&SweepSettings::device].value);
  plan.device_given = src.given(&SweepSettings::device);

  const std::string stem =
      plan.experiment.empty() ? "mmlab" : std::filesystem::path(plan.experiment).stem().string();
  std::string output = src[&SweepSettings::output].value;
  if (const auto at = output.find("<experiment>"); at != std::string::npos && !src.given(&SweepSettings::output))
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
  // The switches are the command line's (an experiment file has none).
  const auto on = [](const Field<bool>& f) { return f && f->value; };
  plan.resume = on(cli.resume);
  plan.overwrite = on(cli.overwrite);
  plan.dry_run = on(cli.dry_run);
  if (plan.resume && plan.overwrite) throw UsageError("--resume and --overwrite exclude each other");
  return plan;
}

}  // namespace mmlab
