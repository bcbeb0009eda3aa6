// A block-wide sum in shared memory, shared by the kernels that reduce partial products (dns.cu).
#pragma once

namespace mmlab {

// Sum of term[0 .. count) into term[0], as a shared-memory tree. `lane` indexes the terms; the
// loop over levels is unrolled for up to 1024 terms and every thread of the block must call it
// (it synchronises). `stride_of_term` spaces consecutive terms in memory.
__device__ inline void tree_reduce(float* term, int lane, int count, int stride_of_term) {
  int span = 1;
  while (span < count) span <<= 1;  // the next power of two
#pragma unroll
  for (int level = 9; level >= 0; --level) {
    const int half = 1 << level;
    if (half < span) {  // uniform across the block
      if (lane < half && lane + half < count)
        term[lane * stride_of_term] += term[(lane + half) * stride_of_term];
      __syncthreads();
    }
  }
}

}  // namespace mmlab
