// The table of contents of the lab: every algorithm, one line each, in listing order.
// Adding an algorithm = one file in algorithms/ defining mmlab::algorithms::<name>() + one line here.
#include "harness/algorithm.hpp"

#define MMLAB_ALGORITHMS(X) \
  X(naive)                  \
  X(tiled)                  \
  X(tiled_ilp)              \
  X(warptile_1d)            \
  X(outer_product)          \
  X(register_tiled)         \
  X(cannon)                 \
  X(dns)                    \
  X(cluster_cannon)         \
  X(cluster_dns)            \
  X(cublas)                 \
  X(eigen)                  \
  X(dist_cannon)            \
  X(dist_summa)             \
  X(dist_dns)

namespace mmlab {

namespace algorithms {
#define MMLAB_DECLARE(name) const Algorithm& name();
MMLAB_ALGORITHMS(MMLAB_DECLARE)
#undef MMLAB_DECLARE
}  // namespace algorithms

const std::vector<const Algorithm*>& registry() {
#define MMLAB_LIST(name) &algorithms::name(),
  static const std::vector<const Algorithm*> all = {MMLAB_ALGORITHMS(MMLAB_LIST)};
#undef MMLAB_LIST
  return all;
}

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
