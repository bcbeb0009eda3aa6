#include "core/params.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "core/invocation.hpp"  // EngineSpec

namespace mmlab {

bool Axis::applies_to(const std::string& variant) const {
  return variants.empty() || std::find(variants.begin(), variants.end(), variant) != variants.end();
}

static std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

unsigned long long parse_bounded(const std::string& text, const std::string& what, unsigned long long lo,
                                 unsigned long long hi) {
  const std::string t = trim(text);
  const std::string range = "a whole number >= " + std::to_string(lo) + " and <= " + std::to_string(hi);
  if (t.empty() || !std::all_of(t.begin(), t.end(), ::isdigit))
    throw UsageError(what + ": '" + text + "' is not " + range);
  unsigned long long v = 0;
  for (char c : t) {
    const unsigned d = unsigned(c - '0');
    if (v > (hi - d) / 10) throw UsageError(what + ": '" + text + "' is out of range: " + range);
    v = v * 10 + d;
  }
  if (v < lo) throw UsageError(what + ": '" + text + "' is out of range: " + range);
  return v;
}

long parse_integer(const std::string& text, const std::string& what) {
  return long(parse_bounded(text, what, 1, kMaxInteger));
}

Shape2 parse_shape(const std::string& text, const std::string& what) {
  std::string t = trim(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto x = t.find('x');
  if (x == std::string::npos) return {parse_integer(t, what), 1};
  if (t.find('x', x + 1) != std::string::npos)
    throw UsageError(what + ": '" + text + "' is not a shape like 16x16");
  return {parse_integer(t.substr(0, x), what), parse_integer(t.substr(x + 1), what)};
}

// "auto", or whole MiB as "<n>M" (or "<n>G" when a whole number of GiB), at least 1 MiB, below 2^50.
static std::string canonical_bytes(const std::string& text, const std::string& what) {
  std::string t = trim(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "auto") return t;
  const std::string form =
      "a memory size such as 512M, 8G or 0.5G (K, M, G, T: powers of 1024; no unit: G), or auto";
  if (t.size() > 1 && t.substr(t.size() - 2) == "ib") t.resize(t.size() - 2);  // 8GiB
  if (t.size() > 1 && t.back() == 'b') t.pop_back();                           // 8GB
  double scale = 1024.0 * 1024 * 1024;
  if (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back()))) {
    const char unit = t.back();
    t.pop_back();
    scale = unit == 'k'   ? 1024.0
            : unit == 'm' ? 1024.0 * 1024
            : unit == 'g' ? scale
            : unit == 't' ? scale * 1024
                          : 0;
    if (scale == 0) throw UsageError(what + ": '" + text + "' is not " + form);
  }
  const bool number = !t.empty() &&
                      std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(c) || c == '.'; }) &&
                      std::count(t.begin(), t.end(), '.') <= 1 && t != ".";
  if (!number) throw UsageError(what + ": '" + text + "' is not " + form);
  const double bytes = std::stod(t) * scale, mib = std::round(bytes / (1024.0 * 1024));
  if (mib < 1 || bytes >= 1125899906842624.0)
    throw UsageError(what + ": '" + text + "' is out of range: 1M ... 1048575G");
  const long long whole = (long long)mib;
  return whole % 1024 == 0 ? std::to_string(whole / 1024) + "G" : std::to_string(whole) + "M";
}

unsigned long long bytes_value(const std::string& canonical) {
  if (canonical == "auto" || canonical.empty()) return 0;
  const unsigned long long n = std::stoull(canonical.substr(0, canonical.size() - 1));
  return n << (canonical.back() == 'G' ? 30 : 20);
}

std::string canonical_value(const Axis& axis, const std::string& text) {
  const std::string what = "axis '" + axis.name + "'";
  if (axis.kind == AxisKind::bytes) return canonical_bytes(text, what);
  if (axis.kind == AxisKind::integer) return std::to_string(parse_bounded(text, what, 1, axis.max));
  if (axis.kind == AxisKind::choice) {
    std::string t = trim(text);
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::find(axis.values.begin(), axis.values.end(), t) != axis.values.end()) return t;
    if (std::find(axis.on_request.begin(), axis.on_request.end(), t) != axis.on_request.end()) return t;
    std::string valid;
    for (const std::string& v : axis.values) valid += (valid.empty() ? "" : ", ") + v;
    for (const std::string& v : axis.on_request) valid += (valid.empty() ? "" : ", ") + v + " (on request)";
    throw UsageError(what + ": '" + text + "' is not one of " + valid);
  }
  if (axis.kind == AxisKind::grid) {
    std::vector<std::string> parts(1);
    for (char c : trim(text)) {
      if (c == 'x' || c == 'X')
        parts.emplace_back();
      else
        parts.back().push_back(c);
    }
    if (parts.size() < 2 || parts.size() > 3 ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& x) { return x.empty(); }))
      throw UsageError(what + ": '" + text + "' is not rows x cols [x layers], e.g. 2x2 or 2x1x2");
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
      out += (i ? "x" : "") + std::to_string(parse_integer(parts[i], what));
    if (parts.size() == 3 && out.substr(out.size() - 2) == "x1") out.resize(out.size() - 2);  // 2x2x1 = 2x2
    return out;
  }
  const Shape2 s = parse_shape(text, what);
  return std::to_string(s.x) + "x" + std::to_string(s.y);
}

void Params::set(const std::string& axis, const std::string& canonical) {
  specs_.erase(std::remove_if(specs_.begin(), specs_.end(), [&](auto& kv) { return kv.first == axis; }), specs_.end());
  for (auto& [name, value] : values_)
    if (name == axis) {
      value = canonical;
      return;
    }
  values_.emplace_back(axis, canonical);
}

void Params::set(const std::string& axis, std::shared_ptr<const EngineSpec> spec) {
  set(axis, spec->text());
  specs_.emplace_back(axis, std::move(spec));
}

const EngineSpec* Params::spec(const std::string& axis) const {
  for (auto& [name, spec] : specs_)
    if (name == axis) return spec.get();
  return nullptr;
}

bool Params::has(const std::string& axis) const {
  return std::any_of(values_.begin(), values_.end(), [&](auto& kv) { return kv.first == axis; });
}

const std::string& Params::text(const std::string& axis) const {
  for (auto& [name, value] : values_)
    if (name == axis) return value;
  throw std::logic_error("parameter '" + axis + "' is not set for variant '" + variant_ + "'");
}

long Params::integer(const std::string& axis) const { return parse_integer(text(axis), axis); }
Shape2 Params::shape(const std::string& axis) const { return parse_shape(text(axis), axis); }
unsigned long long Params::bytes(const std::string& axis) const { return bytes_value(text(axis)); }

Params Params::parse(std::string variant, const std::string& canonical, const std::vector<std::string>* axes) {
  Params out(std::move(variant));
  std::string* last = nullptr;  // the value a part without a name of `axes` continues
  for (std::size_t at = 0; at < canonical.size();) {
    const std::size_t end = std::min(canonical.find(';', at), canonical.size()), eq = canonical.find('=', at);
    const std::string part = canonical.substr(at, end - at);
    if (eq < end) {
      const std::string name = canonical.substr(at, eq - at);
      if (last && axes && std::find(axes->begin(), axes->end(), name) == axes->end()) {
        *last += ";" + part;
      } else {
        out.set(name, canonical.substr(eq + 1, end - eq - 1));
        for (auto& [n, v] : out.values_)
          if (n == name) last = &v;
      }
    } else if (last && axes) {
      *last += ";" + part;
    }
    at = end + 1;
  }
  return out;
}

std::string Params::canonical() const {
  std::string out;
  for (auto& [name, value] : values_) {
    if (!out.empty()) out += ';';
    out += name + '=' + value;
  }
  return out;
}

}  // namespace mmlab
