// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of papers/gupta-bhalla-... and papers/sgemm-... taken to
// their usual end point (block tile -> warp tile -> thread tile), sized for Hopper, where each
// scheduler issues one FFMA per cycle at most: every non-FFMA instruction costs an FFMA slot, so
// the design is about the share of FFMAs in the instruction stream (docs/flagship-notes.md).
//
// Split: a block of (BM/64) x (BN/WN) warps computes a BM x BN tile of C; each warp a 64 x WN warp
// tile as 8 x 4 lanes; each thread 8 rows (wm + 8i + lane%8) by WN/4 columns (float4 quads at
// wn + 16q + 4(lane/8)). Per k step a thread does 8 x WN/4 FFMAs (128 for WN = 64).
// Shared memory: STAGES buffers of [A tile (BM, BK) as stored in memory | B tile (BK, BN)], all
// filled by cp.async straight from global memory (no register staging, no transposing stores).
// A is read by 16-byte loads along k (one per row per four k steps), B by 16-byte loads along n;
// the float4s of each A row are XOR-swizzled by row so that the eight rows a warp reads at once
// fall on distinct banks. One barrier per k tile.
// Edges: rows past m and columns past n read clamped (valid) addresses and are never stored; the
// last k tile of a slice zero-fills what lies past its end. 16-byte copies where rows are 16-byte
// aligned (k % 4 == 0 and n % 4 == 0), otherwise 4-byte copies: any m, n, k.
// `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first) atomically.
// Variants: `tuned` picks tile, warp tile, depth, stages and split from the problem size (the
// table below, chosen by experiments/flagship-tuning.ini); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include "algorithms/common.cuh"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK, int kWN>
struct Tiling {
  static constexpr int kWM = 64, kTM = 8, kTN = kWN / 4;  // warp tile, thread tile (lanes 8 x 4)
  static constexpr int kThreads = 32 * (kBM / kWM) * (kBN / kWN);
  static constexpr int kChunks = kBK / 4;           // float4s along k in a row of the A tile
  static constexpr int kRowsPerLine = 8 / kChunks;  // A rows that share one 32-bank line
  static constexpr int kStageA = kBM * kBK, kStage = kBM * kBK + kBK * kBN;  // floats
  static_assert(kBM % kWM == 0 && kBN % kWN == 0 && (kWN == 32 || kWN == 64), "whole warp tiles");
  static_assert(kBK == 8 || kBK == 16 || kBK == 32, "BK: 2, 4 or 8 float4s per A row");
  static_assert((kBM * kBK / 4) % kThreads == 0 && (kBK * kBN / 4) % kThreads == 0,
                "every thread copies the same number of float4s");
  // Physical float4 slot of float4 `g` of A row `r`: rows that share a bank slot get distinct slots.
  __device__ static int slot(int r, int g) { return g ^ ((r / kRowsPerLine) % kChunks); }
};

// Asynchronous global -> shared copies (sm_80+). A source size of 0 writes zeros.
__device__ inline void copy4(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}
__device__ inline void copy16(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void wait_for() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// kAligned: k % 4 == 0 and n % 4 == 0, so rows of A, B and C start on 16 bytes.
template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kAligned>
__global__ void __launch_bounds__(Tiling<kBM, kBN, kBK, kWN>::kThreads,
                                  256 / Tiling<kBM, kBN, kBK, kWN>::kThreads)
    register_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                          int m, int n, int k, int k_per_split, bool accumulate) {
  using T = Tiling<kBM, kBN, kBK, kWN>;
  extern __shared__ __align__(16) float smem[];
  const unsigned smem_u32 = unsigned(__cvta_generic_to_shared(smem));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;

  // Copies of one k tile into stage `stage`. Rows past m and columns past n are clamped to the
  // last valid ones; `tail` (the slice's last, partial tile) zero-fills k past k_end.
  const float* a_tile = a + k_begin;
  const float* b_tile = b + long(k_begin) * n;
  auto issue = [&](int t, int stage, bool tail) {
    const int k0 = k_begin + t * kBK;
    const float* at = a_tile + t * kBK;
    const float* bt = b_tile + long(t) * kBK * n;
    const unsigned as = smem_u32 + 4u * unsigned(stage * T::kStage), bs = as + 4u * T::kStageA;
    if constexpr (kAligned) {
#pragma unroll
      for (int f = 0; f < kBM * kBK / 4 / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, r = e / T::kChunks, g = e % T::kChunks;
        const float* src = at + min(row0 + r, m - 1) * k + 4 * g;
        const bool ok = !tail || k0 + 4 * g < k_end;
        copy16(as + 4u * unsigned(r * kBK + 4 * T::slot(r, g)), ok ? src : a, ok);
      }
#pragma unroll
      for (int f = 0; f < kBK * kBN / 4 / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, p = e / (kBN / 4), q = 4 * (e % (kBN / 4));
        const float* src = bt + p * n + min(col0 + q, n - 4);
        const bool ok = !tail || k0 + p < k_end;
        copy16(bs + 4u * unsigned(p * kBN + q), ok ? src : b, ok);
      }
    } else {
#pragma unroll 4
      for (int f = 0; f < kBM * kBK / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, r = e / kBK, p = e % kBK;
        const float* src = at + min(row0 + r, m - 1) * k + p;
        const bool ok = !tail || k0 + p < k_end;
        copy4(as + 4u * unsigned(r * kBK + 4 * T::slot(r, p / 4) + p % 4), ok ? src : a, ok);
      }
#pragma unroll 4
      for (int f = 0; f < kBK * kBN / T::kThreads; ++f) {
        const int e = tid + f * T::kThreads, p = e / kBN, q = e % kBN;
        const float* src = bt + p * n + min(col0 + q, n - 1);
        const bool ok = !tail || k0 + p < k_end;
        copy4(bs + 4u * unsigned(p * kBN + q), ok ? src : b, ok);
      }
    }
  };
  auto is_tail = [&](int t) { return k_begin + (t + 1) * kBK > k_end; };

  // This thread's fragments: A rows wm + lm + 8i (one swizzle for all eight), B columns wn + 4 ln + 16q.
  const int wm = (warp % (kBM / T::kWM)) * T::kWM, wn = (warp / (kBM / T::kWM)) * kWN;
  const int lm = lane % 8, ln = lane / 8;
  const int a_frag = (wm + lm) * kBK, b_frag = T::kStageA + wn + 4 * ln;
  const int swizzle = ((wm + lm) / T::kRowsPerLine) % T::kChunks;

  float acc[T::kTM][T::kTN] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) issue(s, s, is_tail(s));
    commit();  // one group per tile, empty past the end, so the counting below stays uniform
  }
  int read = 0, write = kStages - 1;
  for (int t = 0; t < tiles; ++t) {
    wait_for<kStages - 2>();  // tile t has landed for this thread ...
    __syncthreads();          // ... and for all; everyone is done with the stage written next
    const int next = t + kStages - 1;
    if (next < tiles) issue(next, write, is_tail(next));
    commit();
    write = write + 1 == kStages ? 0 : write + 1;

    const float* as = smem + read * T::kStage + a_frag;
    const float* bs = smem + read * T::kStage + b_frag;
    read = read + 1 == kStages ? 0 : read + 1;
#pragma unroll
    for (int g = 0; g < T::kChunks; ++g) {
      float4 av[T::kTM];  // rows i, k steps 4g .. 4g + 3
#pragma unroll
      for (int i = 0; i < T::kTM; ++i)
        av[i] = *reinterpret_cast<const float4*>(as + i * 8 * kBK + 4 * (g ^ swizzle));
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        float bv[T::kTN];
#pragma unroll
        for (int q = 0; q < T::kTN / 4; ++q) {
          const float4 v = *reinterpret_cast<const float4*>(bs + (4 * g + s) * kBN + 16 * q);
          bv[4 * q] = v.x, bv[4 * q + 1] = v.y, bv[4 * q + 2] = v.z, bv[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < T::kTM; ++i) {
          const float x = s == 0 ? av[i].x : s == 1 ? av[i].y : s == 2 ? av[i].z : av[i].w;
#pragma unroll
          for (int j = 0; j < T::kTN; ++j) acc[i][j] = fmaf(x, bv[j], acc[i][j]);
        }
      }
    }
  }
  wait_for<0>();  // no copy may still target shared memory when the block exits

#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const int row = row0 + wm + lm + 8 * i;
    if (row >= m) continue;
#pragma unroll
    for (int q = 0; q < T::kTN / 4; ++q) {
      const int col = col0 + wn + 4 * ln + 16 * q;
      float* dst = c + long(row) * n + col;
      const float* v = &acc[i][4 * q];
      const bool whole = kAligned && col + 3 < n;
      if (accumulate) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (whole) {
          atomicAdd(reinterpret_cast<float4*>(dst), make_float4(v[0], v[1], v[2], v[3]));
          continue;
        }
#endif
        for (int j = 0; j < 4; ++j)
          if (col + j < n) atomicAdd(dst + j, v[j]);
      } else if (whole) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
        for (int j = 0; j < 4; ++j)
          if (col + j < n) dst[j] = v[j];
      }
    }
  }
}

// Compiled (BM, BN, BK, WN); each with 2, 3 or 4 stages, aligned or not.
#define MMLAB_REGISTER_TILED(X)                                                            \
  X(128, 128, 8, 64) X(128, 128, 16, 64) X(128, 128, 32, 64) X(128, 256, 8, 64) X(128, 256, 16, 64) \
  X(256, 128, 8, 64) X(256, 128, 16, 64) X(128, 128, 16, 32) X(128, 64, 16, 64) X(64, 128, 16, 64)  \
  X(64, 64, 16, 32) X(64, 64, 32, 32)

struct Choice {
  long bm, bn, bk, wn, stages, split;
};

// The `tuned` variant's table: see tuned() below (chosen by experiments/flagship-tuning.ini).
Choice tuned(const Problem& p);

Choice choice(const Problem& p, const Params& q) {
  if (q.variant() == "tuned") return tuned(p);
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.y, q.integer("stages"), q.integer("split")};
}

long k_per_split(const Problem& p, const Choice& ch) {
  const long per = (p.k + ch.split - 1) / ch.split;
  return (per + ch.bk - 1) / ch.bk * ch.bk;  // whole k tiles per split
}

long threads_of(const Choice& ch) { return 32 * (ch.bm / 64) * (ch.bn / ch.wn); }

LaunchConfig launch(const Problem& p, const Params& q) {
  const Choice ch = choice(p, q);
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(ch)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), ceil_div(p.k, k_per_split(p, ch))};
  lc.shared_bytes = sizeof(float) * std::size_t(ch.stages * (ch.bm * ch.bk + ch.bk * ch.bn));
  return lc;
}

// Blocks of 128 x 128 (or the tile given) that one wave of the GPU runs at once: 132 SMs (H100,
// H200) times the blocks an SM holds (two of 128 threads at the kernel's ~200 registers).
constexpr double kSlots = 132 * 2;

Choice tuned(const Problem& p) {
  auto blocks = [&](long bm, long bn) { return double(ceil_div(p.m, bm)) * double(ceil_div(p.n, bn)); };
  Choice ch{128, 128, 16, 64, 3, 1};
  while (blocks(ch.bm, ch.bn) * ch.split < kSlots && p.k / (ch.split * 2) >= 256) ch.split *= 2;
  return ch;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(p, q);
  if (d.present && d.cc_major < 8) return "register_tiled needs cp.async: compute capability 8.0 or newer";
  if (p.m * p.k >= (1L << 31) || p.k * p.n >= (1L << 31) || p.m * p.n >= (1L << 31))
    return "register_tiled indexes with 32 bits: every matrix must have fewer than 2^31 elements";
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  if (ch.stages < 2 || ch.stages > 4) return "stages must be 2, 3 or 4";
#define MMLAB_MATCH(BM, BN, BK, WN) \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK && ch.wn == WN) return fits_int(p);
  MMLAB_REGISTER_TILED(MMLAB_MATCH)
#undef MMLAB_MATCH
  return "register_tiled compiles tile/depth/warp 128x128/8,16,32/64x64, 128x256 and 256x128/8,16/64x64, "
         "128x128/16/64x32, 128x64 and 64x128/16/64x64, 64x64/16,32/64x32; not " +
         std::to_string(ch.bm) + "x" + std::to_string(ch.bn) + "/" + std::to_string(ch.bk) + "/64x" +
         std::to_string(ch.wn);
}

template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kAligned>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc, int per, bool split) {
  auto* kernel = register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, kAligned>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k), per, split);
}

template <int kBM, int kBN, int kBK, int kWN>
void launch_stages(const RunArgs& r, const LaunchConfig& lc, long stages, int per, bool split) {
  const bool aligned = r.problem.k % 4 == 0 && r.problem.n % 4 == 0;
  auto go = [&](auto stage_count) {
    constexpr int kS = decltype(stage_count)::value;
    if (aligned) launch_kernel<kBM, kBN, kBK, kWN, kS, true>(r, lc, per, split);
    else launch_kernel<kBM, kBN, kBK, kWN, kS, false>(r, lc, per, split);
  };
  if (stages == 2) go(std::integral_constant<int, 2>());
  if (stages == 3) go(std::integral_constant<int, 3>());
  if (stages == 4) go(std::integral_constant<int, 4>());
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(p, *r.params);
  const LaunchConfig lc = launch(p, *r.params);
  const bool split = lc.grid.z > 1;
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));
  const int per = int(k_per_split(p, ch));
#define MMLAB_LAUNCH(BM, BN, BK, WN) \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK && ch.wn == WN) launch_stages<BM, BN, BK, WN>(r, lc, ch.stages, per, split);
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
    a.summary = "flagship: warp-tiled 8x16 register blocking, all-cp.async multi-stage pipeline, split-k";
    a.source = "algorithms/register_tiled.cu";
    a.variants = {{"tuned", "tile, warp tile, depth, stages and split chosen from the problem size"},
                  {"manual", "all from the axes"}};
    const std::vector<std::string> manual = {"manual"};
    a.axes = {{"tile",
               AxisKind::shape,
               "block tile BMxBN",
               "128x128",
               {"128x128", "128x256", "256x128", "128x64", "64x128", "64x64"},
               manual},
              {"warp",
               AxisKind::shape,
               "warp tile 64xWN: thread tile 8x16 (64x64) or 8x8 (64x32)",
               "64x64",
               {"64x64", "64x32"},
               manual},
              {"depth", AxisKind::integer, "k step BK of a shared-memory tile", "16", {"8", "16", "32"}, manual},
              {"stages",
               AxisKind::integer,
               "shared-memory pipeline stages filled by cp.async",
               "3",
               {"2", "3", "4"},
               manual},
              {"split",
               AxisKind::integer,
               "k split over blockIdx.z, partial tiles added atomically",
               "1",
               {"1", "3"},
               manual}};
    a.constraints =
        "tile/depth/warp: 128x128 with depth 8, 16, 32 and warp 64x64, or depth 16 and warp 64x32; "
        "128x256, 256x128 with depth 8, 16 (warp 64x64); 128x64, 64x128 with depth 16 (64x64); "
        "64x64 with depth 16, 32 (64x32); stages 2 to 4; split 1 to 64; each matrix under 2^31 "
        "elements; any m, n, k";
    a.supports = supports;
    a.launch_config = launch;
    a.run = run;
    return a;
  }();
  return a;
}
}  // namespace algorithms

}  // namespace mmlab
