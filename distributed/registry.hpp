// The distributed algorithms (Backend::distributed: MPI ranks, NCCL or MPI between them), in listing
// order; each file defines mmlab::algorithms::<name>(). lab_registry() lists them after
// algorithms/registry.hpp's.
#pragma once

#include <memory>
#include <vector>

#include "core/algorithm.hpp"

#define MMLAB_DISTRIBUTED_ALGORITHMS(X) \
  X(dist_cannon)                        \
  X(dist_summa)                         \
  X(dist_dns)                           \
  X(cublasmp)

namespace mmlab::algorithms {

#define MMLAB_DECLARE(name) const Algorithm& name();
MMLAB_DISTRIBUTED_ALGORITHMS(MMLAB_DECLARE)
#undef MMLAB_DECLARE

std::vector<const Algorithm*> distributed();  // the list above, in its order

}  // namespace mmlab::algorithms

namespace mmlab {

class Plugin;

// The lab: algorithms/'s list, then distributed/'s, then the plugins' algorithms in the order given;
// the one list mmlab's main and the test programs run (a name given twice is a UsageError).
Registry lab_registry(const std::vector<std::shared_ptr<const Plugin>>& plugins);

}  // namespace mmlab
