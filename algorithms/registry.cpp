// The table of contents of algorithms/ (the list itself is in registry.hpp, so that other layers
// can name a descriptor: the distributed engines use register_tiled's).
// Adding an algorithm = one file in algorithms/ defining mmlab::algorithms::<name>() + one line there.
#include "algorithms/registry.hpp"

namespace mmlab::algorithms {

std::vector<const Algorithm*> single_process() {
#define MMLAB_LIST(name) &name(),
  return {MMLAB_SINGLE_PROCESS_ALGORITHMS(MMLAB_LIST)};
#undef MMLAB_LIST
}

}  // namespace mmlab::algorithms
