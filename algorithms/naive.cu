// naive: one thread per element of C, reading A and B straight from global memory.
//
// Source: the homework report "naive vs. tiled matrix multiplication" (V100S) ("Naive Implementation") and
// "SGEMM Implementation and Optimization on CUDA" (an SJTU ACA Lab project README) ("Naive Method").
// Split: a 2D grid of `block`-shaped thread blocks tiles C; thread (x, y) of block (bx, by)
// computes C[by * block.y + y][bx * block.x + x] as a dot product over k. threadIdx.x runs
// along a row of C, so a warp reads B and writes C coalesced and broadcasts A.
// Constraints: block.x * block.y <= 1024 (the harness checks the device limit); any m, n, k.
// Example: mmlab run --algorithms naive --block 16x16,32x8,64x4 --size 1024:4096:1024
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

__global__ void naive_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                             int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  const float* a_row = a + long(row) * k;  // (1, k)
  float acc = 0.f;
  for (int p = 0; p < k; ++p) acc = fmaf(a_row[p], b[long(p) * n + col], acc);
  c[long(row) * n + col] = acc;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Shape2 blk = q.shape("block");
  LaunchConfig lc;
  lc.block = {unsigned(blk.x), unsigned(blk.y), 1};
  lc.grid = {ceil_div(p.n, blk.x), ceil_div(p.m, blk.y), 1};
  return lc;
}

void run(const RunArgs& r) {
  const LaunchConfig lc = launch(r.problem, *r.params, *r.device);
  naive_kernel<<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(r.a, r.b, r.c, int(r.problem.m),
                                                             int(r.problem.n), int(r.problem.k));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(naive) {
  a.summary = "one thread per element of C, operands from global memory (homework; SGEMM README)";
  a.variants = {{"default", "one dot product of length k per thread"}};
  a.axes = {{"block",
             AxisKind::shape,
             "thread-block shape x by y (x runs along a row of C)",
             "16x16",
             {"8x8", "16x16", "32x32", "32x8", "8x32", "64x4", "128x2", "256x1", "1024x1"},
             {}}};
  a.constraints = "block.x * block.y <= 1024; any m, n, k";
  a.supports = supports_int_indexing;
  a.launch_config = launch;
  a.run = run;
}

}  // namespace mmlab
