#include "harness/sweep.hpp"

#include "harness/pipelines.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace mmlab {

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::string item;
  auto flush = [&] {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b == std::string::npos) throw UsageError(what + ": empty item in list '" + text + "'");
    out.push_back(item.substr(b, e - b + 1));
    item.clear();
  };
  for (char c : text) {
    if (c == ',')
      flush();
    else
      item += c;
  }
  flush();
  return out;
}

std::vector<long> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<long> out;
  for (const std::string& item : split_list(text, what)) {
    const auto c1 = item.find(':');
    if (c1 == std::string::npos) {
      out.push_back(parse_integer(item, what));
      continue;
    }
    const auto c2 = item.find(':', c1 + 1);
    if (c2 == std::string::npos || item.find(':', c2 + 1) != std::string::npos)
      throw UsageError(what + ": range '" + item + "' must be start:stop:step");
    const long start = parse_integer(item.substr(0, c1), what);
    const long stop = parse_integer(item.substr(c1 + 1, c2 - c1 - 1), what);
    const long step = parse_integer(item.substr(c2 + 1), what);
    if (stop < start) throw UsageError(what + ": range '" + item + "' has stop < start");
    if ((stop - start) / step > 100000) throw UsageError(what + ": range '" + item + "' is too long");
    for (long v = start; v <= stop; v += step) out.push_back(v);
  }
  return out;
}

std::vector<Problem> parse_shapes(const std::string& text) {
  std::vector<Problem> out;
  for (std::string item : split_list(text, "shape")) {
    std::transform(item.begin(), item.end(), item.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto x1 = item.find('x');
    const auto x2 = x1 == std::string::npos ? x1 : item.find('x', x1 + 1);
    if (x2 == std::string::npos || item.find('x', x2 + 1) != std::string::npos)
      throw UsageError("shape: '" + item + "' is not m x n x k, e.g. 1041x1247x139");
    const std::string what = "shape '" + item + "'";
    out.push_back({parse_integer(item.substr(0, x1), what),
                   parse_integer(item.substr(x1 + 1, x2 - x1 - 1), what),
                   parse_integer(item.substr(x2 + 1), what)});
  }
  return out;
}

std::string configuration_key(const std::string& algorithm, const std::string& variant,
                              const std::string& params, long m, long n, long k, const std::string& inputs,
                              const std::string& scope, const std::string& l2_flush) {
  return algorithm + '|' + variant + '|' + params + '|' + std::to_string(m) + 'x' + std::to_string(n) + 'x' +
         std::to_string(k) + '|' + inputs + '|' + scope + '|' + l2_flush;
}

Inputs parse_inputs(const std::string& text) {
  if (const std::optional<Inputs> x = parse_inputs_name(text)) return *x;
  throw UsageError("inputs: unknown value '" + text + "' (valid: " + inputs_names() + ")");
}

std::vector<Configuration> with_inputs(const std::vector<Configuration>& configurations,
                                       const std::vector<Inputs>& inputs) {
  std::vector<Configuration> out;
  for (std::size_t begin = 0; begin < configurations.size();) {
    std::size_t end = begin;
    while (end < configurations.size() && configurations[end].problem == configurations[begin].problem) ++end;
    for (Inputs x : inputs)
      for (std::size_t i = begin; i < end; ++i) {
        out.push_back(configurations[i]);
        out.back().problem.inputs = x;
        if (out.size() > kMaxConfigurations)
          throw UsageError("the sweep has more than " + std::to_string(kMaxConfigurations) +
                           " configurations; split it into several runs");
      }
    begin = end;
  }
  return out;
}

std::string Configuration::key() const {
  return configuration_key(algorithm->name, params.variant(), params.canonical(), problem.m, problem.n,
                           problem.k, inputs_name(problem.inputs), scope_name(scope),
                           l2_flush_name(l2_flush));
}

std::vector<Params> parameter_points(const Algorithm& a, const std::string& variant, const AxisValues& asked,
                                     std::size_t* left_out) {
  std::vector<Params> points{Params(variant)};
  for (const Axis& axis : a.axes) {
    if (!axis.applies_to(variant)) continue;
    std::vector<std::string> values{axis.default_value};
    for (auto& [name, list] : asked)
      if (name == axis.name) values = list;
    std::vector<Params> next;
    for (const Params& p : points)
      for (const std::string& v : values) {
        Params q = p;
        q.set(axis.name, v);
        next.push_back(q);
      }
    points = std::move(next);
  }
  if (!a.compiled.governs(variant)) return points;
  std::vector<Params> compiled;
  for (const Params& p : points)
    if (a.compiled.admits(p)) compiled.push_back(p);
  if (compiled.empty()) return points;
  if (left_out) *left_out += points.size() - compiled.size();
  return compiled;
}

std::vector<Configuration> expand(const std::vector<AlgorithmChoice>& choices,
                                  const std::vector<Problem>& problems, const std::vector<Scope>& scopes,
                                  const std::vector<bool>& l2, std::size_t* left_out) {
  std::vector<Problem> all = problems;
  for (const AlgorithmChoice& c : choices)
    for (const auto& [variant, list] : c.problems) all.insert(all.end(), list.begin(), list.end());
  // Sets, not list searches: a sweep of 10^5 sizes must not take 10^10 comparisons (found by fuzzing).
  using Key = std::tuple<long, long, long>;
  const auto key = [](const Problem& p) { return Key{p.m, p.n, p.k}; };
  const auto set_of = [&](const std::vector<Problem>& list) {
    std::set<Key> out;
    for (const Problem& p : list) out.insert(key(p));
    return out;
  };
  const std::set<Key> sweep = set_of(problems);
  std::map<std::pair<const AlgorithmChoice*, std::string>, std::set<Key>> own_sets;
  for (const AlgorithmChoice& c : choices)
    for (const auto& [variant, list] : c.problems) own_sets[{&c, variant}] = set_of(list);
  std::vector<Configuration> out;
  std::set<std::string> seen;
  std::set<Key> done;
  for (const Problem& problem : all) {
    if (!done.insert(key(problem)).second) continue;
    for (const AlgorithmChoice& c : choices)
      for (const std::string& variant : c.variants) {
        const auto own = own_sets.find({&c, variant});
        if (!(own == own_sets.end() ? sweep : own->second).count(key(problem))) continue;
        std::size_t dropped = 0;
        const std::vector<Params> points = parameter_points(*c.algorithm, variant, c.axis_values, &dropped);
        if (left_out) *left_out += dropped * scopes.size() * l2.size();
        for (const Params& params : points)
          for (Scope scope : scopes)
            for (bool flush : l2) {
              Configuration cfg{c.algorithm, params, problem, scope, flush};
              // A streamed algorithm's operands are in host memory: it is timed from host to host
              // whatever the sweep's scope, and no L2 flush applies.
              if (cfg.pipeline().end_to_end) cfg.scope = Scope::end_to_end, cfg.l2_flush = false;
              if (seen.insert(cfg.key()).second) out.push_back(std::move(cfg));
              if (out.size() > kMaxConfigurations)
                throw UsageError("the sweep has more than " + std::to_string(kMaxConfigurations) +
                                 " configurations; split it into several runs");
            }
      }
  }
  return out;
}

bool uses_gpus(const Configuration& c) { return pipeline_uses_gpus(c.pipeline(), *c.algorithm, c.params); }

}  // namespace mmlab
