// The copy that pads an operand to 16-byte-aligned rows (its launcher: launch/aligned.cuh).
#pragma once

namespace mmlab {
namespace {

// dst (rows x cols_dst, pitch cols_dst) = src (rows x cols, pitch cols) with zeros past cols and
// past src_rows: the padded, 16-byte-aligned copy of an operand whose rows are not.
__global__ void pad_copy(const float* __restrict__ src, int src_rows, int cols, float* __restrict__ dst,
                         int rows, int cols_dst) {
  const long total = long(rows) * cols_dst;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < total; e += long(gridDim.x) * blockDim.x) {
    const int r = int(e / cols_dst), col = int(e % cols_dst);
    dst[e] = r < src_rows && col < cols ? src[long(r) * cols + col] : 0.f;
  }
}

}  // namespace
}  // namespace mmlab
