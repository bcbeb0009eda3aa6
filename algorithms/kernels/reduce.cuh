// Sums of partial products: a block-wide sum in shared memory (dns.cu), and the in-order sum of partial
// C slices (skinny's k splits, small's groups of clusters).
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

namespace {

// C = the sum of `slices` partial C's (count elements each, one after another), added in slice order:
// the same sum on every run. Grid-stride over the elements.
__global__ void add_slices_kernel(const float* __restrict__ partial, float* __restrict__ c, long count,
                                  int slices) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    float s = partial[e];
    for (int i = 1; i < slices; ++i) s += partial[i * count + e];
    c[e] = s;
  }
}

}  // namespace
}  // namespace mmlab
