// skinny: C = A B when m or n is at most 64, the GEMV-like shapes where a tiled kernel's 128-row
// block tiles are mostly empty and the time is the bytes of the large operand, not the FLOPs.
//
// Few rows (m <= 64, `rows`): a block of 128 threads takes 128 columns of B and a k chunk; each
// thread streams its column of B once (consecutive threads, consecutive addresses) and keeps the m
// outputs of that column in registers, while A's rows for the chunk sit in shared memory k-major, so
// one 16-byte load broadcasts four rows' values to every thread. Few columns (n <= 64, `cols`): a
// warp takes R rows of A (R = 64 / n's capacity, so each lane keeps up to 64 sums) and a k chunk of
// 128; each lane loads four consecutive k of each row (one 16-byte load where k % 4 == 0) before B's
// chunk is staged, transposed and swizzled, in shared memory (shared by the block's 8 R rows), and a
// shuffle tree adds the lanes' sums. Variant `staged`: the cols kernel with A's and B's chunks copied
// by cp.async into two buffers, the next chunk's copies in flight while one is multiplied (the
// same sums in the same order as `default`). The capacity is n (or m) rounded up to a multiple of 8. Where the large operand's blocks alone cannot
// fill the device, k is split over blockIdx.y, each split writes its partial C to the workspace, and
// a second kernel adds the splits in split order: deterministic, no atomics.
// Accepts any k; m <= 64 (rows) or n <= 64 (cols), the one that applies chosen per problem.
// Example: mmlab run --algorithms skinny,cublas --skinny.variant default,staged --shape 16x4096x4096,4096x16x4096
#include "algorithms/kernels/reduce.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/skinny_model.hpp"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {

constexpr int kRowThreads = 128, kColThreads = 256, kWarps = kColThreads / 32;
constexpr int kRowChunk = 64, kColChunk = 128;  // k values of A (rows) or B (cols) staged at a time
static_assert(kColChunk == 4 * 32, "a cols lane takes four consecutive k of a chunk");
constexpr long kMaxSide = 64;

// Rows of A a warp of the cols kernel takes for a capacity of kCols columns: up to 64 sums per lane
// (more rows per warp share B's chunk further, but fewer blocks fit an SM to hide A's latency).
constexpr int rows_per_warp(int cols) { return cols >= 64 ? 1 : 64 / cols; }

// acc(r, col) over k in [kb, ke), for rows r < m <= kRows of A; out: this split's (m, n) slice.
template <int kRows>
__global__ void __launch_bounds__(kRowThreads)
    rows_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int m,
                int n, int k, int chunk) {
  __shared__ __align__(16) float as[kRowChunk][kRows];  // A's rows for kRowChunk values of k, k-major
  const int col = blockIdx.x * kRowThreads + threadIdx.x;
  const int kb = blockIdx.y * chunk, ke = min(k, kb + chunk);
  float acc[kRows] = {};
  for (int k0 = kb; k0 < ke; k0 += kRowChunk) {
    for (int e = threadIdx.x; e < kRows * kRowChunk; e += kRowThreads) {
      const int r = e / kRowChunk, q = e % kRowChunk;  // consecutive threads, consecutive k of a row
      as[q][r] = r < m && k0 + q < ke ? a[long(r) * k + k0 + q] : 0.f;
    }
    __syncthreads();
    const int steps = min(kRowChunk, ke - k0);
#pragma unroll 8
    for (int s = 0; s < steps; ++s) {
      const float v = col < n ? __ldg(&b[long(k0 + s) * n + col]) : 0.f;
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = fmaf(as[s][r], v, acc[r]);
    }
    __syncthreads();
  }
  if (col >= n) return;
  float* slice = out + long(blockIdx.y) * m * n;
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (r < m) slice[long(r) * n + col] = acc[r];
}

// Where B's value (q, c) of a chunk sits: row c of the transposed chunk, q's group of four moved by
// c (an XOR swizzle), so the staging stores spread over the banks and each lane's 16-byte read of
// four consecutive k stays conflict-free.
__device__ __forceinline__ int swizzled(int q, int c) { return (((q >> 2) ^ (c & 31)) << 2) | (q & 3); }

// The cols kernels' product of one staged chunk: acc(i, c) += this lane's four k of row i (v[i]) times
// B's chunk column c (bs: kCols rows of kColChunk, transposed and swizzled).
template <int kCols, int R>
__device__ __forceinline__ void cols_chunk(const float4 (&v)[R], const float* bs, int lane, float (&acc)[R][kCols]) {
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const float4 w = *reinterpret_cast<const float4*>(&bs[c * kColChunk + swizzled(4 * lane, c)]);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      acc[i][c] = fmaf(v[i].x, w.x, acc[i][c]);
      acc[i][c] = fmaf(v[i].y, w.y, acc[i][c]);
      acc[i][c] = fmaf(v[i].z, w.z, acc[i][c]);
      acc[i][c] = fmaf(v[i].w, w.w, acc[i][c]);
    }
  }
}
// The lanes' sums added by a shuffle tree; the lanes share the stores of the warp's rows into `slice`.
template <int kCols, int R>
__device__ __forceinline__ void cols_store(float (&acc)[R][kCols], float* slice, int lane, int row0, int m, int n) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
#pragma unroll
      for (int offset = 16; offset > 0; offset >>= 1) acc[i][c] += __shfl_xor_sync(0xffffffffu, acc[i][c], offset);
      if (lane == c % 32 && c < n && row0 + i < m) slice[long(row0 + i) * n + c] = acc[i][c];
    }
}

// acc(row, c) over k in [kb, ke), for columns c < n <= kCols of B; a warp per R rows of A, each
// lane four consecutive k of each row per chunk (one 16-byte load where k is a multiple of 4).
template <int kCols>
__global__ void __launch_bounds__(kColThreads, 2)
    cols_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int m,
                int n, int k, int chunk) {
  constexpr int R = rows_per_warp(kCols);
  __shared__ __align__(16) float bs[kCols][kColChunk];  // B's chunk transposed, swizzled
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = (blockIdx.x * kWarps + warp) * R;
  const int kb = blockIdx.y * chunk, ke = min(k, kb + chunk);
  const bool whole_rows = k % 4 == 0;  // every row starts 16-byte aligned (and so does kb: chunk % 32 == 0)
  float acc[R][kCols] = {};
  for (int k0 = kb; k0 < ke; k0 += kColChunk) {
    const int kq = k0 + 4 * lane;
    float4 v[R];  // issued before the staging, so the loads are in flight meanwhile
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float* row = a + long(row0 + i) * k;
      if (row0 + i < m && whole_rows && kq + 3 < ke) {
        v[i] = __ldg(reinterpret_cast<const float4*>(row + kq));
      } else {
        const bool in = row0 + i < m;
        v[i].x = in && kq < ke ? __ldg(row + kq) : 0.f;
        v[i].y = in && kq + 1 < ke ? __ldg(row + kq + 1) : 0.f;
        v[i].z = in && kq + 2 < ke ? __ldg(row + kq + 2) : 0.f;
        v[i].w = in && kq + 3 < ke ? __ldg(row + kq + 3) : 0.f;
      }
    }
    for (int e = threadIdx.x; e < kCols * kColChunk; e += kColThreads) {
      const int q = e / kCols, c = e % kCols;  // consecutive threads, consecutive columns of B
      bs[c][swizzled(q, c)] = c < n && k0 + q < ke ? b[long(k0 + q) * n + c] : 0.f;
    }
    __syncthreads();
    cols_chunk<kCols, R>(v, &bs[0][0], lane, acc);
    __syncthreads();
  }
  cols_store<kCols, R>(acc, out + long(blockIdx.y) * m * n, lane, row0, m, n);
}

// The cols kernel with both operands staged by cp.async into two buffers (variant `staged`): while a
// chunk is multiplied, the next chunk's copies are in flight, so neither B's transposed staging nor
// A's loads wait in the k loop. A warp's R rows of the chunk land in its own slice of shared memory
// (16-byte copies where k % 4 == 0, else 4-byte ones), B's chunk as cols_kernel's (4-byte copies,
// each to its transposed, swizzled place); a lane reads its four consecutive k of each row back
// with one 16-byte load. Dynamic shared memory: 2 x (8 warps x R x 128 + kCols x 128) floats.
constexpr int staged_floats(int cols) {  // one buffer, for a capacity of `cols`
  return kWarps * rows_per_warp(cols) * kColChunk + cols * kColChunk;
}
template <int kCols>
__global__ void __launch_bounds__(kColThreads, 2)
    cols_staged_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                       int m, int n, int k, int chunk) {
  constexpr int R = rows_per_warp(kCols), kBCopies = kCols * kColChunk / kColThreads;
  extern __shared__ __align__(16) float staged[];  // per buffer: A [warp][R][128], then B [kCols][128]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = (blockIdx.x * kWarps + warp) * R;
  const int kb = blockIdx.y * chunk, ke = min(k, kb + chunk);
  const bool whole_rows = k % 4 == 0;  // rows (and kb: chunk % 32 == 0) start 16-byte aligned
  auto a_part = [&](int buf) { return staged + buf * staged_floats(kCols) + warp * R * kColChunk; };
  auto b_part = [&](int buf) { return staged + buf * staged_floats(kCols) + kWarps * R * kColChunk; };
  auto stage = [&](int k0, int buf) {  // chunk k0's copies into buffer buf, one commit group
    const int kq = k0 + 4 * lane;
    float* as = a_part(buf);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const bool row_in = row0 + i < m;
      const float* src = a + long(row0 + i) * k + kq;
      const unsigned dst = unsigned(__cvta_generic_to_shared(as + i * kColChunk + 4 * lane));
      if (whole_rows) {
        copy16(dst, row_in && kq < ke ? src : a, row_in && kq < ke);  // ke - kq is a multiple of 4 here
      } else {
#pragma unroll
        for (int u = 0; u < 4; ++u) copy4(dst + 4u * u, row_in && kq + u < ke ? src + u : a, row_in && kq + u < ke);
      }
    }
    float* bs = b_part(buf);
    int q = threadIdx.x / kCols, c = threadIdx.x % kCols;  // element threadIdx.x + i kColThreads, stepped
#pragma unroll 2
    for (int i = 0; i < kBCopies; ++i) {  // not unrolled whole: its addresses would stay live in the k loop
      const bool in = c < n && k0 + q < ke;
      copy4(unsigned(__cvta_generic_to_shared(&bs[c * kColChunk + swizzled(q, c)])),
            in ? b + long(k0 + q) * n + c : b, in);
      q += kColThreads / kCols, c += kColThreads % kCols;
      if (c >= kCols) c -= kCols, ++q;
    }
    commit();
  };
  float acc[R][kCols] = {};
  if (kb < ke) stage(kb, 0);
  int buf = 0;
  for (int k0 = kb; k0 < ke; k0 += kColChunk, buf ^= 1) {
    if (k0 + kColChunk < ke) stage(k0 + kColChunk, buf ^ 1);
    else commit();  // an empty group: the wait below counts the same either way
    wait_for<1>();  // chunk k0's copies have landed; the next chunk's may still be in flight
    __syncthreads();
    const float* as = a_part(buf);
    const float* bs = b_part(buf);
    float4 v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = *reinterpret_cast<const float4*>(as + i * kColChunk + 4 * lane);
    cols_chunk<kCols, R>(v, bs, lane, acc);
    __syncthreads();  // every warp is done with this buffer before the next iteration restages it
  }
  cols_store<kCols, R>(acc, out + long(blockIdx.y) * m * n, lane, row0, m, n);
}

// The shape's path, its capacity (rows or columns, a multiple of 8) and its blocks per split.
struct Plan {
  bool rows;
  int side;  // kRows or kCols
  long blocks;
  int splits, chunk;
};

// Enough blocks for the largest GPUs (four per SM of the rows kernel's 128 threads, two of the cols
// kernel's 256, on 256 SMs), each split at least one staged chunk of k. Decided from the problem
// alone, so the workspace is known before the device.
Plan plan(const Problem& p) {
  Plan out;
  out.rows = p.m <= kMaxSide;
  const long side = out.rows ? p.m : p.n;
  out.side = int((side + 7) / 8 * 8);
  out.blocks = out.rows ? long(ceil_div(p.n, kRowThreads))
                        : long(ceil_div(p.m, long(kWarps) * rows_per_warp(out.side)));
  const long wanted = ((out.rows ? 1024 : 512) + out.blocks - 1) / out.blocks;
  out.splits = int(std::max(1L, std::min({wanted, p.k / (out.rows ? kRowChunk : kColChunk), 64L})));
  out.chunk = int((p.k + out.splits - 1) / out.splits);
  out.chunk = (out.chunk + 31) / 32 * 32;
  out.splits = int((p.k + out.chunk - 1) / out.chunk);
  return out;
}

std::size_t workspace(const Problem& p, const Params&) {
  const Plan s = plan(p);
  return s.splits > 1 ? sizeof(float) * std::size_t(s.splits) * std::size_t(p.m * p.n) : 0;
}

enum class Kind { plain, staged };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"default", "a column of B per thread (m <= 64) or rows of A per warp (n <= 64), B's chunk staged by the threads"},
    {"staged", "as default, but the cols kernel's chunks (A's and B's) staged by cp.async into two buffers, the next "
               "chunk's copies in flight while one is multiplied (rows: as default)"}};
bool is_staged(const Params& q) { return variant_kind<Kind>(kVariants, q) == Kind::staged; }

// The staged cols kernel's dynamic shared memory for a capacity `side` (two buffers).
std::size_t staged_bytes(int side) { return 2 * sizeof(float) * std::size_t(staged_floats(side)); }

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const Plan s = plan(p);
  LaunchConfig lc;
  lc.block = {unsigned(s.rows ? kRowThreads : kColThreads), 1, 1};
  lc.grid = {unsigned(s.blocks), unsigned(s.splits), 1};
  lc.shared_bytes = !s.rows && is_staged(q) ? staged_bytes(s.side)
                                         : sizeof(float) * std::size_t(s.side * (s.rows ? kRowChunk : kColChunk));
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
  if (s.rows) {
    rows_kernel<kSide><<<grid, kRowThreads, 0, r.stream>>>(r.a, r.b, out, int(p.m), int(p.n), int(p.k), s.chunk);
  } else if (is_staged(*r.params)) {
    const std::size_t bytes = staged_bytes(kSide);
    allow_shared_bytes(cols_staged_kernel<kSide>, bytes);
    cols_staged_kernel<kSide>
        <<<grid, kColThreads, bytes, r.stream>>>(r.a, r.b, out, int(p.m), int(p.n), int(p.k), s.chunk);
  } else {
    cols_kernel<kSide><<<grid, kColThreads, 0, r.stream>>>(r.a, r.b, out, int(p.m), int(p.n), int(p.k), s.chunk);
  }
  MMLAB_CHECK_LAUNCH();
}

// The capacity's instantiation: 8, 16, ..., 64.
template <int kSide = 8>
void launch_capacity(const RunArgs& r, const Plan& s, float* out) {
  if constexpr (kSide < kMaxSide)
    if (s.side > kSide) return launch_capacity<kSide + 8>(r, s, out);
  launch_side<kSide>(r, s, out);
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Plan s = plan(p);
  float* out = s.splits > 1 ? static_cast<float*>(r.workspace) : r.c;
  launch_capacity(r, s, out);
  if (s.splits > 1) {
    const long count = p.m * p.n;
    add_slices_kernel<<<unsigned(std::min<long>(ceil_div(count, 256), 4L * r.device->sm_count)), 256, 0,
                        r.stream>>>(out, r.c, count, s.splits);
    MMLAB_CHECK_LAUNCH();
  }
}

}  // namespace

MMLAB_ALGORITHM(skinny) {
  a.summary =
      "GEMV-like shapes (m or n <= 64): the large operand streamed once, k split into a "
      "deterministic sum";
  a.variants = kVariants;
  a.constraints = "m <= 64 or n <= 64; any k";
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.launch_config = launch;
  a.run = run;
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    return skinny_model(p, q, launch(p, q, d).grid.x);
  });
}

}  // namespace mmlab
