// The single-process algorithms of the lab, in listing order (the ladder): each file in algorithms/
// defines mmlab::algorithms::<name>(), its descriptor. The distributed ones are listed in
// distributed/registry.hpp; mmlab's main joins the two lists into its Registry.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/algorithm.hpp"

// `cutlass` exists where CMake found CUTLASS's headers (CMakeLists.txt: MMLAB_HAVE_CUTLASS); elsewhere
// it is named among the algorithms this build left out (not_built, below).
#ifdef MMLAB_HAVE_CUTLASS
#define MMLAB_CUTLASS_ALGORITHMS(X) X(cutlass)
#define MMLAB_CUTLASS_NOT_BUILT {}
#else
#define MMLAB_CUTLASS_ALGORITHMS(X)
#define MMLAB_CUTLASS_NOT_BUILT                                                                                 \
  {                                                                                                          \
    {"cutlass",                                                                                              \
     "CUTLASS's headers were not found when this build was configured (scripts/setup fetches them into "    \
     "build/deps, or set MMLAB_CUTLASS_DIR; then configure and build again)"}                               \
  }
#endif

#define MMLAB_SINGLE_PROCESS_ALGORITHMS(X) \
  X(naive)                                 \
  X(tiled)                                 \
  X(tiled_ilp)                             \
  X(warptile_1d)                           \
  X(outer_product)                         \
  X(register_tiled)                        \
  X(tma_tiled)                             \
  X(streamk)                               \
  X(skinny)                                \
  X(deep_k)                                \
  X(gemv)                                  \
  X(small)                                 \
  X(tf32x3)                                \
  X(flagship)                              \
  X(cannon)                                \
  X(dns)                                   \
  X(cluster_cannon)                        \
  X(cluster_dns)                           \
  X(cublas)                                \
  X(cublasxt)                              \
  MMLAB_CUTLASS_ALGORITHMS(X)              \
  X(out_of_core)                           \
  X(eigen)

namespace mmlab::algorithms {

#define MMLAB_DECLARE(name) const Algorithm& name();
MMLAB_SINGLE_PROCESS_ALGORITHMS(MMLAB_DECLARE)
#undef MMLAB_DECLARE

std::vector<const Algorithm*> single_process();  // the list above, in its order
// The lab's algorithms this build left out, with why: {name, reason}.
inline std::vector<std::pair<std::string, std::string>> not_built() { return MMLAB_CUTLASS_NOT_BUILT; }

}  // namespace mmlab::algorithms
