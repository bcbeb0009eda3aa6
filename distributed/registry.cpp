// The table of contents of distributed/ (the list is in registry.hpp).
#include "distributed/registry.hpp"

#include "algorithms/registry.hpp"
#include "core/plugin.hpp"

namespace mmlab::algorithms {

std::vector<const Algorithm*> distributed() {
#define MMLAB_LIST(name) &name(),
  return {MMLAB_DISTRIBUTED_ALGORITHMS(MMLAB_LIST)};
#undef MMLAB_LIST
}

}  // namespace mmlab::algorithms

namespace mmlab {

Registry lab_registry(const std::vector<std::shared_ptr<const Plugin>>& plugins) {
  Registry r = join_plugins({algorithms::single_process(), algorithms::distributed()}, plugins);
  for (const auto& [name, why] : algorithms::not_built()) r.add_not_built(name, why);
  return r;
}

}  // namespace mmlab
