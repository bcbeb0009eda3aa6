// The table of contents of distributed/ (the list is in registry.hpp).
#include "distributed/registry.hpp"

namespace mmlab::algorithms {

std::vector<const Algorithm*> distributed() {
#define MMLAB_LIST(name) &name(),
  return {MMLAB_DISTRIBUTED_ALGORITHMS(MMLAB_LIST)};
#undef MMLAB_LIST
}

}  // namespace mmlab::algorithms
