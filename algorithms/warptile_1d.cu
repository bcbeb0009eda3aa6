// warptile_1d: shared-memory tiling with 1D warp tiling: each thread accumulates a column of
// MICRO_TILE_ROWS outputs.
//
// Source: the homework report "naive vs. tiled matrix multiplication" (V100S) ("Tiled Implementation":
// non-square blocks 32x8, 64x4; "partial warp tiling 1 dimension"; __fmaf_rn accumulation). Split: a BX x BY
// block computes a T x T tile of C, T = BX; thread (tx, ty) owns column tx and rows ty + i BY for i <
// MICRO_TILE_ROWS = T / BY. Per step of k (T wide) the block stages a T x T tile of A and of B in shared
// memory; every thread then reads one B value per k and reuses it across its MICRO_TILE_ROWS rows, so a wide
// block (64x4) reuses each B load 16 times. The A tile is read 4 k-values at a time (one 16-byte load; a warp
// shares one row, so it is a broadcast), which keeps the kernel from being bound by shared-memory load
// instructions. Constraints: block in the compiled list (`mmlab list warptile_1d`); any m, n, k. Example:
// mmlab run --algorithms warptile_1d --block 16x16,32x8,64x4 --size 10000
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

template <int kBx, int kBy>
__global__ void __launch_bounds__(kBx* kBy)
    warptile_1d_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                       int n, int k) {
  constexpr int kT = kBx, kRows = kT / kBy;  // tile edge, MICRO_TILE_ROWS
  static_assert(kT % kBy == 0 && kT % 4 == 0, "BY divides the tile; k is read 4 at a time");
  __shared__ __align__(16) float as[kT][kT];  // (rows, k)
  __shared__ float bs[kT][kT];                // (k, columns)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long row0 = long(blockIdx.y) * kT, col = long(blockIdx.x) * kT + tx;
  float acc[kRows] = {};
  for (long p0 = 0; p0 < k; p0 += kT) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {  // row ty + i BY of A's tile, column tx (coalesced)
      const long row = row0 + ty + i * kBy;
      as[ty + i * kBy][tx] = row < m && p0 + tx < k ? a[row * k + p0 + tx] : 0.f;
    }
#pragma unroll
    for (int r = ty; r < kT; r += kBy) bs[r][tx] = p0 + r < k && col < n ? b[(p0 + r) * n + col] : 0.f;
    __syncthreads();
#pragma unroll 4
    for (int p = 0; p < kT; p += 4) {
      const float b0 = bs[p][tx], b1 = bs[p + 1][tx], b2 = bs[p + 2][tx], b3 = bs[p + 3][tx];
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const float4 av = *reinterpret_cast<const float4*>(&as[ty + i * kBy][p]);
        acc[i] = __fmaf_rn(av.x, b0, acc[i]);
        acc[i] = __fmaf_rn(av.y, b1, acc[i]);
        acc[i] = __fmaf_rn(av.z, b2, acc[i]);
        acc[i] = __fmaf_rn(av.w, b3, acc[i]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const long row = row0 + ty + i * kBy;
    if (row < m && col < n) c[row * n + col] = acc[i];
  }
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Shape2 blk = q.shape("block");
  LaunchConfig lc;
  lc.block = {unsigned(blk.x), unsigned(blk.y), 1};
  lc.grid = {ceil_div(p.n, blk.x), ceil_div(p.m, blk.x), 1};
  lc.shared_bytes = 2 * sizeof(float) * std::size_t(blk.x * blk.x);
  return lc;
}

template <int kBx, int kBy>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc) {
  warptile_1d_kernel<kBx, kBy><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k));
}

// The compiled block shapes (BX, BY): T = BX, MICRO_TILE_ROWS = BX / BY.
#define MMLAB_ENTRY(BX, BY) {{"default", {{"block", shape_text(BX, BY)}}}, launch_kernel<BX, BY>},
const KernelTable<Launcher> kKernels = {MMLAB_ENTRY(16, 16) MMLAB_ENTRY(16, 8) MMLAB_ENTRY(16, 4) MMLAB_ENTRY(
    32, 32) MMLAB_ENTRY(32, 16) MMLAB_ENTRY(32, 8) MMLAB_ENTRY(32, 4) MMLAB_ENTRY(64, 16) MMLAB_ENTRY(64, 8)
                                            MMLAB_ENTRY(64, 4) MMLAB_ENTRY(64, 2)};
#undef MMLAB_ENTRY

void run(const RunArgs& r) {
  kKernels.at (*r.params)(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(warptile_1d) {
  a.summary = "shared-memory tiling with 1D warp tiling, a column of outputs per thread (homework)";
  a.variants = {{"default", "BX x BY block, BX x BX tile, BX / BY outputs per thread"}};
  a.axes = {{"block", AxisKind::shape, "block BXxBY; the tile is BX x BX and each thread computes BX/BY rows",
             "64x4"}};
  a.constraints = "any m, n, k";
  a.supports = supports_int_indexing;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
