// skinny: C = A B when m or n is at most 64, the GEMV-like shapes where a tiled kernel's 128-row
// block tiles are mostly empty and the time is the bytes of the large operand, not the FLOPs.
//
// Few rows (m <= 64, `rows`): a block of 256 threads takes 256 columns of B and a k chunk; each
// thread streams its column of B once (consecutive threads, consecutive addresses) and keeps the m
// outputs of that column in registers, while A's rows for the chunk sit in shared memory (read by
// every thread at once: a broadcast). Few columns (n <= 64, `cols`): a warp takes one row of A and
// a k chunk; its lanes stream the row (coalesced), B's chunk sits transposed in shared memory, each
// lane keeps n partial sums, and a shuffle tree adds the lanes'. Where the large operand's blocks
// alone cannot fill the device, k is split over blockIdx.y, each split writes its partial C to the
// workspace, and a second kernel adds the splits in split order: deterministic, no atomics.
// Accepts any k; m <= 64 (rows) or n <= 64 (cols), the one that applies chosen per problem.
// Example: mmlab run --algorithms skinny,cublas --shape 16x4096x4096,4096x16x4096,64x2000x30000
#include "algorithms/kernels/common.cuh"

namespace mmlab {
namespace {

constexpr int kThreads = 256, kChunk = 64;  // k values of A (rows) or B (cols) staged at a time
constexpr long kMaxSide = 64;

// acc(r, col) over k in [kb, ke), for rows r < m <= kRows of A; out: this split's (m, n) slice.
template <int kRows>
__global__ void __launch_bounds__(kThreads)
    rows_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int m,
                int n, int k, int chunk) {
  __shared__ float as[kRows][kChunk];  // A's rows for kChunk values of k
  const int col = blockIdx.x * kThreads + threadIdx.x;
  const int kb = blockIdx.y * chunk, ke = min(k, kb + chunk);
  float acc[kRows] = {};
  for (int k0 = kb; k0 < ke; k0 += kChunk) {
    for (int e = threadIdx.x; e < kRows * kChunk; e += kThreads) {
      const int r = e / kChunk, q = k0 + e % kChunk;
      as[r][e % kChunk] = r < m && q < ke ? a[long(r) * k + q] : 0.f;
    }
    __syncthreads();
    const int steps = min(kChunk, ke - k0);
#pragma unroll 8
    for (int s = 0; s < steps; ++s) {
      const float v = col < n ? __ldg(&b[long(k0 + s) * n + col]) : 0.f;
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = fmaf(as[r][s], v, acc[r]);
    }
    __syncthreads();
  }
  if (col >= n) return;
  float* slice = out + long(blockIdx.y) * m * n;
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (r < m) slice[long(r) * n + col] = acc[r];
}

// acc(row, c) over k in [kb, ke), for columns c < n <= kCols of B; a warp per row of A.
template <int kCols>
__global__ void __launch_bounds__(kThreads)
    cols_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int m,
                int n, int k, int chunk) {
  constexpr int kWarps = kThreads / 32;
  __shared__ float bs[kCols][kChunk + 1];  // B's chunk transposed: lanes read consecutive k, no conflict
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = blockIdx.x * kWarps + warp;
  const int kb = blockIdx.y * chunk, ke = min(k, kb + chunk);
  float acc[kCols] = {};
  for (int k0 = kb; k0 < ke; k0 += kChunk) {
    for (int e = threadIdx.x; e < kCols * kChunk; e += kThreads) {
      const int q = e / kCols, c = e % kCols;  // consecutive threads, consecutive columns of B
      bs[c][q] = c < n && k0 + q < ke ? b[long(k0 + q) * n + c] : 0.f;
    }
    __syncthreads();
    for (int s = lane; s < kChunk; s += 32) {
      const float v = row < m && k0 + s < ke ? __ldg(&a[long(row) * k + k0 + s]) : 0.f;
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[c] = fmaf(v, bs[c][s], acc[c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) acc[c] += __shfl_xor_sync(0xffffffffu, acc[c], offset);
  if (row >= m || lane != 0) return;
  float* slice = out + long(blockIdx.y) * m * n;
#pragma unroll
  for (int c = 0; c < kCols; ++c)
    if (c < n) slice[long(row) * n + c] = acc[c];
}

// C = the sum of `splits` slices, in slice order (the same order on every run).
__global__ void add_splits_kernel(const float* __restrict__ partial, float* __restrict__ c, long count,
                                  int splits) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    float s = partial[e];
    for (int i = 1; i < splits; ++i) s += partial[i * count + e];
    c[e] = s;
  }
}

// The shape's path, its capacity (rows or columns, a power of two from 8) and its blocks per split.
struct Plan {
  bool rows;
  int side;  // kRows or kCols
  long blocks;
  int splits, chunk;
};

// Enough blocks for the largest GPUs (two per SM on 256 SMs), each split at least 256 values of k.
// Decided from the problem alone, so the workspace is known before the device.
Plan plan(const Problem& p) {
  Plan out;
  out.rows = p.m <= kMaxSide;
  const long side = out.rows ? p.m : p.n;
  out.side = side <= 8 ? 8 : side <= 16 ? 16 : side <= 32 ? 32 : 64;
  out.blocks = out.rows ? long(ceil_div(p.n, kThreads)) : long(ceil_div(p.m, kThreads / 32));
  const long wanted = (512 + out.blocks - 1) / out.blocks;
  out.splits = int(std::max(1L, std::min({wanted, p.k / 256, 32L})));
  out.chunk = int((p.k + out.splits - 1) / out.splits);
  out.chunk = (out.chunk + kChunk - 1) / kChunk * kChunk;
  out.splits = int((p.k + out.chunk - 1) / out.chunk);
  return out;
}

std::size_t workspace(const Problem& p, const Params&) {
  const Plan s = plan(p);
  return s.splits > 1 ? sizeof(float) * std::size_t(s.splits) * std::size_t(p.m * p.n) : 0;
}

LaunchConfig launch(const Problem& p, const Params&, const DeviceInfo&) {
  const Plan s = plan(p);
  LaunchConfig lc;
  lc.block = {kThreads, 1, 1};
  lc.grid = {unsigned(s.blocks), unsigned(s.splits), 1};
  lc.shared_bytes = sizeof(float) * std::size_t(s.rows ? s.side * kChunk : s.side * (kChunk + 1));
  return lc;
}

Reason supports(const Problem& p, const Params&, const DeviceInfo&) {
  if (p.m > kMaxSide && p.n > kMaxSide) return "skinny needs m or n at most 64 (a GEMV-like shape)";
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return "m, n and k must each be below 2^31";
  return std::nullopt;
}

template <int kSide>
void launch_side(const RunArgs& r, const Plan& s, float* out) {
  const Problem& p = r.problem;
  const dim3 grid(unsigned(s.blocks), unsigned(s.splits));
  if (s.rows)
    rows_kernel<kSide><<<grid, kThreads, 0, r.stream>>>(r.a, r.b, out, int(p.m), int(p.n), int(p.k), s.chunk);
  else
    cols_kernel<kSide><<<grid, kThreads, 0, r.stream>>>(r.a, r.b, out, int(p.m), int(p.n), int(p.k), s.chunk);
  MMLAB_CHECK_LAUNCH();
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Plan s = plan(p);
  float* out = s.splits > 1 ? static_cast<float*>(r.workspace) : r.c;
  switch (s.side) {
    case 8: launch_side<8>(r, s, out); break;
    case 16: launch_side<16>(r, s, out); break;
    case 32: launch_side<32>(r, s, out); break;
    default: launch_side<64>(r, s, out); break;
  }
  if (s.splits > 1) {
    const long count = p.m * p.n;
    add_splits_kernel<<<unsigned(std::min<long>(ceil_div(count, 256), 4L * r.device->sm_count)), 256, 0,
                        r.stream>>>(out, r.c, count, s.splits);
    MMLAB_CHECK_LAUNCH();
  }
}

}  // namespace

MMLAB_ALGORITHM(skinny) {
  a.summary =
      "GEMV-like shapes (m or n <= 64): the large operand streamed once, k split into a "
      "deterministic sum";
  a.variants = {{"default", "a column of B per thread (m <= 64) or a row of A per warp (n <= 64)"}};
  a.constraints = "m <= 64 or n <= 64; any k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.launch_config = launch;
  a.run = run;
}

}  // namespace mmlab
