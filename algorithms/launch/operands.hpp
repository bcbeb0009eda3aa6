// The operands a kernel reads: A and B (16-byte aligned rows, as stored or copied padded by
// aligned.cuh) with their pitches, and k. Apart from aligned.cuh so that a file that only launches
// (register_tiled_kernels.cuh's lists) does not compile its padding kernel again.
#pragma once

namespace mmlab {

struct Operands {
  const float *a, *b;
  int lda, ldb, k;
};

}  // namespace mmlab
