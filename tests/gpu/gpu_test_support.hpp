// Helpers shared by the GPU tests.
#pragma once

#include <vector>

#include "harness/runner.hpp"

namespace mmlab::test {

// The awkward shapes every algorithm must get right (foundation issue).
inline const std::vector<Problem>& awkward_shapes() {
  static const std::vector<Problem> shapes = {{1, 1, 1},         {7, 7, 7},          {17, 33, 65},
                                              {127, 129, 131},   {1000, 1000, 1000}, {1025, 1025, 1025},
                                              {1041, 1247, 139}, {535, 792, 414},   {129, 4, 12},
                                              {300, 260, 1028}};
  return shapes;
}

// Every parameter point of an algorithm: each variant x the cross product of its axes' values.
inline std::vector<Params> all_parameter_points(const Algorithm& a) {
  std::vector<Params> out;
  for (const Variant& v : a.variants) {
    std::vector<Params> points{Params(v.name)};
    for (const Axis& axis : a.axes) {
      if (!axis.applies_to(v.name)) continue;
      std::vector<Params> next;
      for (const Params& p : points)
        for (const std::string& value : axis.values) {
          Params q = p;
          q.set(axis.name, canonical_value(axis, value));
          next.push_back(q);
        }
      points = next;
    }
    out.insert(out.end(), points.begin(), points.end());
  }
  return out;
}

}  // namespace mmlab::test
