// gemv: C = A B for m <= 16: a row vector (or up to 16 rows) times B, where the time is B's bytes
// read from DRAM once and nothing else (issue #61: skinny's rows kernel read B with 4-byte loads and
// reached 40-52% of the DRAM bound at m = 1, cuBLAS 79-82%).
//
// A block of 256 threads (8 warps) takes 128 columns of B and a range of k: a lane keeps four
// columns (one 16-byte load per row of B where n % 4 == 0, else four coalesced 4-byte loads), the
// warps take interleaved rows of B (warp w rows w, w + 8, ...), eight rows per lane in flight, and
// each lane keeps the m x 4 sums of its columns. A's rows for a chunk of 256 k wait in shared memory,
// k-major, so one 16-byte load gives a row of B's value four rows of A. Then the 8 warps' sums are
// added in shared memory in warp order, and the k ranges of a column tile, the blocks of one
// thread-block cluster (up to 16), are added through distributed shared memory in rank order, each
// block summing its share of the tile: one launch, no workspace, the same sum on every run. The
// cluster's size is chosen so that about three blocks per SM stream at once.
// Accepts any n and k; m <= 16 (capacity 1, 2, 4, 8 or 16 rows; the wider shapes are skinny's).
// Example: mmlab run --algorithms gemv,skinny,cublas --shape 1x8192x8192,16x4096x4096,3x3001x7000 --l2-flush on
#include <atomic>
#include <mutex>

#include <cooperative_groups.h>

#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/gemv_model.hpp"

namespace mmlab {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kTileCols = 4 * 32;  // a block's columns: four per lane
constexpr int kChunk = 256;        // k values of A staged at a time
constexpr int kInFlight = 8;       // rows of B a lane loads before it multiplies them
constexpr long kMaxRows = 16;

// The sums of A's rows r < m <= R over k in this block's range, for its 128 columns of B.
template <int R, bool kVec>
__global__ void __launch_bounds__(kThreads)
    gemv_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                int k, int per) {
  extern __shared__ __align__(16) float smem[];  // A's chunk [kChunk][R], later the sums [kWarps][R][128]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned split = gridDim.x, rank = blockIdx.x;  // the cluster runs along x: rank = blockIdx.x
  const long col0 = long(blockIdx.y) * kTileCols;
  const int kb = int(rank) * per, ke = min(k, kb + per);
  // The tile's column of this lane's j-th sum: four consecutive ones, or one in each quarter.
  auto column = [&](int j) { return kVec ? 4 * lane + j : lane + 32 * j; };
  float acc[R][4] = {};
  for (int k0 = kb; k0 < ke; k0 += kChunk) {
    const int steps = min(kChunk, ke - k0);
    for (int e = threadIdx.x; e < R * kChunk; e += kThreads) {
      const int r = e / kChunk, q = e % kChunk;  // consecutive threads, consecutive k of a row of A
      smem[q * R + r] = r < m && q < steps ? a[long(r) * k + k0 + q] : 0.f;
    }
    __syncthreads();
    for (int q0 = warp; q0 < steps; q0 += kWarps * kInFlight) {
      float v[kInFlight][4];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        const int q = q0 + u * kWarps;
        const float* row = b + long(k0 + q) * n + col0;
        if (kVec) {
          const bool in = q < steps && col0 + 4 * lane < n;  // n % 4 == 0: all four or none
          const float4 x = in ? __ldg(reinterpret_cast<const float4*>(row) + lane) : make_float4(0.f, 0.f, 0.f, 0.f);
          v[u][0] = x.x, v[u][1] = x.y, v[u][2] = x.z, v[u][3] = x.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) v[u][j] = q < steps && col0 + column(j) < n ? __ldg(row + column(j)) : 0.f;
        }
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        const int q = min(q0 + u * kWarps, kChunk - 1);  // past `steps`: v is zero, any row of A will do
        float x[R];
        if constexpr (R % 4 == 0) {
#pragma unroll
          for (int r = 0; r < R; r += 4) {
            const float4 y = *reinterpret_cast<const float4*>(smem + q * R + r);
            x[r] = y.x, x[r + 1] = y.y, x[r + 2] = y.z, x[r + 3] = y.w;
          }
        } else {
#pragma unroll
          for (int r = 0; r < R; ++r) x[r] = smem[q * R + r];
        }
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[r][j] = fmaf(x[r], v[u][j], acc[r][j]);
      }
    }
    __syncthreads();  // every warp is done with the chunk before it is staged again (or reused below)
  }
  // The warps' sums, added in warp order into warp 0's slot: this block's partial tile [R][128].
  float* sums = smem;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < 4; ++j) sums[(warp * R + r) * kTileCols + column(j)] = acc[r][j];
  __syncthreads();
  for (int e = threadIdx.x; e < R * kTileCols; e += kThreads) {
    float s = sums[e];
    for (int w = 1; w < kWarps; ++w) s += sums[w * R * kTileCols + e];
    sums[e] = s;
  }
  auto store = [&](int e, float s) {
    const int r = e / kTileCols;
    const long col = col0 + e % kTileCols;
    if (r < m && col < n) c[long(r) * n + col] = s;
  };
  if (split == 1) {
    __syncthreads();
    for (int e = threadIdx.x; e < R * kTileCols; e += kThreads) store(e, sums[e]);
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's partial tile is complete
  const int first = int(rank) * R * kTileCols / int(split), last = int(rank + 1) * R * kTileCols / int(split);
  for (int e = first + threadIdx.x; e < last; e += kThreads) {
    float s = cluster.map_shared_rank(sums, 0u)[e];
    for (unsigned p = 1; p < split; ++p) s += cluster.map_shared_rank(sums, p)[e];
    store(e, s);
  }
  __syncwarp();    // the loop's lanes ran different counts: the cluster barrier is warp-aligned
  cluster.sync();  // no block leaves while a peer still reads its partial tile
}

// A's rows the kernel holds: m rounded up to 1, 2, 4, 8 or 16.
int capacity(long m) {
  int r = 1;
  while (r < m) r *= 2;
  return r;
}

// The cluster's size: enough blocks for about three per SM, each at least 64 k, at most 16.
struct Division {
  long tiles;  // column tiles (grid y)
  int split;   // blocks along k (the cluster, grid x)
  int per;     // k per block
};
Division division(const Problem& p, long sms, int most) {
  Division d;
  d.tiles = ceil_div(p.n, kTileCols);
  const long wanted = (3 * sms + d.tiles - 1) / d.tiles;
  d.split = int(std::max(1L, std::min({wanted, (p.k + 63) / 64, long(most)})));
  d.per = int((p.k + d.split - 1) / d.split);
  d.split = int((p.k + d.per - 1) / d.per);  // no block without k
  return d;
}

std::size_t shared_bytes(int rows) {
  return sizeof(float) * std::size_t(std::max(kChunk * rows, kWarps * rows * kTileCols));
}

template <int R>
using Kernel = void (*)(const float*, const float*, float*, int, int, int, int);
template <int R>
Kernel<R> kernel_for(bool vec) {
  return vec ? gemv_kernel<R, true> : gemv_kernel<R, false>;
}

// How many of the launch's clusters fit at once, for the capacity of `rows`.
int fit(const LaunchConfig& lc, int rows, bool vec) {
  switch (rows) {
    case 1: return clusters_that_fit(kernel_for<1>(vec), lc);
    case 2: return clusters_that_fit(kernel_for<2>(vec), lc);
    case 4: return clusters_that_fit(kernel_for<4>(vec), lc);
    case 8: return clusters_that_fit(kernel_for<8>(vec), lc);
    default: return clusters_that_fit(kernel_for<16>(vec), lc);
  }
}

bool vectorized(const Problem& p, const float* b) {
  return p.n % 4 == 0 && reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

// 16 blocks per cluster where one fits on the device (it holds non-portable clusters of 16), else 8.
int largest_cluster(const Problem& p, const DeviceInfo& d);

LaunchConfig launch_with(const Problem& p, const DeviceInfo& d, int most) {
  const Division s = division(p, long(model_sms(d)), most);
  LaunchConfig lc;
  lc.block = {unsigned(kThreads), 1, 1};
  lc.grid = {unsigned(s.split), unsigned(s.tiles), 1};
  lc.cluster = {unsigned(s.split), 1, 1};
  lc.shared_bytes = shared_bytes(capacity(p.m));
  return lc;
}

int largest_cluster(const Problem& p, const DeviceInfo& d) {
  if (!d.present) return 16;
  const LaunchConfig lc = launch_with(p, d, 16);
  if (lc.cluster.x <= 8) return 16;
  // Whether this capacity's clusters of lc.cluster.x blocks fit, asked of the device once: -1 unknown.
  static std::atomic<signed char> fits[5][2][17];
  static std::once_flag unknown;
  std::call_once(unknown, [] {
    for (auto& by_vec : fits)
      for (auto& by_split : by_vec)
        for (auto& f : by_split) f = -1;
  });
  const int rows = capacity(p.m), vec = p.n % 4 == 0;
  int log2_rows = 0;
  while ((1 << log2_rows) < rows) ++log2_rows;
  std::atomic<signed char>& known = fits[log2_rows][vec][lc.cluster.x];
  if (known < 0) known = fit(lc, rows, vec) > 0 ? 1 : 0;
  return known ? 16 : 8;
}

LaunchConfig launch(const Problem& p, const Params&, const DeviceInfo& d) {
  return launch_with(p, d, largest_cluster(p, d));
}

Reason supports(const Problem& p, const Params&, const DeviceInfo& d) {
  if (p.m > kMaxRows) return "gemv needs m at most 16 (a row vector or a few rows times B; wider: skinny)";
  if (Reason r = fits_int(p)) return r;
  if (ceil_div(p.n, kTileCols) > 65535) return "n / 128 column tiles must be at most 65535 (the grid's y)";
  if (d.present && d.cc_major < 9) return "thread-block clusters need compute capability 9.0 or newer";
  return std::nullopt;
}

template <int R>
void launch_rows(const RunArgs& r, const LaunchConfig& lc, bool vec, int per) {
  const Problem& p = r.problem;
  const Kernel<R> kernel = kernel_for<R>(vec);
  allow_shared_bytes(kernel, lc.shared_bytes);
  if (lc.cluster.x > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, r.a, r.b, r.c, int(p.m), int(p.n), int(p.k), per);
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const LaunchConfig lc = launch(p, *r.params, *r.device);
  const int per = int((p.k + lc.grid.x - 1) / lc.grid.x);
  const bool vec = vectorized(p, r.b);
  switch (capacity(p.m)) {
    case 1: launch_rows<1>(r, lc, vec, per); break;
    case 2: launch_rows<2>(r, lc, vec, per); break;
    case 4: launch_rows<4>(r, lc, vec, per); break;
    case 8: launch_rows<8>(r, lc, vec, per); break;
    default: launch_rows<16>(r, lc, vec, per); break;
  }
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(gemv) {
  a.summary =
      "m <= 16 (GEMV): B streamed once with 16-byte loads, k split over a cluster and summed through DSMEM "
      "(one launch, deterministic)";
  a.variants = {{"default", "a block per 128 columns and k range, 8 rows of B in flight per lane, the k ranges "
                            "of a column tile summed in rank order through DSMEM"}};
  a.constraints = "m <= 16; any n, k (n / 128 <= 65535); compute capability 9.0";
  a.supports = supports;
  a.launch_config = launch;
  a.run = run;
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const LaunchConfig lc = launch(p, q, d);
    return gemv_model(p, q, long(lc.grid.x) * long(lc.grid.y), model_sms(d));
  });
}

}  // namespace mmlab
