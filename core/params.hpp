// Parameter axes and the values one configuration takes on them.
//
// An axis is declared by an algorithm (name, kind, default, the values tests sweep); values arrive
// as text from the CLI or an experiment file and are parsed and canonicalised here, so that
// "16X16", " 16x16" and "16x16" are one configuration and a malformed value is an error up front.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mmlab {

struct EngineSpec;  // core/invocation.hpp

// Bad input from the user: reported as one clear message and exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The text of an engine spec, "algorithm:variant[:params]" (core/invocation.hpp's EngineSpec, the
// analysis' --baseline, a distributed row's `engine`), split in one place: the algorithm before the
// first colon, the variant up to the second, the parameters after it (they may hold colons: a
// flagship pick's `kernel`). Without a colon the text is the algorithm alone.
struct SpecParts {
  std::string algorithm, variant, params;
  bool has_variant = false, has_params = false;
  std::string engine() const { return has_variant ? algorithm + ":" + variant : algorithm; }
};
inline SpecParts split_spec(const std::string& text) {
  SpecParts out;
  const std::size_t a = text.find(':');
  out.algorithm = text.substr(0, a);
  if (a == std::string::npos) return out;
  const std::size_t v = text.find(':', a + 1);
  out.has_variant = true;
  out.variant = text.substr(a + 1, v == std::string::npos ? v : v - a - 1);
  if (v == std::string::npos) return out;
  out.has_params = true;
  out.params = text.substr(v + 1);
  return out;
}

enum class AxisKind {
  integer,  // "32"
  shape,    // "16x16" (x by y); a single "256" means 256x1
  grid,     // "2x2" or "2x1x2" (rows x cols [x layers])
  choice,   // one of the axis's `values`, e.g. "cublas"
  bytes,    // a memory size: "auto", or a number with a unit K, M, G or T (powers of 1024; no unit:
            // G), canonical as whole MiB ("512M") or GiB ("8G")
};

struct Axis {
  std::string name;  // shared across algorithms: block, tile, outputs_per_thread, ...
  AxisKind kind = AxisKind::integer;
  std::string description;
  std::string default_value;
  std::vector<std::string> values = {};    // what `all` and the GPU tests sweep (set from a compiled set)
  std::vector<std::string> variants = {};  // the variants it applies to; empty: all
  unsigned long long max = 2147483647;     // integer axes: the largest value accepted
  // choice axes: values accepted when named but left out of `all` (and the GPU tests' sweep), e.g. a
  // TF32 engine that must not stand in for the FP32 ones unasked
  std::vector<std::string> on_request = {};
  bool applies_to(const std::string& variant) const;
};

struct Shape2 {
  long x = 1, y = 1;
};

// Parse and canonicalise one value of an axis; throws UsageError naming the axis.
std::string canonical_value(const Axis& axis, const std::string& text);
// A whole number in lo ... hi (no sign, no overflow: checked digit by digit); UsageError naming
// `what` and the range otherwise. parse_integer: 1 ... kMaxInteger (sizes, axis values: the
// kernels index with int).
inline constexpr unsigned long long kMaxInteger = 2147483647;
unsigned long long parse_bounded(const std::string& text, const std::string& what, unsigned long long lo,
                                 unsigned long long hi);
long parse_integer(const std::string& text, const std::string& what);
Shape2 parse_shape(const std::string& text, const std::string& what);
// The bytes of a canonical `bytes` value ("8G", "512M"); 0 for "auto".
unsigned long long bytes_value(const std::string& canonical);

// One point of the parameter space: a variant and a value for each axis that applies to it.
class Params {
 public:
  Params() = default;
  explicit Params(std::string variant) : variant_(std::move(variant)) {}

  const std::string& variant() const { return variant_; }
  void set(const std::string& axis, const std::string& canonical);
  // A value that names another configuration (a dispatcher's pick: the flagship's `kernel`), kept as
  // that configuration: its text (what canonical() writes) set from it, and spec() hands it back,
  // never parsed again. set() with text drops it. Copies share it.
  void set(const std::string& axis, std::shared_ptr<const EngineSpec> spec);
  const EngineSpec* spec(const std::string& axis) const;  // null where the value is text alone
  bool has(const std::string& axis) const;
  const std::string& text(const std::string& axis) const;
  long integer(const std::string& axis) const;
  Shape2 shape(const std::string& axis) const;
  unsigned long long bytes(const std::string& axis) const;  // a `bytes` axis: 0 for auto
  // (axis, canonical value) pairs, in the order set.
  const std::vector<std::pair<std::string, std::string>>& values() const { return values_; }
  // "block=16x16;tile=32" in axis declaration order ("" with no axes); the CSV's params column.
  std::string canonical() const;
  // The point `canonical` names (as canonical() writes it: the CSV's params and resolved columns, an
  // engine's or a dispatcher's pick), of `variant`; the values as written, not checked. With `axes`
  // (the algorithm's names; its read_params, core/invocation.hpp) a part whose name is none of them
  // belongs to the value before it: a value that is itself a configuration (the flagship's
  // `kernel=tf32x3:half3:stages=3;split=4;choice=measured`) is read whole.
  static Params parse(std::string variant, const std::string& canonical, const std::vector<std::string>* axes = nullptr);

 private:
  std::string variant_;
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::pair<std::string, std::shared_ptr<const EngineSpec>>> specs_;
};

}  // namespace mmlab
