// Helpers shared by the GPU tests.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "harness/pipeline.hpp"
#include "tests/lab.hpp"

namespace mmlab::test {

// The awkward shapes every algorithm must get right (foundation issue), GEMV-like ones among them
// (a row vector times B, A times a vector: gemv's two kernels, issue #61), and rows of A 16-byte
// aligned where B's are not (k % 4 == 0, n % 4 != 0: deep_k's quads kernel reads each operand apart),
// A times a vector with k % 4 != 0 (gemv's cols kernel finds each row's first 16-byte boundary: every
// offset 0-3, k split over a cluster), and a few rows times B (gemv's ring_rows: 4-byte copies where n
// % 4 != 0, 16-byte ones at capacity 16).
inline const std::vector<Problem>& awkward_shapes() {
  static const std::vector<Problem> shapes = {
      {1, 1, 1},          {7, 7, 7},          {17, 33, 65},      {127, 129, 131},
      {1000, 1000, 1000}, {1025, 1025, 1025}, {1041, 1247, 139}, {535, 792, 414},
      {129, 4, 12},       {300, 260, 1028},   {1, 4099, 2053},   {2053, 3, 1031},
      {331, 129, 1036},   {1037, 1, 4097},    {3, 1029, 2051},   {13, 4100, 1031}};
  return shapes;
}

// The shapes the algorithm tests run: all awkward shapes, or with MMLAB_GPU_TEST_MAX_FMAS=N those of
// at most N multiply-adds (the sanitizer sweep's racecheck, which instruments every shared access).
inline std::vector<Problem> tested_shapes() {
  const char* env = std::getenv("MMLAB_GPU_TEST_MAX_FMAS");
  const double most = env ? std::strtod(env, nullptr) : 0;
  std::vector<Problem> out;
  for (const Problem& p : awkward_shapes())
    if (most <= 0 || double(p.m) * double(p.n) * double(p.k) <= most) out.push_back(p);
  return out;
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

// The points the GPU tests verify: all of them, or with MMLAB_GPU_TEST_POINTS=N (the sanitizer
// sweep, scripts/sanitize) at most N per variant, spread from the first compiled point to the last.
inline std::vector<Params> tested_parameter_points(const Algorithm& a) {
  const std::vector<Params> all = all_parameter_points(a);
  const char* env = std::getenv("MMLAB_GPU_TEST_POINTS");
  const long most = env ? std::strtol(env, nullptr, 10) : 0;
  if (most <= 0) return all;
  std::vector<Params> out;
  for (const Variant& v : a.variants) {
    std::vector<Params> mine;
    for (const Params& p : all)
      if (p.variant() == v.name) mine.push_back(p);
    const std::size_t n = mine.size(), take = std::min<std::size_t>(n, std::size_t(most));
    for (std::size_t i = 0; i < take; ++i) out.push_back(mine[take == 1 ? 0 : i * (n - 1) / (take - 1)]);
  }
  return out;
}

}  // namespace mmlab::test
