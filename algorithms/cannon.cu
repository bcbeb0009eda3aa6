// cannon: Cannon's algorithm on the GPU, from one thread block to a grid of them.
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013)
// (sections 2.3, 3.1, 5): C[i][j] = sum_s A[i][(i+j+s) % n] * B[(i+j+s) % n][j], each (i, j) of a torus
// starting at a different point of the k loop, so that neighbours never want the same operand at once.
// Variants and how they split the work:
//   single_block  one block of n x m threads, thread (j, i) owns C[i][j]; A and B whole in shared
//                 memory; thread walks k in the order (i + j + s) % k (section 3.1).
//   shift         a TILE x TILE torus per tile of C: each thread holds one element of A and one of B
//                 in registers; after the initial skew (A[i][(i+j)%T], B[(i+j)%T][j]) every step
//                 multiplies, then passes A one place left and B one place up through
//                 double-buffered shared memory; k is walked one TILE-wide slice at a time.
//   tiled_atomic  one TILE x TILE block per TILE^3 sub-product (grid n/T x m/T x k/T), Cannon order
//                 inside, results accumulated into C (zeroed first) with atomicAdd (section 5).
//   tiled         a grid of blocks, each owning a TILE x TILE tile of C and walking the k tiles in
//                 Cannon's skewed order (bi + bj + s) mod q, q = ceil(k / TILE); inside a tile each
//                 thread starts its k loop at (tx + ty) mod TILE; `block` threads compute
//                 (TILE / block.y) x (TILE / block.x) outputs each, strided by the block shape.
// Constraints: single_block needs m n <= 1024 threads and A, B in shared memory; shift and
// tiled_atomic compile tiles 8, 16, 32 (TILE^2 <= 1024 threads); tiled compiles the (tile, block)
// pairs listed by `mmlab list cannon`. Edges are zero-padded: any m, n, k otherwise.
// Example: mmlab run --algorithms cannon --cannon.variant tiled --tile 32,64 --block 16x16 --size 4096
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

__global__ void single_block_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int m, int n, int k) {
  extern __shared__ float smem[];
  float* sa = smem;          // (m, k)
  float* sb = smem + m * k;  // (k, n)
  const int j = threadIdx.x, i = threadIdx.y, tid = i * n + j;
  for (int e = tid; e < m * k; e += m * n) sa[e] = a[e];
  for (int e = tid; e < k * n; e += m * n) sb[e] = b[e];
  __syncthreads();
  float acc = 0.f;
  for (int s = 0, p = (i + j) % k; s < k; ++s, p = p + 1 == k ? 0 : p + 1)
    acc = fmaf(sa[i * k + p], sb[p * n + j], acc);
  c[i * n + j] = acc;
}

template <int kT>
__global__ void __launch_bounds__(kT* kT)
    shift_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k) {
  // Two buffers: shift t writes ring[t & 1] and reads it after one barrier; a thread can only
  // reach shift t + 2 (the same buffer) after every thread passed the barrier of t + 1, i.e.
  // finished reading shift t. +1 padding keeps the column-shifted writes off a single bank.
  __shared__ float ring_a[2][kT][kT + 1];  // (buffer, i, j)
  __shared__ float ring_b[2][kT][kT + 1];
  const int j = threadIdx.x, i = threadIdx.y;
  const long row = long(blockIdx.y) * kT + i, col = long(blockIdx.x) * kT + j;
  float acc = 0.f;
  int shift = 0;
  for (long p0 = 0; p0 < k; p0 += kT) {
    const long q = p0 + (i + j) % kT;  // the initial skew
    float av = row < m && q < k ? a[row * k + q] : 0.f;
    float bv = q < k && col < n ? b[q * n + col] : 0.f;
    for (int s = 0; s < kT; ++s) {
      acc = fmaf(av, bv, acc);
      if (s + 1 == kT) break;
      const int buf = shift++ & 1;
      ring_a[buf][i][(j + kT - 1) % kT] = av;  // to the left neighbour (wrapping)
      ring_b[buf][(i + kT - 1) % kT][j] = bv;  // to the neighbour above (wrapping)
      __syncthreads();
      av = ring_a[buf][i][j];
      bv = ring_b[buf][i][j];
    }
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

template <int kT>
__global__ void __launch_bounds__(kT* kT)
    tiled_atomic_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                        int m, int n, int k, bool accumulate) {
  __shared__ float sa[kT][kT];  // (i, p) of sub-product (blockIdx.y, blockIdx.z)
  __shared__ float sb[kT][kT];  // (p, j) of sub-product (blockIdx.z, blockIdx.x)
  const int j = threadIdx.x, i = threadIdx.y;
  const long row = long(blockIdx.y) * kT + i, col = long(blockIdx.x) * kT + j, p0 = long(blockIdx.z) * kT;
  sa[i][j] = row < m && p0 + j < k ? a[row * k + p0 + j] : 0.f;
  sb[i][j] = p0 + i < k && col < n ? b[(p0 + i) * n + col] : 0.f;
  __syncthreads();
  float acc = 0.f;
#pragma unroll
  for (int s = 0; s < kT; ++s) {
    const int p = (i + j + s) % kT;
    acc = fmaf(sa[i][p], sb[p][j], acc);
  }
  if (row < m && col < n) {
    if (accumulate)
      atomicAdd(&c[row * n + col], acc);  // other k slices add to the same element
    else
      c[row * n + col] = acc;
  }
}

template <int kT, int kBx, int kBy>
__global__ void __launch_bounds__(kBx* kBy)
    tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k) {
  static_assert(kT % kBx == 0 && kT % kBy == 0, "the block must divide the tile");
  constexpr int kR = kT / kBy, kS = kT / kBx;  // outputs per thread: (kR, kS)
  __shared__ float sa[kT][kT];                 // (i, p)
  __shared__ float sb[kT][kT];                 // (p, j)
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kBx + tx;
  const int bi = blockIdx.y, bj = blockIdx.x, q = (k + kT - 1) / kT;
  float acc[kR][kS] = {};
  for (int s = 0; s < q; ++s) {
    const long p0 = long((bi + bj + s) % q) * kT;  // Cannon's skew over the tiles of k
    for (int e = tid; e < kT * kT; e += kBx * kBy) {
      const int r = e / kT, x = e % kT;
      const long ga = long(bi) * kT + r, gb = long(bj) * kT + x;
      sa[r][x] = ga < m && p0 + x < k ? a[ga * k + p0 + x] : 0.f;
      sb[r][x] = p0 + r < k && gb < n ? b[(p0 + r) * n + gb] : 0.f;
    }
    __syncthreads();
    const int start = (tx + ty) % kT;  // the rotation inside the tile
    for (int t = 0; t < kT; ++t) {
      const int p = t + start < kT ? t + start : t + start - kT;
      float av[kR], bv[kS];
#pragma unroll
      for (int r = 0; r < kR; ++r) av[r] = sa[ty + r * kBy][p];
#pragma unroll
      for (int x = 0; x < kS; ++x) bv[x] = sb[p][tx + x * kBx];
#pragma unroll
      for (int r = 0; r < kR; ++r)
#pragma unroll
        for (int x = 0; x < kS; ++x) acc[r][x] = fmaf(av[r], bv[x], acc[r][x]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kR; ++r)
#pragma unroll
    for (int x = 0; x < kS; ++x) {
      const long row = long(bi) * kT + ty + r * kBy, col = long(bj) * kT + tx + x * kBx;
      if (row < m && col < n) c[row * n + col] = acc[r][x];
    }
}

enum class Kind { single_block, shift, tiled_atomic, tiled };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"single_block", "one m x n block, A and B in shared memory, order (i + j + s) % k (sec. 3.1)"},
    {"shift", "a TILE x TILE torus per C tile: skew, then multiply and shift A left, B up"},
    {"tiled_atomic", "one block per TILE^3 sub-product, atomicAdd into zeroed C (sec. 5)"},
    {"tiled", "blocks own C tiles and walk k tiles in order (bi + bj + s) mod q; no atomics"}};

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  LaunchConfig lc;
  const Kind v = variant_kind<Kind>(kVariants, q);
  if (v == Kind::single_block) {
    lc.block = {unsigned(p.n), unsigned(p.m), 1};
    lc.shared_bytes = sizeof(float) * std::size_t(p.m * p.k + p.k * p.n);
    return lc;
  }
  const long t = q.integer("tile");
  lc.grid = {ceil_div(p.n, t), ceil_div(p.m, t), v == Kind::tiled_atomic ? ceil_div(p.k, t) : 1u};
  if (v == Kind::tiled) {
    const Shape2 blk = q.shape("block");
    lc.block = {unsigned(blk.x), unsigned(blk.y), 1};
  } else {
    lc.block = {unsigned(t), unsigned(t), 1};
  }
  lc.shared_bytes = sizeof(float) * std::size_t(t * (v == Kind::shift ? 4 * (t + 1) : 2 * t));
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo&) {
  if (Reason r = fits_int(p)) return r;
  if (variant_kind<Kind>(kVariants, q) == Kind::single_block && p.m * p.n > 1024)
    return "single_block needs m * n <= 1024 threads; " + std::to_string(p.m) + " x " + std::to_string(p.n) +
           " gives " + std::to_string(p.m * p.n);
  return std::nullopt;  // the harness checks A and B against the shared-memory limit
}

void launch_single_block(const RunArgs& r, const LaunchConfig& lc) {
  allow_shared_bytes(single_block_kernel, lc.shared_bytes);
  single_block_kernel<<<1, dim(lc.block), lc.shared_bytes, r.stream>>>(r.a, r.b, r.c, int(r.problem.m),
                                                                       int(r.problem.n), int(r.problem.k));
}

template <int kT>
void launch_shift(const RunArgs& r, const LaunchConfig& lc) {
  shift_kernel<kT><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(r.a, r.b, r.c, int(r.problem.m),
                                                                 int(r.problem.n), int(r.problem.k));
}

template <int kT>
void launch_tiled_atomic(const RunArgs& r, const LaunchConfig& lc) {
  const bool split = lc.grid.z > 1;  // several k slices add into C: start from zero
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * r.problem.m * r.problem.n, r.stream));
  tiled_atomic_kernel<kT><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k), split);
}

template <int kT, int kBx, int kBy>
void launch_tiled(const RunArgs& r, const LaunchConfig& lc) {
  tiled_kernel<kT, kBx, kBy><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k));
}

// The compiled points: shift and tiled_atomic per tile (TILE^2 threads), tiled per (tile, block).
#define MMLAB_TORUS(T) \
  {{"shift", {{"tile", #T}}}, launch_shift<T>}, {{"tiled_atomic", {{"tile", #T}}}, launch_tiled_atomic<T>},
#define MMLAB_TILED(T, BX, BY) \
  {{"tiled", {{"tile", #T}, {"block", shape_text(BX, BY)}}}, launch_tiled<T, BX, BY>},
const KernelTable<Launcher> kKernels = {
    MMLAB_TORUS(8) MMLAB_TORUS(16) MMLAB_TORUS(32)                                                 //
    MMLAB_TILED(16, 16, 16) MMLAB_TILED(16, 8, 8) MMLAB_TILED(32, 32, 32) MMLAB_TILED(32, 16, 16)  //
    MMLAB_TILED(32, 32, 8) MMLAB_TILED(32, 8, 8) MMLAB_TILED(64, 16, 16) MMLAB_TILED(64, 32, 8)    //
    MMLAB_TILED(64, 8, 8)};
#undef MMLAB_TORUS
#undef MMLAB_TILED

void run(const RunArgs& r) {
  const LaunchConfig lc = launch(r.problem, *r.params, *r.device);
  if (variant_kind<Kind>(kVariants, *r.params) == Kind::single_block)
    launch_single_block(r, lc);
  else
    kKernels.at (*r.params)(r, lc);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(cannon) {
  a.summary = "Cannon's algorithm: skewed k order on a torus of threads, then of blocks (O'Neil 2013)";
  a.variants = kVariants;
  a.axes = {{"tile",
             AxisKind::integer,
             "tile edge TILE (shift, tiled_atomic: TILE^2 threads per block)",
             "32",
             {},
             {"shift", "tiled_atomic", "tiled"}},
            {"block",
             AxisKind::shape,
             "threads per block of `tiled` (x by y); must divide the tile",
             "16x16",
             {},
             {"tiled"}}};
  a.constraints = "single_block: m n <= 1024 and (m + n) k floats in shared memory; any m, n, k otherwise";
  a.supports = supports;
  a.set_nondeterminism("tiled_atomic", "partial tiles added atomically");
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
