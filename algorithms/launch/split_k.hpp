// Split-k's launch side, for register_tiled, tma_tiled and tf32x3 (the rule: models/split_k.hpp):
// each block adds its partial output tile into C atomically, so C is zeroed first and the order of
// the sum changes from run to run (a split result is not bit-reproducible).
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>

#include "algorithms/models/split_k.hpp"
#include "core/algorithm.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab {

// Split-k's blocks add in whatever order they finish: C is not bit-identical from run to run. Marks
// `variants` so, for the configurations (resolved) whose split is over 1.
inline void mark_split_k(Algorithm& a, std::initializer_list<const char*> variants) {
  for (const char* v : variants)
    a.set_nondeterminism(v, "when k is split (split > 1), its partial tiles added atomically");
  a.is_nondeterministic = [](const Problem&, const Params& q) {
    return q.has("split") && q.text("split") != "auto" && q.integer("split") > 1;
  };
}

// C = 0 before a split launch (its blocks add into it).
inline void zero_for_split_k(const RunArgs& r) {
  MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * std::size_t(r.problem.m * r.problem.n), r.stream));
}

}  // namespace mmlab
