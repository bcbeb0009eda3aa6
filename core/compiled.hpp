// The configurations an algorithm compiled kernels for: the one list that dispatch, the `supports`
// check, `mmlab list`, the sweep's `all` and the GPU tests all read.
//
// A point names a variant and the values of the axes its kernel is templated on ("tile=16;
// block=16x16"); axes a point does not name (a runtime `split`, say) take any value. A variant
// with no point at all is not governed by the set (its kernels take every value at run time).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/params.hpp"

namespace mmlab {

struct CompiledPoint {
  std::string variant;
  std::vector<std::pair<std::string, std::string>> values;  // (axis, canonical value)
};

class CompiledSet {
 public:
  CompiledSet() = default;
  explicit CompiledSet(std::vector<CompiledPoint> points) : points_(std::move(points)) {}

  const std::vector<CompiledPoint>& points() const { return points_; }
  bool governs(const std::string& variant) const;
  // The index of the point that `q` selects; nullopt when its variant is governed and nothing matches.
  std::optional<std::size_t> find(const Params& q) const;
  // nullopt, or why `q` cannot run: "<algorithm> compiles ...; not ...".
  std::optional<std::string> missing(const std::string& algorithm, const Params& q) const;
  // "tile/block 16/16x16, 32/32x32" per variant, "; "-separated (variants named when several).
  std::string listing() const;
  // The distinct values of one axis, in declaration order (empty when the set does not fix it).
  std::vector<std::string> values(const std::string& axis) const;
  // Whether `q` (a full parameter point of `variant`) agrees with a compiled point.
  bool admits(const Params& q) const { return !missing("", q); }

 private:
  std::vector<CompiledPoint> points_;
};

// Canonical text of a shape value, as the `block` and `tile` axes write it: "16x8".
inline std::string shape_text(long x, long y) { return std::to_string(x) + "x" + std::to_string(y); }

}  // namespace mmlab
