// tiled: the classic shared-memory tiling of the CUDA matrixMul sample.
//
// Source: the lecture notes "Device Memories and Matrix Multiplication" (the matrixMul kernel,
// BLOCK_SIZE = w); also the "Tiling Method" of "SGEMM Implementation and Optimization on CUDA" (an SJTU ACA
// Lab project README),. Split: one TILE x TILE thread block per TILE x TILE tile of C. For each of the ceil(k
// / TILE) steps, every thread loads one element of A's tile and one of B's into shared memory, the block
// synchronises, and each thread adds TILE products to its one output.
// Unlike the sample, m, n and k need not be multiples of TILE: loads past an edge read zero
// (which adds nothing) and stores past an edge are skipped.
// Constraints: tile in the compiled list (`mmlab list tiled`: 8, 16, 32; TILE^2 threads per
// block, at most 1024); any m, n, k.
// Example: mmlab run --algorithms tiled --tile 8,16,32 --size 256:4096:256
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

template <int kTile>
__global__ void __launch_bounds__(kTile* kTile)
    tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k) {
  static_assert(kTile * kTile <= 1024, "one thread per element of a tile");
  __shared__ float as[kTile][kTile];  // (TILE rows of A, TILE of k)
  __shared__ float bs[kTile][kTile];  // (TILE of k, TILE columns of B)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  float acc = 0.f;
  for (int p0 = 0; p0 < k; p0 += kTile) {
    as[ty][tx] = row < m && p0 + tx < k ? a[long(row) * k + p0 + tx] : 0.f;
    bs[ty][tx] = p0 + ty < k && col < n ? b[long(p0 + ty) * n + col] : 0.f;
    __syncthreads();
    // as[ty][p] is one address per row of the warp (a broadcast); bs[p][tx] is 32 consecutive
    // words: no bank conflicts either way.
#pragma unroll
    for (int p = 0; p < kTile; ++p) acc = fmaf(as[ty][p], bs[p][tx], acc);
    __syncthreads();  // before the next step overwrites the tiles
  }
  if (row < m && col < n) c[long(row) * n + col] = acc;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const long t = q.integer("tile");
  LaunchConfig lc;
  lc.block = {unsigned(t), unsigned(t), 1};
  lc.grid = {ceil_div(p.n, t), ceil_div(p.m, t), 1};
  lc.shared_bytes = 2 * sizeof(float) * std::size_t(t * t);
  return lc;
}

template <int kTile>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc) {
  tiled_kernel<kTile><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(r.a, r.b, r.c, int(r.problem.m),
                                                                    int(r.problem.n), int(r.problem.k));
}

#define MMLAB_ENTRY(T) {{"default", {{"tile", #T}}}, launch_kernel<T>},
const KernelTable<Launcher> kKernels = {MMLAB_ENTRY(8) MMLAB_ENTRY(16) MMLAB_ENTRY(32)};
#undef MMLAB_ENTRY

void run(const RunArgs& r) {
  const LaunchConfig lc = launch(r.problem, *r.params, *r.device);
  kKernels.at (*r.params)(r, lc);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(tiled) {
  a.summary = "shared-memory tiling of the CUDA matrixMul sample, guarded for any m, n, k (lecture notes)";
  a.variants = {{"default", "TILE x TILE threads per block, one output each"}};
  a.axes = {{"tile", AxisKind::integer, "tile edge w: a w x w block computes a w x w tile of C", "32"}};
  a.constraints = "any m, n, k";
  a.supports = supports_int_indexing;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
