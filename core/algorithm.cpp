// The parts of an algorithm's descriptor and of the registry that know no algorithm: lookups by
// name and the compiled set's axis values. The list itself is algorithms/registry.cpp.
#include "core/algorithm.hpp"

namespace mmlab {

const Algorithm* find_algorithm(const std::string& name) {
  for (const Algorithm* a : registry())
    if (a->name == name) return a;
  return nullptr;
}

std::string algorithm_names() {
  std::string out;
  for (const Algorithm* a : registry()) out += (out.empty() ? "" : ", ") + a->name;
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

void Algorithm::set_compiled(CompiledSet set) {
  compiled = std::move(set);
  for (Axis& x : axes)
    if (std::vector<std::string> v = compiled.values(x.name); !v.empty()) x.values = std::move(v);
  constraints = "compiled: " + compiled.listing() + (constraints.empty() ? "" : "; " + constraints);
}

}  // namespace mmlab
