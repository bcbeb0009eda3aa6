// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, 16-byte
// loads and double-buffered shared memory, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of papers/gupta-bhalla-... and papers/sgemm-... taken to
// their usual end point (block tile -> warp tile -> thread tile).
// Split: a block of (BM/32) x (BN/64) warps computes a BM x BN tile of C; each warp a 32 x 64 warp
// tile as 4 x 8 threads; each thread an 8 x 8 thread tile made of 2 x 2 quads of 4 x 4 outputs
// (rows tm*4 + {0..3} and 16 + tm*4 + {0..3} of the warp tile, columns tn*4 + {0..3} and
// 32 + tn*4 + {0..3}), so each k step is four 16-byte shared loads for 64 FFMAs. The A tile is stored
// transposed, (BK, BM + 4): a warp's A reads are 4 distinct float4s, its B reads 8 contiguous
// float4s (no bank conflicts), and the +4 pitch sends the transposing stores to distinct banks.
// The next k tile is loaded into registers while the current one is multiplied (one barrier per
// tile). `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first)
// with atomics. 16-byte global accesses where rows are 16-byte aligned (k % 4 == 0 for A,
// n % 4 == 0 for B and C), guarded scalar ones at the edges and otherwise: any m, n, k.
// Variants: `tuned` picks tile, depth and split from the problem size (the table below, chosen by
// experiments/flagship-tuning.ini); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include "algorithms/common.cuh"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK>
struct Shape {
  static constexpr int kWarpsM = kBM / 32, kWarpsN = kBN / 64, kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kPitchA = kBM + 4;
  static constexpr int kLoadsA = kBM * kBK / 4 / kThreads, kLoadsB = kBK * kBN / 4 / kThreads;  // float4s
  static_assert(kBM % 32 == 0 && kBN % 64 == 0 && kBK % 4 == 0, "whole warp tiles, whole float4s in k");
  static_assert(kLoadsA >= 1 && kLoadsB >= 1 && kLoadsA * 4 * kThreads == kBM * kBK &&
                    kLoadsB * 4 * kThreads == kBK * kBN, "every thread loads the same number of float4s");
};

// kOccupancy 2 caps registers for two 256-thread blocks per SM (128 a thread; four blocks of 128
// threads, eight of 64); kOccupancy 1 leaves the compiler up to 255 with half the blocks.
template <int kBM, int kBN, int kBK, int kOccupancy>
__global__ void __launch_bounds__(Shape<kBM, kBN, kBK>::kThreads,
                                  kOccupancy * 256 / Shape<kBM, kBN, kBK>::kThreads)
    register_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                          int n, int k, int k_per_split, bool accumulate) {
  using S = Shape<kBM, kBN, kBK>;
  __shared__ __align__(16) float as[2][kBK][S::kPitchA];  // (buffer, k, rows): A transposed
  __shared__ __align__(16) float bs[2][kBK][kBN];         // (buffer, k, columns)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = (warp % S::kWarpsM) * 32, wn = (warp / S::kWarpsM) * 64;  // warp tile origin
  const int tm = (lane / 8) * 4, tn = (lane % 8) * 4;                      // thread quad origin
  const long row0 = long(blockIdx.y) * kBM, col0 = long(blockIdx.x) * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const bool vec_a = (k & 3) == 0, vec_b = (n & 3) == 0;  // 16-byte aligned rows

  // Each thread's share of a tile: its float4s of A (row r, k offset q) and of B (k row r, column
  // q), as 32-bit element offsets of the first tile (supports() keeps every matrix under 2^31
  // elements), and whether they lie inside the matrix.
  int oa[S::kLoadsA], ob[S::kLoadsB];
  bool row_ok[S::kLoadsA], col_ok[S::kLoadsB];
#pragma unroll
  for (int f = 0; f < S::kLoadsA; ++f) {
    const int e = tid + f * S::kThreads, r = e / (kBK / 4);
    row_ok[f] = row0 + r < m;
    oa[f] = (row_ok[f] ? int(row0) + r : 0) * k + k_begin + (e % (kBK / 4)) * 4;
  }
#pragma unroll
  for (int f = 0; f < S::kLoadsB; ++f) {
    const int e = tid + f * S::kThreads, q = (e % (kBN / 4)) * 4;
    col_ok[f] = col0 + q + 3 < n;
    ob[f] = (k_begin + e / (kBN / 4)) * n + int(col0) + q;
  }
  const bool full_rows = row0 + kBM <= m && vec_a;
  float4 ra[S::kLoadsA], rb[S::kLoadsB];  // the next tile, in flight
  auto load = [&](int k0) {
    const int step = k0 - k_begin;
    const bool full_k = k0 + kBK <= k_end;
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const float* src = a + oa[f] + step;
      if (full_rows && full_k) {
        ra[f] = __ldg(reinterpret_cast<const float4*>(src));
      } else {
        const int p = k0 + ((tid + f * S::kThreads) % (kBK / 4)) * 4;
        const bool ok = row_ok[f];
        ra[f].x = ok && p < k_end ? src[0] : 0.f;
        ra[f].y = ok && p + 1 < k_end ? src[1] : 0.f;
        ra[f].z = ok && p + 2 < k_end ? src[2] : 0.f;
        ra[f].w = ok && p + 3 < k_end ? src[3] : 0.f;
      }
    }
#pragma unroll
    for (int f = 0; f < S::kLoadsB; ++f) {
      const int p = k0 + (tid + f * S::kThreads) / (kBN / 4);
      const float* src = b + ob[f] + step * n;
      if (vec_b && col_ok[f] && p < k_end) {
        rb[f] = __ldg(reinterpret_cast<const float4*>(src));
      } else {
        const int col = int(col0) + ((tid + f * S::kThreads) % (kBN / 4)) * 4;
        const bool ok = p < k_end;
        rb[f].x = ok && col < n ? src[0] : 0.f;
        rb[f].y = ok && col + 1 < n ? src[1] : 0.f;
        rb[f].z = ok && col + 2 < n ? src[2] : 0.f;
        rb[f].w = ok && col + 3 < n ? src[3] : 0.f;
      }
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBK / 4), q = (e % (kBK / 4)) * 4;
      as[buf][q + 0][r] = ra[f].x;
      as[buf][q + 1][r] = ra[f].y;
      as[buf][q + 2][r] = ra[f].z;
      as[buf][q + 3][r] = ra[f].w;
    }
#pragma unroll
    for (int f = 0; f < S::kLoadsB; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBN / 4), q = (e % (kBN / 4)) * 4;
      *reinterpret_cast<float4*>(&bs[buf][r][q]) = rb[f];
    }
  };

  float acc[8][8] = {};  // (2 x 4 rows, 2 x 4 columns)
  load(k_begin);
  store(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = k_begin; k0 < k_end; k0 += kBK) {
    const bool more = k0 + kBK < k_end;
    if (more) load(k0 + kBK);
#pragma unroll
    for (int p = 0; p < kBK; ++p) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[buf][p][wm + tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[buf][p][wm + 16 + tm]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[buf][p][wn + tn]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[buf][p][wn + 32 + tn]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    // Nobody reads buf ^ 1 now: the last barrier came after its last use.
    if (more) store(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = int(row0) + wm + (i < 4 ? tm + i : 16 + tm + i - 4);
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = int(col0) + wn + half * 32 + tn;
      float* dst = c + row * n + col;
      const float* v = &acc[i][half * 4];
      if (accumulate) {
        for (int j = 0; j < 4; ++j)
          if (col + j < n) atomicAdd(dst + j, v[j]);
      } else if (vec_b && col + 3 < n) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
        for (int j = 0; j < 4; ++j)
          if (col + j < n) dst[j] = v[j];
      }
    }
  }
}

// Compiled (BM, BN, BK): threads = (BM / 32) (BN / 64) 32.
#define MMLAB_REGISTER_TILED(X) \
  X(128, 128, 8) X(128, 128, 16) X(128, 64, 8) X(128, 64, 16) X(64, 128, 8) X(64, 128, 16) X(64, 64, 8) X(64, 64, 16)

struct Choice {
  long bm, bn, bk, split, occupancy;
};

// The `tuned` variant's table: problem size -> configuration. Chosen by
// experiments/flagship-tuning.ini (data/flagship/tuning.csv); see docs/flagship-notes.md.
Choice tuned(const Problem& p) {
  const double blocks128 = double(ceil_div(p.m, 128)) * double(ceil_div(p.n, 128));
  if (blocks128 >= 132) return {128, 128, 8, 1, 2};
  const double blocks64 = double(ceil_div(p.m, 64)) * double(ceil_div(p.n, 64));
  long split = 1;
  while (blocks64 * split < 132 && p.k / (split * 2) >= 256) split *= 2;  // fill the SMs, keep k slices long
  return {64, 64, 8, split, 2};
}

Choice choice(const Problem& p, const Params& q) {
  if (q.variant() == "tuned") return tuned(p);
  const Shape2 t = q.shape("tile");
  return {t.x, t.y, q.integer("depth"), q.integer("split"), q.integer("occupancy")};
}

long k_per_split(const Problem& p, const Choice& ch) {
  const long per = (p.k + ch.split - 1) / ch.split;
  return (per + ch.bk - 1) / ch.bk * ch.bk;  // whole k tiles per split
}

LaunchConfig launch(const Problem& p, const Params& q) {
  const Choice ch = choice(p, q);
  LaunchConfig lc;
  lc.block = {unsigned((ch.bm / 32) * (ch.bn / 64) * 32), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), ceil_div(p.k, k_per_split(p, ch))};
  lc.shared_bytes = sizeof(float) * std::size_t(2 * ch.bk * (ch.bm + 4) + 2 * ch.bk * ch.bn);
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo&) {
  const Choice ch = choice(p, q);
  if (p.m * p.k >= (1L << 31) || p.k * p.n >= (1L << 31) || p.m * p.n >= (1L << 31))
    return "register_tiled indexes with 32 bits: every matrix must have fewer than 2^31 elements";
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  if (ch.occupancy != 1 && ch.occupancy != 2) return "occupancy must be 1 or 2";
#define MMLAB_MATCH(BM, BN, BK) if (ch.bm == BM && ch.bn == BN && ch.bk == BK) return fits_int(p);
  MMLAB_REGISTER_TILED(MMLAB_MATCH)
#undef MMLAB_MATCH
  return "register_tiled compiles tile 128x128, 128x64, 64x128, 64x64 with depth 8 or 16; not " +
         std::to_string(ch.bm) + "x" + std::to_string(ch.bn) + " depth " + std::to_string(ch.bk);
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(p, *r.params);
  const LaunchConfig lc = launch(p, *r.params);
  const bool split = lc.grid.z > 1;
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));
  const int m = int(p.m), n = int(p.n), k = int(p.k), per = int(k_per_split(p, ch));
#define MMLAB_LAUNCH(BM, BN, BK)                                                                        \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK) {                                                      \
    if (ch.occupancy == 1)                                                                              \
      register_tiled_kernel<BM, BN, BK, 1><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(r.a, r.b, r.c, m, n, k, per, split); \
    else                                                                                                \
      register_tiled_kernel<BM, BN, BK, 2><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(r.a, r.b, r.c, m, n, k, per, split); \
  }
  MMLAB_REGISTER_TILED(MMLAB_LAUNCH)
#undef MMLAB_LAUNCH
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

namespace algorithms {
const Algorithm& register_tiled() {
  static const Algorithm a = [] {
    Algorithm a;
    a.name = "register_tiled";
    a.summary = "flagship: warp-tiled 8x8 register blocking, 16-byte loads, double-buffered shared memory, split-k";
    a.source = "algorithms/register_tiled.cu";
    a.variants = {{"tuned", "tile, depth and split chosen from the problem size (the tuning table)"},
                  {"manual", "tile, depth and split from the axes"}};
    const std::vector<std::string> manual = {"manual"};
    a.axes = {{"tile", AxisKind::shape, "block tile BMxBN (warp tile 32x64, thread tile 8x8)", "128x128",
               {"128x128", "128x64", "64x128", "64x64"}, manual},
              {"depth", AxisKind::integer, "k step BK of a shared-memory tile", "8", {"8", "16"}, manual},
              {"split", AxisKind::integer, "k split over blockIdx.z, partial tiles added atomically", "1",
               {"1", "3"}, manual},
              {"occupancy", AxisKind::integer, "blocks per SM the register budget is sized for (1 or 2)", "2",
               {"1", "2"}, manual}};
    a.constraints = "tile 128x128/128x64/64x128/64x64, depth 8 or 16, split 1 to 64, occupancy 1 or 2; "
                    "each matrix under 2^31 elements; any m, n, k";
    a.supports = supports;
    a.launch_config = launch;
    a.run = run;
    return a;
  }();
  return a;
}
}  // namespace algorithms

}  // namespace mmlab
