// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of papers/gupta-bhalla-... and papers/sgemm-... taken to
// their usual end point (block tile -> warp tile -> thread tile).
// Split: a block of (BM/32) x (BN/64) warps computes a BM x BN tile of C; each warp a 32 x 64 warp
// tile as 4 x 8 threads; each thread an 8 x 8 thread tile made of 2 x 2 quads of 4 x 4 outputs
// (rows tm*4 + {0..3} and 16 + tm*4 + {0..3} of the warp tile, columns tn*4 + {0..3} and
// 32 + tn*4 + {0..3}), so each k step is four 16-byte shared loads for 64 FFMAs. The A tile is stored
// transposed, (BK, BM + 4): a warp's A reads are 4 distinct float4s, its B reads 8 contiguous
// float4s (no bank conflicts), and the +4 pitch sends the transposing stores to distinct banks.
// B tiles are copied global -> shared by cp.async into STAGES buffers, STAGES - 1 tiles ahead of
// the multiply; A tiles, which are transposed on the way, go through registers with 16-byte loads
// one tile ahead (one barrier per tile). `split` > 1 divides k over blockIdx.z and adds the partial tiles
// into C (zeroed first) with atomics. 16-byte global accesses where rows are 16-byte aligned (k % 4 == 0 for
// A, n % 4 == 0 for B and C), guarded scalar ones at the edges and otherwise: any m, n, k. Variants: `tuned`
// picks tile, depth and split from the problem size (the table below, chosen by
// experiments/flagship-tuning.ini); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include "algorithms/common.cuh"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK>
struct Shape {
  static constexpr int kWarpsM = kBM / 32, kWarpsN = kBN / 64, kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kPitchA = kBM + 4;
  static constexpr int kStage = kBK * kPitchA + kBK * kBN;   // floats of one pipeline stage
  static constexpr int kLoadsA = kBM * kBK / 4 / kThreads;   // 16-byte loads of A per thread
  static constexpr int kCopiesB = kBK * kBN / 4 / kThreads;  // 16-byte copies of B per thread
  static_assert(kBM % 32 == 0 && kBN % 64 == 0 && kBK % 4 == 0, "whole warp tiles, whole float4s in k");
  static_assert(kLoadsA * 4 * kThreads == kBM * kBK && kCopiesB * 4 * kThreads == kBK * kBN,
                "every thread copies the same amount");
};

// Asynchronous global -> shared copies (sm_80+). A source size of 0 writes zeros: the edges.
__device__ inline void copy4(float* dst, const float* src, bool valid) {
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 4 : 0));
}
__device__ inline void copy16(float* dst, const float* src, bool valid) {
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void wait_for() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// kStages shared-memory stages: while stage t is multiplied, tiles t + 1 .. t + kStages - 1 are in
// flight. kOccupancy 2 caps registers for two 256-thread blocks per SM (128 a thread; four blocks
// of 128 threads, eight of 64); kOccupancy 1 leaves the compiler up to 255 with half the blocks.
template <int kBM, int kBN, int kBK, int kStages, int kOccupancy>
__global__ void __launch_bounds__(Shape<kBM, kBN, kBK>::kThreads,
                                  kOccupancy * 256 / Shape<kBM, kBN, kBK>::kThreads)
    register_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                          int m, int n, int k, int k_per_split, bool accumulate) {
  using S = Shape<kBM, kBN, kBK>;
  extern __shared__ __align__(16) float smem[];  // kStages x [A (BK, BM + 4) transposed, B (BK, BN)]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = (warp % S::kWarpsM) * 32, wn = (warp / S::kWarpsM) * 64;  // warp tile origin
  const int tm = (lane / 8) * 4, tn = (lane % 8) * 4;                      // thread quad origin
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;
  const bool vec_b = (n & 3) == 0;  // 16-byte aligned rows of B

  // A tile t: 16-byte loads into registers (row r, k offset q), stored transposed into its stage
  // later; with the BM + 4 pitch a warp's transposing stores spread over the banks.
  const bool vec_a = (k & 3) == 0;
  float4 ra[S::kLoadsA];
  auto load_a = [&](int t) {
    const int k0 = k_begin + t * kBK;
    const bool full = vec_a && row0 + kBM <= m && k0 + kBK <= k_end;
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBK / 4), p = k0 + (e % (kBK / 4)) * 4;
      const float* src = a + (row0 + r < m ? row0 + r : 0) * k + p;
      if (full) {
        ra[f] = __ldg(reinterpret_cast<const float4*>(src));
      } else {
        const bool ok = row0 + r < m;
        ra[f].x = ok && p < k_end ? src[0] : 0.f;
        ra[f].y = ok && p + 1 < k_end ? src[1] : 0.f;
        ra[f].z = ok && p + 2 < k_end ? src[2] : 0.f;
        ra[f].w = ok && p + 3 < k_end ? src[3] : 0.f;
      }
    }
  };
  auto store_a = [&](int t) {
    float* as = smem + (t % kStages) * S::kStage;
#pragma unroll
    for (int f = 0; f < S::kLoadsA; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBK / 4), q = (e % (kBK / 4)) * 4;
      as[(q + 0) * S::kPitchA + r] = ra[f].x;
      as[(q + 1) * S::kPitchA + r] = ra[f].y;
      as[(q + 2) * S::kPitchA + r] = ra[f].z;
      as[(q + 3) * S::kPitchA + r] = ra[f].w;
    }
  };
  // B tile t: asynchronous 16-byte copies straight into its stage (4-byte ones at the edges).
  auto issue_b = [&](int t) {
    float* bs = smem + (t % kStages) * S::kStage + kBK * S::kPitchA;
    const int k0 = k_begin + t * kBK;
#pragma unroll
    for (int f = 0; f < S::kCopiesB; ++f) {
      const int e = tid + f * S::kThreads, r = e / (kBN / 4), q = (e % (kBN / 4)) * 4;
      const int p = k0 + r, col = col0 + q;
      const float* src = b + p * n + col;
      if (vec_b && p < k_end && col + 3 < n) {
        copy16(&bs[r * kBN + q], src, true);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool ok = p < k_end && col + j < n;
          copy4(&bs[r * kBN + q + j], ok ? src + j : b, ok);
        }
      }
    }
  };

  float acc[8][8] = {};  // (2 x 4 rows, 2 x 4 columns)
  // Prologue: tiles 0 .. STAGES - 2 into their stages, and tile STAGES - 1 of A into registers.
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < tiles) {
      issue_b(t);
      load_a(t);
      store_a(t);
    }
    commit();  // one group per tile, empty past the end, so the counting below stays uniform
  }
  if (kStages - 1 < tiles) load_a(kStages - 1);
  for (int t = 0; t < tiles; ++t) {
    wait_for<kStages - 2>();  // B of tile t has landed (for this thread) ...
    __syncthreads();          // ... and for everyone, as have A's stores; stage (t - 1) % STAGES is free
    const int next = t + kStages - 1;
    if (next < tiles) {
      issue_b(next);
      store_a(next);  // loaded during the last tile's multiply
    }
    commit();
    if (next + 1 < tiles) load_a(next + 1);  // in flight during this tile's multiply
    const float* as = smem + (t % kStages) * S::kStage;
    const float* bs = as + kBK * S::kPitchA;
#pragma unroll
    for (int p = 0; p < kBK; ++p) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[p * S::kPitchA + wm + tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[p * S::kPitchA + wm + 16 + tm]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + tn]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[p * kBN + wn + 32 + tn]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
  wait_for<0>();  // no copy may still target shared memory when the block exits

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = row0 + wm + (i < 4 ? tm + i : 16 + tm + i - 4);
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = col0 + wn + half * 32 + tn;
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

// Compiled (BM, BN, BK); each with 2 or 3 stages and occupancy 1 or 2.
#define MMLAB_REGISTER_TILED(X) \
  X(128, 128, 8)                \
  X(128, 128, 16) X(128, 64, 8) X(128, 64, 16) X(64, 128, 8) X(64, 128, 16) X(64, 64, 8) X(64, 64, 16)

struct Choice {
  long bm, bn, bk, split, stages, occupancy;
};

// The `tuned` variant's table, read off experiments/flagship-tuning.ini on the H100
// (data/flagship/tuning.csv; docs/flagship-notes.md): while 128 x 128 tiles give about one block
// per SM (128 of the 132) they win, best with depth 8, 3 stages and two blocks per SM; below that,
// 128 x 64 tiles (64 x 128 when n > m) with depth 16, 3 stages, one block per SM, and k split
// until the SMs are filled, keeping each k slice at least 128 long.
Choice tuned(const Problem& p) {
  constexpr double kWave = 128;
  auto blocks = [&](long bm, long bn) { return double(ceil_div(p.m, bm)) * double(ceil_div(p.n, bn)); };
  if (blocks(128, 128) >= kWave) return {128, 128, 8, 1, 3, 2};
  const bool tall = p.m >= p.n;
  const long bm = tall ? 128 : 64, bn = tall ? 64 : 128;
  long split = 1;
  while (blocks(bm, bn) * split < kWave && p.k / (split * 2) >= 128) split *= 2;
  return {bm, bn, 16, split, 3, 1};
}

Choice choice(const Problem& p, const Params& q) {
  if (q.variant() == "tuned") return tuned(p);
  const Shape2 t = q.shape("tile");
  return {t.x, t.y, q.integer("depth"), q.integer("split"), q.integer("stages"), q.integer("occupancy")};
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
  lc.shared_bytes = sizeof(float) * std::size_t(ch.stages * (ch.bk * (ch.bm + 4) + ch.bk * ch.bn));
  return lc;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(p, q);
  if (d.present && d.cc_major < 8) return "register_tiled needs cp.async: compute capability 8.0 or newer";
  if (p.m * p.k >= (1L << 31) || p.k * p.n >= (1L << 31) || p.m * p.n >= (1L << 31))
    return "register_tiled indexes with 32 bits: every matrix must have fewer than 2^31 elements";
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  if (ch.stages != 2 && ch.stages != 3) return "stages must be 2 or 3";
  if (ch.occupancy != 1 && ch.occupancy != 2) return "occupancy must be 1 or 2";
#define MMLAB_MATCH(BM, BN, BK) \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK) return fits_int(p);
  MMLAB_REGISTER_TILED(MMLAB_MATCH)
#undef MMLAB_MATCH
  return "register_tiled compiles tile 128x128, 128x64, 64x128, 64x64 with depth 8 or 16; not " +
         std::to_string(ch.bm) + "x" + std::to_string(ch.bn) + " depth " + std::to_string(ch.bk);
}

template <int kBM, int kBN, int kBK, int kStages, int kOccupancy>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc, int per, bool split) {
  auto* kernel = register_tiled_kernel<kBM, kBN, kBK, kStages, kOccupancy>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k), per, split);
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(p, *r.params);
  const LaunchConfig lc = launch(p, *r.params);
  const bool split = lc.grid.z > 1;
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));
  const int per = int(k_per_split(p, ch));
#define MMLAB_LAUNCH(BM, BN, BK)                                                                 \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK) {                                               \
    if (ch.stages == 2 && ch.occupancy == 1) launch_kernel<BM, BN, BK, 2, 1>(r, lc, per, split); \
    if (ch.stages == 2 && ch.occupancy == 2) launch_kernel<BM, BN, BK, 2, 2>(r, lc, per, split); \
    if (ch.stages == 3 && ch.occupancy == 1) launch_kernel<BM, BN, BK, 3, 1>(r, lc, per, split); \
    if (ch.stages == 3 && ch.occupancy == 2) launch_kernel<BM, BN, BK, 3, 2>(r, lc, per, split); \
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
    a.summary = "flagship: warp-tiled 8x8 register blocking, cp.async multi-stage pipeline, split-k";
    a.source = "algorithms/register_tiled.cu";
    a.variants = {{"tuned", "tile, depth and split chosen from the problem size (the tuning table)"},
                  {"manual", "tile, depth and split from the axes"}};
    const std::vector<std::string> manual = {"manual"};
    a.axes = {{"tile",
               AxisKind::shape,
               "block tile BMxBN (warp tile 32x64, thread tile 8x8)",
               "128x128",
               {"128x128", "128x64", "64x128", "64x64"},
               manual},
              {"depth", AxisKind::integer, "k step BK of a shared-memory tile", "8", {"8", "16"}, manual},
              {"split",
               AxisKind::integer,
               "k split over blockIdx.z, partial tiles added atomically",
               "1",
               {"1", "3"},
               manual},
              {"stages",
               AxisKind::integer,
               "shared-memory pipeline stages filled by cp.async",
               "3",
               {"2", "3"},
               manual},
              {"occupancy",
               AxisKind::integer,
               "blocks per SM the register budget is sized for (1 or 2)",
               "2",
               {"1", "2"},
               manual}};
    a.constraints =
        "tile 128x128/128x64/64x128/64x64, depth 8 or 16, split 1 to 64, stages 2 or 3, occupancy 1 or 2; "
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
