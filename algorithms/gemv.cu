// gemv: C = A B where m is at most 16 or n is 1 (a row vector or a few rows times B; A times a
// vector), where the time is the large operand's bytes read from DRAM once and
// nothing else (before it, at m = 1 on an H100, skinny's rows kernel ran at 0.43-0.48x cuBLAS and the
// flagship, running small, at 0.59-0.83x: data/flagship/weak-classes/weak-baseline.csv).
//
// rows (m <= 2, B streamed): a lane keeps four columns of B (one 16-byte load per row where n % 4 ==
// 0, else four coalesced 4-byte loads) and the m x 4 sums of them, a round of 8 rows of B in flight
// while the round before is multiplied, A's values for those rows loaded with them (a warp reads one
// address: a broadcast; B's loads kept out of L1 where B is under 4 L2s). A block of 256 threads (8 warps) takes `width` columns (128 G) and a range
// of k: G warps side by side on a row of B (G x 512 contiguous bytes at once: at 1x8192x8192 on an
// H100, 79% of the DRAM peak at G = 8 against 60% at G = 1, ncu), the other 8 / G on interleaved
// rows, their sums added in shared memory in order.
// ring_rows (m of 3-16): the same division, each warp's rows of B and A's values for them streamed
// through its own ring in shared memory by cp.async (3 stages of 4 rows in flight a warp), where 4 to
// 16 rows' sums leave too few registers for rounds in flight.
// cols (n = 1, m larger; A streamed; `width` plays no part): W warps take a row of A and a range of k
// (8 / W rows a block; W the fewest, up to 8, whose round of 512 W values covers the row), a thread four
// consecutive k at a time (one 16-byte load from the row's first 16-byte boundary on, at any k; A's
// loads kept out of L1, where B's values stay), two rounds of 4 loads alternating, and a shuffle tree
// and the W warps' sums in order add the threads' sums. A few columns (n of 2-4) are skinny's: B's rows
// read where used made this kernel 5x slower than skinny at 12000x4x12000 (h100-a50aa38/).
// The k ranges of one output tile are the blocks of a thread-block cluster (up to 16): each block
// sums its share of the tile over the cluster in rank order through distributed shared memory: one
// launch, no workspace, the same sum on every run. The cluster's size is chosen so that about three
// blocks per SM stream at once (rows), or the device's block slots are filled once by clusters it
// holds at once (cols). Wider small sides are skinny's and small's.
// Accepts any k; m <= 16 (capacity 1, 2, 4, 8 or 16 rows) or n = 1.
// Example: mmlab run --algorithms gemv,skinny,cublas --gemv.width all --shape 1x8192x8192,8192x1x8192,12x3001x7000 --l2-flush on
#include <map>
#include <mutex>

#include "algorithms/kernels/gemv_kernels.cuh"
#include "algorithms/launch/clusters.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/models/gemv_model.hpp"

namespace mmlab {
namespace {

constexpr long kMaxRows = 16;      // rows and ring_rows: m at most
constexpr long kMaxCols = 1;       // cols: n at most
constexpr int kRingFrom = 4;       // the capacity from which ring_rows takes the rows

// cols: the warps on a row of A, W: the fewest whose round (512 W of k) covers the row, at most 8 (on
// an H100, at 22 problems each W forced against this rule: W = 8 at 20000x1x1001 ran at 0.59x cuBLAS,
// 2 at 1.09; 1 at 2500x1x9999 at 0.64, 8 at 0.89; data/flagship/weak-classes/h100-1c145fa/c37-forced*.csv).
int cols_warps(const Problem& p) {
  int w = 1;
  while (w < kWarps && 128L * kColsRound * w < p.k) w *= 2;
  while (w > 1 && ceil_div(p.m, long(kWarps / w)) > 65535) w /= 2;  // the grid's y holds the tiles
  return w;
}

// The small side rounded up to the kernels' capacity: 1, 2, 4, 8 or 16 (cols: 1).
int capacity(long side) {
  int r = 1;
  while (r < side) r *= 2;
  return r;
}

// How the problem is cut: rows (m small) or cols, the columns of B a block takes (rows: its axis
// `width`, 128 x G), its output tiles (grid y), the blocks of a cluster along k (grid x) and the k of
// each, at most `most` per cluster. rows: enough blocks for about three per SM, each with at least 64
// k; cols: as many as the device's block slots (`slots`) hold at once, each with at least a round (512
// W) of k (on an H100, in one run: at 1575x1x1241 three blocks a cluster, 1.1 waves, 13.9 us, two, one
// wave, 11.5; data/flagship/weak-classes/h100-3fd945f/cols-vec-*.csv).
struct Division {
  bool rows;
  int side;    // capacity of the small side
  int groups;  // rows: G, the 128-column groups of a block; cols: W, the warps on a row of A
  long tiles;  // rows: 128 G columns of B each; cols: 8 / W rows of A each
  int split, per;
  bool bypass = true;  // rows: B's loads kept out of L1 (cols: A's always are)
};
Division division(const Problem& p, const Params& q, double sms, long slots, int most) {
  Division d;
  d.rows = p.m <= kMaxRows && (p.n > kMaxCols || p.m <= p.n);
  d.side = capacity(d.rows ? p.m : p.n);
  d.groups = d.rows ? int(q.integer("width") / kTileCols) : cols_warps(p);
  d.tiles = d.rows ? ceil_div(p.n, long(d.groups) * kTileCols) : ceil_div(p.m, long(kWarps / d.groups));
  const long least = d.rows ? 64 : 128 * kColsRound * d.groups;  // k of a block at the least: a round
  const long wanted = d.rows ? (long(3 * sms) + d.tiles - 1) / d.tiles : slots / d.tiles;
  d.split = int(std::max(1L, std::min({wanted, (p.k + least - 1) / least, long(most)})));
  d.per = int((p.k + d.split - 1) / d.split);
  if (!d.rows) d.per = (d.per + 127) / 128 * 128;  // each block's k a multiple of 4: rows' 16-byte boundaries
  d.split = int((p.k + d.per - 1) / d.per);        // no block without k
  return d;
}

// rows: the warps' sums; ring_rows: the warps' rings (B's rows and A's values; the sums fit in them);
// cols: the block's partial tile.
std::size_t shared_bytes(const Division& d) {
  if (!d.rows) return sizeof(float) * 2 * kWarps;
  if (d.side < kRingFrom) return sizeof(float) * kWarps * d.side * kTileCols;  // any G
  return sizeof(float) * kWarps * kStages * kRows * (kTileCols + d.side);
}

using Kernel = void (*)(const float*, const float*, float*, int, int, int, int);

// The rows kernel of a cut: B's loads kept out of L1 where its rows are not 16-byte loads, or where B
// is under 4 L2s (on an H100, two runs: 1x7391x2098 0.83 -> 0.97x cuBLAS at its best width, 2x3001x4097
// 1.18 -> 1.32, but 1x10814x16315 1.16 -> 1.08 and 2x16384x16384 1.16 -> 1.09;
// data/flagship/weak-classes/h100-1c145fa/c39-*.csv).
template <int R, bool kVec, int G>
Kernel rows_of(const Division& d) {
  if constexpr (!kVec) {
    return rows_kernel<R, false, G, true>;
  } else {
    return d.bypass ? rows_kernel<R, true, G, true> : rows_kernel<R, true, G, false>;
  }
}

// The compiled kernel of a cut, A and B 16-byte aligned or not.
template <int R, bool kVec>
Kernel kernel_of(const Division& d) {
  if constexpr (R == 1) {
    if (!d.rows) {
      switch (d.groups) {
        case 1: return cols_kernel<kVec, 1>;
        case 2: return cols_kernel<kVec, 2>;
        case 4: return cols_kernel<kVec, 4>;
        default: return cols_kernel<kVec, 8>;
      }
    }
  }
  if constexpr (R < kRingFrom) {
    switch (d.groups) {
      case 1: return rows_of<R, kVec, 1>(d);
      case 2: return rows_of<R, kVec, 2>(d);
      case 4: return rows_of<R, kVec, 4>(d);
      default: return rows_of<R, kVec, 8>(d);
    }
  } else {
    switch (d.groups) {
      case 1: return ring_rows_kernel<R, kVec, 1>;
      case 2: return ring_rows_kernel<R, kVec, 2>;
      case 4: return ring_rows_kernel<R, kVec, 4>;
      default: return ring_rows_kernel<R, kVec, 8>;
    }
  }
}
Kernel kernel_for(const Division& d, bool vec) {
  switch (d.side) {
    case 1: return vec ? kernel_of<1, true>(d) : kernel_of<1, false>(d);
    case 2: return vec ? kernel_of<2, true>(d) : kernel_of<2, false>(d);
    case 4: return vec ? kernel_of<4, true>(d) : kernel_of<4, false>(d);
    case 8: return vec ? kernel_of<8, true>(d) : kernel_of<8, false>(d);
    default: return vec ? kernel_of<16, true>(d) : kernel_of<16, false>(d);
  }
}

// Whether the large operand's rows start 16-byte aligned (the pointers themselves are checked at run
// time); the cols kernel finds each row's first 16-byte boundary itself.
bool vectorizable(const Problem& p, const Division& d) { return !d.rows || p.n % 4 == 0; }

LaunchConfig launch_of(const Division& d) {
  LaunchConfig lc;
  lc.block = {unsigned(kThreads), 1, 1};
  lc.grid = {unsigned(d.split), unsigned(d.tiles), 1};
  lc.cluster = {unsigned(d.split), 1, 1};
  lc.shared_bytes = shared_bytes(d);
  return lc;
}

// cols: the block slots of the device, SMs x the kernel's occupancy, asked of the device once per
// kernel (without a GPU, an H100's 132 SMs and the launch bounds' blocks).
long block_slots(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Division cut = division(p, q, 1, 1, 1);  // the kernel and its shared memory: any split's
  long per_sm = kColsBlocks;
  if (d.present && !cut.rows) {
    static std::mutex lock;
    static std::map<Kernel, int> known;
    const Kernel kernel = kernel_for(cut, true);
    std::lock_guard<std::mutex> hold(lock);
    auto it = known.find(kernel);
    if (it == known.end()) it = known.emplace(kernel, resident_blocks(kernel, kThreads, shared_bytes(cut))).first;
    per_sm = it->second;
  }
  return long(model_sms(d)) * std::max(1L, per_sm);
}

// How many clusters of a cut the device holds at once, asked once per kernel and cluster size.
int clusters_held(const Division& cut, bool vec) {
  static std::mutex lock;
  static std::map<std::pair<Kernel, int>, int> known;
  const Kernel kernel = kernel_for(cut, vec);
  std::lock_guard<std::mutex> hold(lock);
  const auto key = std::make_pair(kernel, cut.split);
  auto it = known.find(key);
  if (it == known.end()) it = known.emplace(key, clusters_that_fit(kernel, launch_of(cut))).first;
  return it->second;
}

// rows: clusters of up to 16 blocks where one fits on the device (it holds non-portable clusters of
// 16), else of up to 8. cols: no more clusters than the device holds at once (one wave; on an H100 at
// 33x1x100003, W = 8, 33 clusters of 16 took 20.0 us, more than fit at once, and 33 of 12 16.0 us,
// cuBLAS 16.9-17.1 in each run: data/flagship/weak-classes/h100-1c145fa/c36-cols-new*, c37-rule*).
Division division(const Problem& p, const Params& q, const DeviceInfo& d) {
  const long slots = block_slots(p, q, d);
  const double l2 = d.l2_bytes > 0 ? double(d.l2_bytes) : 50.0 * (1 << 20);  // without a GPU, an H100's
  auto cut_at = [&](int most) {
    Division c = division(p, q, model_sms(d), slots, most);
    const double b_bytes = 4.0 * double(p.k) * double(p.n);
    c.bypass = !c.rows || !vectorizable(p, c) || b_bytes < 4 * l2;
    return c;
  };
  Division cut = cut_at(16);
  if (!d.present) return cut;
  const bool vec = vectorizable(p, cut);
  if (cut.rows) return cut.split <= 8 || clusters_held(cut, vec) > 0 ? cut : cut_at(8);
  while (cut.split > 1 && clusters_held(cut, vec) < cut.tiles) cut = cut_at(cut.split - 1);
  return cut;
}

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo& d) { return launch_of(division(p, q, d)); }

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (p.m > kMaxRows && p.n > kMaxCols)
    return "gemv needs m at most 16 or n = 1 (a GEMV-like shape; wider: skinny, small)";
  if (Reason r = fits_int(p)) return r;
  const long width = q.integer("width");
  if (width != 128 && width != 256 && width != 512 && width != 1024)
    return "width must be 128, 256, 512 or 1024 (128 columns per warp, 1, 2, 4 or 8 warps side by side)";
  const Division s = division(p, q, model_sms(d), block_slots(p, q, d), 16);
  if (s.tiles > 65535)
    return std::string(s.rows ? "n / width" : "m / (8 / W)") + " output tiles must be at most 65535 (the grid's y)";
  if (d.present && d.cc_major < 9) return "thread-block clusters need compute capability 9.0 or newer";
  return std::nullopt;
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Division d = division(p, *r.params, *r.device);
  const LaunchConfig lc = launch_of(d);
  auto aligned = [](const float* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0; };
  const Kernel kernel = kernel_for(d, vectorizable(p, d) && aligned(r.a) && aligned(r.b));
  allow_shared_bytes(kernel, lc.shared_bytes);
  if (lc.cluster.x > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch_in_clusters(kernel, lc, r.stream, r.a, r.b, r.c, int(p.m), int(p.n), int(p.k), d.per);
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(gemv) {
  a.summary =
      "m <= 16 or n = 1 (GEMV-like): the large operand streamed once with 16-byte loads, k split over a "
      "cluster and summed through DSMEM (one launch, deterministic)";
  a.variants = {{"default", "rows (m <= 16): a block per `width` columns of B and a k range, a warp per 128 of "
                            "them and every 8 / G-th row (m >= 3: streamed through a cp.async ring); cols (n = 1, "
                            "m larger): W warps per row of A, the fewest (1-8) whose 512 W values a round cover it"}};
  a.axes = {{"width",
             AxisKind::integer,
             "columns of B a block of the rows kernel takes (128 G: G warps side by side on a row of B, 8 / G on "
             "interleaved rows); the cols kernel has none",
             "1024",
             {"128", "256", "512", "1024"},
             {"default"}}};
  a.constraints =
      "m <= 16 or n = 1; any k; at most 65535 output tiles (n / width or m / 8); compute capability 9.0";
  a.supports = supports;
  a.launch_config = launch;
  a.run = run;
  use_linear_model(a, [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const Division s = division(p, q, d);
    return gemv_model(p, q, {s.rows, s.side, long(s.split) * s.tiles});
  });
}

}  // namespace mmlab
