// The parts of an algorithm's descriptor and of the registry that know no algorithm: lookups by
// name and the compiled set's axis values. The lists themselves are algorithms/registry.hpp and
// distributed/registry.hpp.
#include "core/algorithm.hpp"

namespace mmlab {

DeviceInfo h100_description() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3 (described)";
  d.sm_count = 132, d.cc_major = 9, d.cc_minor = 0, d.max_threads_per_block = 1024;
  d.shared_per_block_optin = 227 * 1024, d.l2_bytes = 50 * 1024 * 1024;
  d.max_grid_y = 65535, d.max_grid_z = 65535;
  return d;
}

int planning_sms(const DeviceInfo& d) {
  static const int described = h100_description().sm_count;
  return d.sm_count > 0 ? d.sm_count : described;
}

Registry::Registry(std::initializer_list<std::vector<const Algorithm*>> lists) {
  for (const auto& list : lists)
    for (const Algorithm* a : list) {
      if (find(a->name)) throw std::logic_error("two algorithms are named '" + a->name + "'");
      all_.push_back(a);
    }
}

const Algorithm* Registry::find(const std::string& name) const {
  for (const Algorithm* a : all_)
    if (a->name == name) return a;
  return nullptr;
}

std::string Registry::unknown(const std::string& name) const {
  const auto it = not_built_.find(name);
  if (it != not_built_.end()) return "algorithm '" + name + "' is not built here: " + it->second;
  return "unknown algorithm '" + name + "' (valid: " + names() + ")";
}

std::string Registry::names() const {
  std::string out;
  for (const Algorithm* a : all_) out += (out.empty() ? "" : ", ") + a->name;
  return out;
}

std::string arithmetic_name(const Arithmetic& a) {
  const char* unit = a.unit == MathUnit::fp32          ? "FP32 units"
                     : a.unit == MathUnit::tf32_tensor ? "TF32 tensor cores"
                     : a.unit == MathUnit::fp16_tensor ? "FP16/BF16 tensor cores"
                                                       : "INT8 tensor cores";
  return a.passes > 1 ? std::string(unit) + " x " + std::to_string(a.passes) : std::string(unit);
}

std::string Algorithm::variant_names() const {
  std::string out;
  for (const Variant& x : variants) out += (out.empty() ? "" : ", ") + x.name;
  return out;
}

const Variant* Algorithm::find_variant(const std::string& v) const {
  for (const Variant& x : variants)
    if (x.name == v) return &x;
  return nullptr;
}

const Axis* Algorithm::find_axis(const std::string& a) const {
  for (const Axis& x : axes)
    if (x.name == a) return &x;
  return nullptr;
}

void Algorithm::set_nondeterminism(const std::string& variant, std::string text) {
  for (Variant& v : variants)
    if (v.name == variant) {
      v.nondeterminism = std::move(text);
      return;
    }
  throw std::logic_error(name + ": no variant '" + variant + "' to mark nondeterministic");
}

void Algorithm::set_compiled(CompiledSet set) {
  compiled = std::move(set);
  for (Axis& x : axes)
    if (std::vector<std::string> v = compiled.values(x.name); !v.empty()) x.values = std::move(v);
  constraints = "compiled: " + compiled.listing() + (constraints.empty() ? "" : "; " + constraints);
}

}  // namespace mmlab
