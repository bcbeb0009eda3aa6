// Helpers shared by the GPU tests.
#pragma once

#include <vector>

#include "harness/runner.hpp"

namespace mmlab::test {

// The awkward shapes every algorithm must get right (foundation issue).
inline const std::vector<Problem>& awkward_shapes() {
  static const std::vector<Problem> shapes = {
      {1, 1, 1},          {7, 7, 7},         {17, 33, 65},    {127, 129, 131}, {1000, 1000, 1000},
      {1025, 1025, 1025}, {1041, 1247, 139}, {535, 792, 414}, {129, 4, 12},    {300, 260, 1028}};
  return shapes;
}

// Every parameter point of an algorithm, as `--variant all --<axis> all` sweeps them: each variant x
// the cross product of its axes' values, every compiled kernel included and nothing uncompiled.
inline std::vector<Params> all_parameter_points(const Algorithm& a) {
  AxisValues all;
  for (const Axis& axis : a.axes) {
    std::vector<std::string> values;
    for (const std::string& v : axis.values) values.push_back(canonical_value(axis, v));
    all.emplace_back(axis.name, values);
  }
  std::vector<Params> out;
  for (const Variant& v : a.variants) {
    const std::vector<Params> points = parameter_points(a, v.name, all);
    out.insert(out.end(), points.begin(), points.end());
  }
  return out;
}

}  // namespace mmlab::test
