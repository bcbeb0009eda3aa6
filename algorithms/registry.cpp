// The table of contents of the lab: every algorithm, one line each, in listing order.
// Adding an algorithm = one file in algorithms/ defining mmlab::algorithms::<name>() + one line here.
#include "core/algorithm.hpp"

#define MMLAB_ALGORITHMS(X) \
  X(naive)                  \
  X(tiled)                  \
  X(tiled_ilp)              \
  X(warptile_1d)            \
  X(outer_product)          \
  X(register_tiled)         \
  X(tma_tiled)              \
  X(tf32x3)                 \
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

}  // namespace mmlab
