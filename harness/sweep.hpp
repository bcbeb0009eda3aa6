// Sweep expansion: lists and ranges of values, problem shapes, and the cross product
// algorithms x variants x parameter values x problems x scopes x L2 settings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/scope.hpp"
#include "harness/pipelines.hpp"

namespace mmlab {

// "a,b , c" -> {"a","b","c"}; empty items are an error.
std::vector<std::string> split_list(const std::string& text, const std::string& what);
// "256:4096:256,1000" -> 256, 512, ..., 4096, 1000 (start:stop:step, stop inclusive).
std::vector<long> parse_int_list(const std::string& text, const std::string& what);
// "1041x1247x139,535x792x414" -> problems (m x n x k).
std::vector<Problem> parse_shapes(const std::string& text);

using AxisValues = std::vector<std::pair<std::string, std::vector<std::string>>>;  // axis -> canonical values

// What the user asked for one algorithm: variants and, per axis, the values to sweep.
struct AlgorithmChoice {
  const Algorithm* algorithm = nullptr;
  std::vector<std::string> variants;
  AxisValues axis_values;
  // Problems per variant (from <alg>.<variant>.size, <alg>.size, ...); a variant not listed here
  // runs every problem of the sweep.
  std::map<std::string, std::vector<Problem>> problems;
};

struct Configuration {
  Configuration() = default;
  Configuration(const Algorithm* a, Params q, Problem p, Scope s = Scope::kernel, bool flush = false)
      : algorithm(a), params(std::move(q)), problem(p), scope(s), l2_flush(flush), pipeline_(&pipeline_of(*a)) {}
  const Algorithm* algorithm = nullptr;
  Params params;
  Problem problem;
  Scope scope = Scope::kernel;
  bool l2_flush = false;
  // What its backend does in each phase (pipelines.hpp), chosen once, when it is made.
  const Pipeline& pipeline() const { return *pipeline_; }
  // Identity for --resume: algorithm, variant, params, m, n, k, inputs, scope, l2_flush.
  std::string key() const;

 private:
  const Pipeline* pipeline_ = nullptr;
};
// Whether the configuration runs on GPUs (a device or streamed algorithm, a distributed one whose
// engine is not the host's): on a machine without one it is a skipped row.
bool uses_gpus(const Configuration& c);
std::string configuration_key(const std::string& algorithm, const std::string& variant,
                              const std::string& params, long m, long n, long k, const std::string& inputs,
                              const std::string& scope, const std::string& l2_flush);

Inputs parse_inputs(const std::string& text);  // throws UsageError
// Each problem's run of configurations once per kind of inputs, in the order given (problems stay
// outermost, so inputs and the reference are still made once per problem and kind).
std::vector<Configuration> with_inputs(const std::vector<Configuration>& configurations,
                                       const std::vector<Inputs>& inputs);

// The parameter points of one variant: the cross product of the values asked for each axis that
// applies to it (the axis default where none is asked), keeping only points with a compiled
// kernel when the algorithm's compiled set governs the variant. When none of them is compiled,
// all are kept, so the user sees why as `skipped` rows. `left_out` counts what was dropped.
std::vector<Params> parameter_points(const Algorithm& a, const std::string& variant, const AxisValues& asked,
                                     std::size_t* left_out = nullptr);

inline constexpr std::size_t kMaxConfigurations = 1000000;  // a sweep larger than this is an error

// Problems outermost (inputs and the reference are made once per problem; the order of first
// appearance across `problems` and the choices' own lists), then algorithms in
// the order asked, variants, parameter values, scopes, L2 settings. Axes that do not apply to a
// variant are not expanded for it, and repeated values are dropped.
std::vector<Configuration> expand(const std::vector<AlgorithmChoice>& choices,
                                  const std::vector<Problem>& problems, const std::vector<Scope>& scopes,
                                  const std::vector<bool>& l2, std::size_t* left_out = nullptr);

}  // namespace mmlab
