// tiled_ilp: shared-memory tiling with instruction-level parallelism, rectangular tiles.
//
// Source: A. Gupta and S. Bhalla, "Matrix Multiplication on GPU" (2022) (sections 1.2.1 to 1.2.3).
// Split: a BT x BT thread block computes a TM x TM tile of C; its A tile is TM x TK and its B tile
// TK x TM (the paper's "128 x 64 tile for A and B": tile = TMxTK = 128x64, 64 KiB of shared
// memory, so dynamic shared memory past 48 KiB). Each thread computes TILESCALE x TILESCALE
// outputs, TILESCALE = TM / BT, spread uniformly over the tile (rows ty + r BT, columns
// tx + s BT), so a warp's loads and stores stay coalesced; accumulators live in registers and
// the loops are unrolled. Loads past an edge read zero and stores past an edge are skipped (the
// paper guarded stores only; unguarded loads would read other rows' values into valid outputs
// at the k edge, or fault at the end of the matrix).
// Shared layout: A rows padded to TK + 4 floats, so the k dimension is read 4 at a time (one
// 16-byte load) and rows ty, ty + 1 of a warp fall on different banks; B unpadded (a warp reads
// 16 or 32 consecutive columns).
// Constraints: the compiled (tile, block) pairs (`mmlab list tiled_ilp`: tiles 128x64, 128x32,
// 64x64, 64x32, each with blocks 8x8, 16x16, 32x32).
// Example: mmlab run --algorithms tiled_ilp --block 8x8,16x16,32x32 --tile 128x64 --size 256:4096:256
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

template <int kTM, int kTK, int kBT>
__global__ void __launch_bounds__(kBT* kBT)
    tiled_ilp_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                     int n, int k) {
  static_assert(kTM % kBT == 0 && kTK % 4 == 0, "the block divides the tile; k is read 4 at a time");
  constexpr int kScale = kTM / kBT;  // TILESCALE
  constexpr int kThreads = kBT * kBT, kPitch = kTK + 4;
  extern __shared__ float4 smem4[];
  float* as = reinterpret_cast<float*>(smem4);  // (TM, TK + 4)
  float* bs = as + kTM * kPitch;                // (TK, TM)
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kBT + tx;
  const long row0 = long(blockIdx.y) * kTM, col0 = long(blockIdx.x) * kTM;
  float acc[kScale][kScale] = {};
  for (long p0 = 0; p0 < k; p0 += kTK) {
#pragma unroll
    for (int e = tid; e < kTM * kTK; e += kThreads) {  // coalesced: consecutive threads, consecutive k
      const int r = e / kTK, x = e % kTK;
      as[r * kPitch + x] = row0 + r < m && p0 + x < k ? a[(row0 + r) * k + p0 + x] : 0.f;
    }
#pragma unroll
    for (int e = tid; e < kTK * kTM; e += kThreads) {  // consecutive threads, consecutive columns
      const int r = e / kTM, x = e % kTM;
      bs[r * kTM + x] = p0 + r < k && col0 + x < n ? b[(p0 + r) * n + col0 + x] : 0.f;
    }
    __syncthreads();
#pragma unroll 2
    for (int p = 0; p < kTK; p += 4) {
      float4 av[kScale];
#pragma unroll
      for (int i = 0; i < kScale; ++i)
        av[i] = *reinterpret_cast<const float4*>(&as[(ty + i * kBT) * kPitch + p]);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float bv[kScale];
#pragma unroll
        for (int j = 0; j < kScale; ++j) bv[j] = bs[(p + q) * kTM + tx + j * kBT];
#pragma unroll
        for (int i = 0; i < kScale; ++i) {
          const float x = q == 0 ? av[i].x : q == 1 ? av[i].y : q == 2 ? av[i].z : av[i].w;
#pragma unroll
          for (int j = 0; j < kScale; ++j) acc[i][j] = fmaf(x, bv[j], acc[i][j]);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kScale; ++i)
#pragma unroll
    for (int j = 0; j < kScale; ++j) {
      const long row = row0 + ty + i * kBT, col = col0 + tx + j * kBT;
      if (row < m && col < n) c[row * n + col] = acc[i][j];  // the paper's guarded store
    }
}

std::size_t shared_bytes(long tm, long tk) { return sizeof(float) * std::size_t(tm * (tk + 4) + tk * tm); }

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Shape2 tile = q.shape("tile"), blk = q.shape("block");
  LaunchConfig lc;
  lc.block = {unsigned(blk.x), unsigned(blk.y), 1};
  lc.grid = {ceil_div(p.n, tile.x), ceil_div(p.m, tile.x), 1};
  lc.shared_bytes = shared_bytes(tile.x, tile.y);
  return lc;
}

template <int kTM, int kTK, int kBT>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc) {
  allow_shared_bytes(tiled_ilp_kernel<kTM, kTK, kBT>, lc.shared_bytes);
  tiled_ilp_kernel<kTM, kTK, kBT><<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k));
}

// The compiled (TM, TK, BT) triples: tile TMxTK, square block BTxBT.
#define MMLAB_ENTRY(TM, TK, BT) \
  {{"default", {{"tile", shape_text(TM, TK)}, {"block", shape_text(BT, BT)}}}, launch_kernel<TM, TK, BT>},
const KernelTable<Launcher> kKernels = {
    MMLAB_ENTRY(128, 64, 8) MMLAB_ENTRY(128, 64, 16) MMLAB_ENTRY(128, 64, 32) MMLAB_ENTRY(128, 32, 8)
        MMLAB_ENTRY(128, 32, 16) MMLAB_ENTRY(128, 32, 32) MMLAB_ENTRY(64, 64, 8) MMLAB_ENTRY(64, 64, 16)
            MMLAB_ENTRY(64, 64, 32) MMLAB_ENTRY(64, 32, 8) MMLAB_ENTRY(64, 32, 16) MMLAB_ENTRY(64, 32, 32)};
#undef MMLAB_ENTRY

void run(const RunArgs& r) {
  kKernels.at (*r.params)(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(tiled_ilp) {
  a.summary = "rectangular shared-memory tiles, TILESCALE^2 spread outputs per thread (Gupta & Bhalla 2022)";
  a.variants = {{"default", "TM x TM tile of C per block, k in steps of TK, guarded edges"}};
  a.axes = {{"tile", AxisKind::shape, "TMxTK: A tile TM x TK and B tile TK x TM in shared memory", "128x64"},
            {"block", AxisKind::shape, "square thread block BTxBT; TILESCALE = TM / BT outputs per dimension",
             "16x16"}};
  a.constraints = "any m, n, k";
  a.supports = supports_int_indexing;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
