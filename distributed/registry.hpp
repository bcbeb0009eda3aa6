// The distributed algorithms (Backend::distributed: MPI ranks, NCCL or MPI between them), in listing
// order; each file defines mmlab::algorithms::<name>(). mmlab's main lists them after
// algorithms/registry.hpp's.
#pragma once

#include <vector>

#include "core/algorithm.hpp"

#define MMLAB_DISTRIBUTED_ALGORITHMS(X) \
  X(dist_cannon)                        \
  X(dist_summa)                         \
  X(dist_dns)

namespace mmlab::algorithms {

#define MMLAB_DECLARE(name) const Algorithm& name();
MMLAB_DISTRIBUTED_ALGORITHMS(MMLAB_DECLARE)
#undef MMLAB_DECLARE

std::vector<const Algorithm*> distributed();  // the list above, in its order

}  // namespace mmlab::algorithms
