// A transpose through shared memory (its launcher: launch/tma_maps.cuh).
#pragma once

namespace mmlab {
namespace {

// at (cols x rows, pitch ld_t) = src^T for src (rows x cols, pitch cols): 32 x 32 tiles through
// shared memory (pitch 33: the column reads fall on distinct banks), both sides coalesced.
__global__ void transpose_kernel(const float* __restrict__ src, int rows, int cols, float* __restrict__ at,
                                 int ld_t) {
  __shared__ float tile[32][33];
  const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int r = r0 + i, col = c0 + threadIdx.x;
    if (r < rows && col < cols) tile[i][threadIdx.x] = src[long(r) * cols + col];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int col = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && col < cols) at[long(col) * ld_t + r] = tile[threadIdx.x][i];
  }
}

}  // namespace
}  // namespace mmlab
