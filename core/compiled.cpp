#include "core/compiled.hpp"

#include <algorithm>

namespace mmlab {

namespace {

bool matches(const CompiledPoint& point, const Params& q) {
  if (point.variant != q.variant()) return false;
  for (const auto& [axis, value] : point.values)
    if (!q.has(axis) || q.text(axis) != value) return false;
  return true;
}

// "tile/block 16/16x16" for one point; the axes part only when `with_axes`.
std::string point_text(const CompiledPoint& p, bool with_axes) {
  std::string axes, values;
  for (const auto& [axis, value] : p.values) {
    axes += (axes.empty() ? "" : "/") + axis;
    values += (values.empty() ? "" : "/") + value;
  }
  return with_axes ? axes + " " + values : values;
}

std::string requested_text(const CompiledPoint& shape, const Params& q) {
  std::string axes, values;
  for (const auto& [axis, value] : shape.values) {
    axes += (axes.empty() ? "" : "/") + axis;
    values += (values.empty() ? "" : "/") + (q.has(axis) ? q.text(axis) : std::string("?"));
  }
  return axes + " " + values;
}

// One variant's points, consecutive points that differ only in their last axis merged:
// "tile/warp/depth/stages 128x128/64x64/8/2,3,4, 128x128/64x64/16/2,3,4".
std::string variant_listing(const std::vector<const CompiledPoint*>& points) {
  std::string out, last_prefix;
  for (const CompiledPoint* p : points) {
    const std::string text = point_text(*p, false);
    const auto slash = text.rfind('/');
    const std::string prefix = slash == std::string::npos ? "" : text.substr(0, slash + 1);
    if (!out.empty() && !prefix.empty() && prefix == last_prefix)
      out += "," + text.substr(slash + 1);
    else
      out += out.empty() ? point_text(*p, true) : ", " + text;
    last_prefix = prefix;
  }
  return out;
}

}  // namespace

bool CompiledSet::governs(const std::string& variant) const {
  return std::any_of(points_.begin(), points_.end(),
                     [&](const CompiledPoint& p) { return p.variant == variant; });
}

std::optional<std::size_t> CompiledSet::find(const Params& q) const {
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (matches(points_[i], q)) return i;
  return std::nullopt;
}

std::optional<std::string> CompiledSet::missing(const std::string& algorithm, const Params& q) const {
  if (!governs(q.variant()) || find(q)) return std::nullopt;
  std::vector<const CompiledPoint*> mine;
  for (const CompiledPoint& p : points_)
    if (p.variant == q.variant()) mine.push_back(&p);
  return algorithm + " " + q.variant() + " compiles " + variant_listing(mine) + "; not " +
         requested_text(*mine.front(), q);
}

std::string CompiledSet::listing() const {
  std::vector<std::string> variants;
  for (const CompiledPoint& p : points_)
    if (std::find(variants.begin(), variants.end(), p.variant) == variants.end())
      variants.push_back(p.variant);
  std::string out;
  for (const std::string& v : variants) {
    std::vector<const CompiledPoint*> mine;
    for (const CompiledPoint& p : points_)
      if (p.variant == v) mine.push_back(&p);
    out += (out.empty() ? "" : "; ") + (variants.size() > 1 ? v + ": " : "") + variant_listing(mine);
  }
  return out;
}

std::vector<std::string> CompiledSet::values(const std::string& axis) const {
  std::vector<std::string> out;
  for (const CompiledPoint& p : points_)
    for (const auto& [name, value] : p.values)
      if (name == axis && std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  return out;
}

}  // namespace mmlab
