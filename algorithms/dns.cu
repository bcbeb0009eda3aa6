// dns: the Dekel-Nassimi-Sahni 3D algorithm: every product term A[i][p] B[p][j] at once, on a
// 3D grid of threads (i, p, j), then a reduction over p.
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013)
// (sections 2.2, 3.1, 3.2, 5). Variants and how they split the work:
//   block3d         one m x k x n block (x = i, y = p, z = j, as in the paper): each thread forms one
//                   term in shared memory, then a shared-memory tree over p gives C[i][j] (sec. 3.1).
//   planes          per TILE^3 sub-product, TILE blocks of TILE (p) x TILE (i) threads, block j
//                   computing column j of the C tile: one term per thread, a tree over p (sec. 3.2).
//   half_planes     the same with 2 TILE blocks of TILE x TILE/2 threads (half a column each).
//   quarter_planes  4 TILE blocks of TILE x TILE/4 threads.
//   tiled_atomic    a 3D grid over (j, i, k) tiles: block (bj, bi, bk) multiplies A's TILE x DEPTH
//                   tile by B's DEPTH x TILE tile with TILE x TILE x L threads (L layers of p, each
//                   summing DEPTH / L terms), reduces the layers in shared memory, and atomicAdds
//                   its partial tile into C, zeroed first (sec. 5, "3D blocks and atomic reduction").
//   tiled_reduce    the same decomposition; partial tiles go to a workspace and a second kernel sums
//                   them in a fixed order: deterministic results, no atomics.
// With one k slice (k <= TILE or DEPTH) the planes and tiled variants store C directly.
// Constraints: block3d: m k n <= 1024 and n <= 64; planes: TILE^2 / split <= 1024; tiled_*:
// TILE^2 <= 1024; tiled_reduce needs ceil(k / DEPTH) m n floats of workspace.
// Example: mmlab run --algorithms dns --dns.variant tiled_atomic,tiled_reduce --tile 16,32 --depth 32,128
// --size 2048
#include "algorithms/kernels/reduce.cuh"
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

__global__ void block3d_kernel(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ c, int m, int n, int k) {
  extern __shared__ float smem[];
  float* sa = smem;          // (m, k)
  float* sb = sa + m * k;    // (k, n)
  float* term = sb + k * n;  // (m, k, n)
  const int i = threadIdx.x, p = threadIdx.y, j = threadIdx.z;
  const int tid = (j * k + p) * m + i, threads = m * k * n;
  for (int e = tid; e < m * k; e += threads) sa[e] = a[e];
  for (int e = tid; e < k * n; e += threads) sb[e] = b[e];
  __syncthreads();
  term[(i * k + p) * n + j] = sa[i * k + p] * sb[p * n + j];
  __syncthreads();
  // The paper skipped barriers in the last 32 lanes (warp-synchronous); since Volta warps do not
  // run in lockstep, every level of the tree synchronises.
  tree_reduce(term + i * k * n + j, p, k, n);
  if (p == 0) c[i * n + j] = term[i * k * n + j];
}

// block (TILE (p), TILE / split (rows)); grid (n * split, ceil(m / TILE), ceil(k / TILE)).
__global__ void planes_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                              int m, int n, int k, int tile, int split, bool accumulate) {
  extern __shared__ float smem[];
  const int depth = blockDim.x, rows = blockDim.y;
  float* sa = smem;               // (rows, depth): this block's rows of A's tile
  float* sb = sa + rows * depth;  // (depth): the k slice of column j of B
  float* term = sb + depth;       // (rows, depth)
  const int p = threadIdx.x, r = threadIdx.y;
  const int j = blockIdx.x / split, part = blockIdx.x % split;
  const long i = long(blockIdx.y) * tile + part * rows + r, q = long(blockIdx.z) * depth + p;
  sa[r * depth + p] = i < m && q < k ? a[i * k + q] : 0.f;
  if (r == 0) sb[p] = q < k ? b[q * n + j] : 0.f;
  __syncthreads();
  term[r * depth + p] = sa[r * depth + p] * sb[p];
  __syncthreads();
  tree_reduce(term + r * depth, p, depth, 1);
  if (p == 0 && i < m) {
    if (accumulate)
      atomicAdd(&c[i * n + j], term[r * depth]);
    else
      c[i * n + j] = term[r * depth];
  }
}

enum class Output { store, atomic, workspace };

// block (TILE (j), TILE (i), L (layers of p)); grid (ceil(n / TILE), ceil(m / TILE), ceil(k / DEPTH)).
__global__ void tiled3d_kernel(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ out, int m, int n, int k, int depth, Output mode) {
  extern __shared__ float smem[];
  const int tile = blockDim.x, layers = blockDim.z;
  float* sa = smem;                 // (TILE, DEPTH)
  float* sb = sa + tile * depth;    // (DEPTH, TILE)
  float* part = sb + depth * tile;  // (L, TILE, TILE): one partial tile per layer
  const int j = threadIdx.x, i = threadIdx.y, layer = threadIdx.z;
  const int tid = (layer * tile + i) * tile + j, threads = tile * tile * layers;
  const long row0 = long(blockIdx.y) * tile, col0 = long(blockIdx.x) * tile, p0 = long(blockIdx.z) * depth;
  for (int e = tid; e < tile * depth; e += threads) {
    const int r = e / depth, x = e % depth;  // A tile, row-major
    sa[e] = row0 + r < m && p0 + x < k ? a[(row0 + r) * k + p0 + x] : 0.f;
    const int y = e / tile, z = e % tile;  // B tile, row-major
    sb[e] = p0 + y < k && col0 + z < n ? b[(p0 + y) * n + col0 + z] : 0.f;
  }
  __syncthreads();
  float acc = 0.f;
  for (int p = layer; p < depth; p += layers) acc = fmaf(sa[i * depth + p], sb[p * tile + j], acc);
  part[(layer * tile + i) * tile + j] = acc;
  __syncthreads();
  tree_reduce(part + i * tile + j, layer, layers, tile * tile);
  const long row = row0 + i, col = col0 + j;
  if (layer != 0 || row >= m || col >= n) return;
  const float v = part[i * tile + j];
  if (mode == Output::store)
    out[row * n + col] = v;
  else if (mode == Output::atomic)
    atomicAdd(&out[row * n + col], v);
  else
    out[blockIdx.z * long(m) * n + row * n + col] = v;  // slice blockIdx.z of the workspace
}

__global__ void sum_slices_kernel(const float* __restrict__ ws, float* __restrict__ c, long count,
                                  int slices) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (int z = 0; z < slices; ++z) s += ws[z * count + e];  // a fixed order: deterministic
    c[e] = s;
  }
}

enum class Kind {
  block3d,
  planes,
  half_planes,
  quarter_planes,
  tiled_atomic,
  tiled_reduce
};  // kVariants' order
const std::vector<Variant> kVariants = {
    {"block3d", "one m x k x n block, one term per thread, shared-memory tree (sec. 3.1)"},
    {"planes", "TILE blocks of TILE x TILE threads per sub-product, one column each (sec. 3.2)"},
    {"half_planes", "2 TILE blocks of TILE x TILE/2 threads per sub-product (sec. 3.2)"},
    {"quarter_planes", "4 TILE blocks of TILE x TILE/4 threads per sub-product (sec. 3.2)"},
    {"tiled_atomic", "3D grid of tile products, layers reduced in shared memory, atomicAdd (sec. 5)"},
    {"tiled_reduce", "the same, partial tiles to a workspace summed by a second kernel"}};

Kind kind_of(const Params& q) { return variant_kind<Kind>(kVariants, q); }
bool is_planes(Kind v) { return v == Kind::planes || v == Kind::half_planes || v == Kind::quarter_planes; }
int split_of(Kind v) { return v == Kind::half_planes ? 2 : v == Kind::quarter_planes ? 4 : 1; }

// Layers of p per block: the largest power of two within the thread, z-dimension and depth limits.
unsigned layers_for(long tile, long depth) {
  unsigned l = 1;
  while (2 * l * tile * tile <= 1024 && 2 * l <= 64 && 2 * l <= depth) l *= 2;
  return l;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  LaunchConfig lc;
  const Kind v = kind_of(q);
  if (v == Kind::block3d) {
    lc.block = {unsigned(p.m), unsigned(p.k), unsigned(p.n)};
    lc.shared_bytes = sizeof(float) * std::size_t(p.m * p.k + p.k * p.n + p.m * p.k * p.n);
  } else if (is_planes(v)) {
    const long t = q.integer("tile"), s = split_of(v);
    lc.block = {unsigned(t), unsigned((t + s - 1) / s), 1};
    lc.grid = {unsigned(p.n * s), ceil_div(p.m, t), ceil_div(p.k, t)};
    lc.shared_bytes = sizeof(float) * (2 * lc.block.volume() + t);
  } else {
    const long t = q.integer("tile"), d = q.integer("depth");
    lc.block = {unsigned(t), unsigned(t), layers_for(t, d)};
    lc.grid = {ceil_div(p.n, t), ceil_div(p.m, t), ceil_div(p.k, d)};
    lc.shared_bytes = sizeof(float) * std::size_t(2 * t * d + lc.block.volume());
  }
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo&) {
  if (Reason r = fits_int(p)) return r;
  const Kind v = kind_of(q);
  if (v == Kind::block3d) {
    const long threads = p.m * p.k * p.n;
    if (threads > 1024)
      return "block3d needs m k n <= 1024 threads (one per term); " + std::to_string(p.m) + "x" +
             std::to_string(p.k) + "x" + std::to_string(p.n) + " gives " + std::to_string(threads);
    if (p.n > 64) return "block3d maps n to the block's z dimension, which holds at most 64";
    return std::nullopt;
  }
  const long t = q.integer("tile");
  if (t > 32)
    return q.variant() + " needs TILE^2 <= 1024 threads; tile " + std::to_string(t) + " gives " +
           std::to_string(t * t);
  if (is_planes(v) && t % split_of(v) != 0)
    return q.variant() + " splits a column in " + std::to_string(split_of(v)) + "; tile must be a multiple";
  if (is_planes(v) && p.n * split_of(v) > 2147483647L) return "grid x (n * split) exceeds 2^31 - 1";
  return std::nullopt;
}

std::size_t workspace(const Problem& p, const Params& q) {
  if (kind_of(q) != Kind::tiled_reduce) return 0;
  const long slices = ceil_div(p.k, q.integer("depth"));
  return slices > 1 ? sizeof(float) * std::size_t(slices) * std::size_t(p.m) * std::size_t(p.n) : 0;
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Params& q = *r.params;
  const LaunchConfig lc = launch(p, q, *r.device);
  const dim3 grid = dim(lc.grid), block = dim(lc.block);
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  const Kind v = kind_of(q);
  const bool sliced = grid.z > 1;
  if (sliced && v != Kind::tiled_reduce && v != Kind::block3d)
    MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));  // atomics add into zero
  if (v == Kind::block3d) {
    block3d_kernel<<<1, block, lc.shared_bytes, r.stream>>>(r.a, r.b, r.c, m, n, k);
  } else if (is_planes(v)) {
    planes_kernel<<<grid, block, lc.shared_bytes, r.stream>>>(r.a, r.b, r.c, m, n, k, int(q.integer("tile")),
                                                              split_of(v), sliced);
  } else {
    allow_shared_bytes(tiled3d_kernel, lc.shared_bytes);
    const Output mode = !sliced                   ? Output::store
                        : v == Kind::tiled_atomic ? Output::atomic
                                                  : Output::workspace;
    float* out = mode == Output::workspace ? static_cast<float*>(r.workspace) : r.c;
    tiled3d_kernel<<<grid, block, lc.shared_bytes, r.stream>>>(r.a, r.b, out, m, n, k,
                                                               int(q.integer("depth")), mode);
    if (mode == Output::workspace) {
      MMLAB_CHECK_LAUNCH();
      const long count = p.m * p.n;
      sum_slices_kernel<<<unsigned(std::min<long>((count + 255) / 256, 65535)), 256, 0, r.stream>>>(
          static_cast<const float*>(r.workspace), r.c, count, int(grid.z));
    }
  }
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(dns) {
  a.summary = "Dekel-Nassimi-Sahni 3D algorithm: all terms at once, reduced over k (O'Neil 2013)";
  a.variants = kVariants;
  const std::vector<std::string> tiled = {"planes", "half_planes", "quarter_planes", "tiled_atomic",
                                          "tiled_reduce"};
  a.axes = {{"tile",
             AxisKind::integer,
             "sub-product edge TILE (planes: k slice and rows; tiled: C tile)",
             "8",
             {"8", "16", "32"},
             tiled},
            {"depth",
             AxisKind::integer,
             "k extent DEPTH of one block's tile product (tiled_atomic, tiled_reduce)",
             "8",
             {"8", "32", "128"},
             {"tiled_atomic", "tiled_reduce"}}};
  a.constraints =
      "block3d: m k n <= 1024, n <= 64; planes family: tile <= 32, a multiple of the split; "
      "tiled_*: tile <= 32; tiled_reduce: ceil(k / depth) m n floats of workspace; any m, n, k";
  a.supports = supports;
  a.launch_config = launch;
  a.workspace_bytes = workspace;
  // Every atomic variant adds its k slices into C in the order the blocks happen to run: C's bits
  // vary from run to run once k spans more than one slice (a crowded H100 showed it for planes at
  // 11x109x2328, data/cheats/h100-127c42a); one slice stores C directly.
  for (const char* v : {"planes", "half_planes", "quarter_planes"})
    a.set_nondeterminism(v, "k slices' column sums added atomically");
  a.set_nondeterminism("tiled_atomic", "k slices' partial tiles added atomically");
  a.is_nondeterministic = [](const Problem& p, const Params& q) {
    return p.k > q.integer(is_planes(kind_of(q)) ? "tile" : "depth");
  };
  a.run = run;
}

}  // namespace mmlab
