// register_tiled: the lab's flagship FP32 kernel: 2D register blocking with warp tiling, a
// multi-stage cp.async shared-memory pipeline, pure FFMA arithmetic (no tensor cores).
//
// Sources: the register-blocking ideas of papers/gupta-bhalla-... and papers/sgemm-... taken to
// their usual end point (block tile -> warp tile -> thread tile), sized for Hopper, where each
// scheduler issues one FFMA per cycle at most: every non-FFMA instruction costs an FFMA slot, so
// the design is about the share of FFMAs in the instruction stream (docs/flagship-notes.md).
//
// Two kernels. Warp tile 32x64 (algorithms/register_tiled_quads.cuh): 8x8 thread tiles in 4x4
// quads with A transposed in shared memory through registers; the fastest from 2048 up (fewest
// register-bank conflicts). Warp tiles 64x64 and 64x32, this file's kernel, described next.
// Split: a block of (BM/64) x (BN/WN) warps computes a BM x BN tile of C; each warp a 64 x WN warp
// tile as 8 x 4 lanes; each thread 8 rows (wm + 8i + lane%8) by WN/4 columns (float4 quads at
// wn + 16q + 4(lane/8)). Per k step a thread does 8 x WN/4 FFMAs (128 for WN = 64). 8x16 thread
// tiles need ~255 registers (two warps per scheduler); 8x8 ones are held to 128 (four warps).
// Shared memory: STAGES buffers of [A tile (BM, BK) as stored in memory | B tile (BK, BN)], all
// filled by cp.async straight from global memory (no register staging, no transposing stores).
// A is read by 16-byte loads along k (one per row per four k steps), B by 16-byte loads along n;
// the float4s of each A row are XOR-swizzled by row so that the eight rows a warp reads at once
// fall on distinct banks. One barrier per k tile.
// Edges: rows past m and columns past n read clamped (valid) addresses and are never stored; the
// last k tile of a slice zero-fills what lies past its end. Every copy is 16 bytes: an operand
// whose rows are not 16-byte aligned (k % 4 != 0 for A, n % 4 != 0 for B) is first copied, padded
// to an aligned pitch, into the workspace. Any m, n, k.
// `split` > 1 divides k over blockIdx.z and adds the partial tiles into C (zeroed first) atomically.
// Variants: `tuned` picks tile, warp tile, depth, stages and split from the problem size (the
// table below, chosen by experiments/flagship-tuning.ini); `manual` takes them from the axes.
// Example: mmlab run --algorithms register_tiled,cublas --size 1024:8192:1024
#include <cmath>

#include "algorithms/common.cuh"

namespace mmlab {
namespace {

template <int kBM, int kBN, int kBK, int kWN>
struct Tiling {
  static constexpr int kWM = 64, kTM = 8, kTN = kWN / 4;  // warp tile, thread tile (lanes 8 x 4)
  static constexpr int kThreads = 32 * (kBM / kWM) * (kBN / kWN);
  // Registers: 8x16 thread tiles get up to 255 (two warps per scheduler), 8x8 ones 128 (four).
  static constexpr int kMinBlocks = (kWN == 64 ? 256 : 512) / kThreads > 0
                                        ? (kWN == 64 ? 256 : 512) / kThreads
                                        : 1;
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

// Asynchronous 16-byte global -> shared copy (sm_80+). A source size of 0 writes zeros.
__device__ inline void copy16(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void wait_for() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace
}  // namespace mmlab

#include "algorithms/register_tiled_quads.cuh"

namespace mmlab {
namespace {

// C (m x n, row pitch ldc) = A (m x k, pitch lda) * B (k x n, pitch ldb). lda, ldb and k are
// multiples of 4 and the pointers 16-byte aligned (run() pads operands that are not), so every
// copy is 16 bytes. Columns of B are clamped to ldb - 4, which is in bounds for B's pitch.
template <int kBM, int kBN, int kBK, int kWN, int kStages, bool kAccumulate>
__global__ void __launch_bounds__(Tiling<kBM, kBN, kBK, kWN>::kThreads,
                                  Tiling<kBM, kBN, kBK, kWN>::kMinBlocks)
    register_tiled_kernel(const float* __restrict__ a, int lda, const float* __restrict__ b, int ldb,
                          float* __restrict__ c, int ldc, int m, int n, int k, int k_per_split,
                          bool accumulate) {
  using T = Tiling<kBM, kBN, kBK, kWN>;
  extern __shared__ __align__(16) float smem[];
  const unsigned smem_u32 = unsigned(__cvta_generic_to_shared(smem));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int k_begin = blockIdx.z * k_per_split, k_end = min(k, k_begin + k_per_split);
  const int tiles = (k_end - k_begin + kBK - 1) / kBK;

  // Copies of one k tile into stage `stage`. Rows past m and columns past the pitch of B are
  // clamped to valid ones; `tail` (the slice's last, partial tile) zero-fills k past k_end.
  const float* a_tile = a + k_begin;
  const float* b_tile = b + long(k_begin) * ldb;
  auto issue = [&](int t, int stage, bool tail) {
    const int k0 = k_begin + t * kBK;
    const float* at = a_tile + t * kBK;
    const float* bt = b_tile + long(t) * kBK * ldb;
    const unsigned as = smem_u32 + 4u * unsigned(stage * T::kStage), bs = as + 4u * T::kStageA;
#pragma unroll
    for (int f = 0; f < kBM * kBK / 4 / T::kThreads; ++f) {
      const int e = tid + f * T::kThreads, r = e / T::kChunks, g = e % T::kChunks;
      const float* src = at + min(row0 + r, m - 1) * lda + 4 * g;
      const bool ok = !tail || k0 + 4 * g < k_end;
      copy16(as + 4u * unsigned(r * kBK + 4 * T::slot(r, g)), ok ? src : a, ok);
    }
#pragma unroll
    for (int f = 0; f < kBK * kBN / 4 / T::kThreads; ++f) {
      const int e = tid + f * T::kThreads, p = e / (kBN / 4), q = 4 * (e % (kBN / 4));
      const float* src = bt + p * ldb + min(col0 + q, ldb - 4);
      const bool ok = !tail || k0 + p < k_end;
      copy16(bs + 4u * unsigned(p * kBN + q), ok ? src : b, ok);
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

  // How the accumulators leave shapes how the compiler allocates them all along: float4 stores
  // keep each quad in four aligned registers, the register banks of the B quad they meet in every
  // FFMA. For 8x8 tiles, scalar stores cut the resulting bank conflicts (dispatch stalls) and win;
  // for 8x16 tiles float4 stores measured faster (docs/flagship-notes.md, step 6). Split-k kernels
  // (kAccumulate) add into C with float4 atomics, four times fewer than scalar ones. The runtime
  // `accumulate` test stays in the scalar path: without it ptxas allocated differently and the
  // conflicts came back (44% -> 64% of FFMAs), a compiler heuristic this code has to live with.
  if constexpr (kWN == 32 && !kAccumulate) {
#pragma unroll
    for (int i = 0; i < T::kTM; ++i) {
      const int row = row0 + wm + lm + 8 * i;
      if (row >= m) continue;
#pragma unroll
      for (int q = 0; q < T::kTN / 4; ++q) {
        const int col = col0 + wn + 4 * ln + 16 * q;
        float* dst = c + long(row) * ldc + col;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j >= n) continue;
          if (accumulate)
            atomicAdd(dst + j, acc[i][4 * q + j]);
          else
            dst[j] = acc[i][4 * q + j];
        }
      }
    }
    return;
  }
  const bool vec_c = (ldc & 3) == 0;
#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const int row = row0 + wm + lm + 8 * i;
    if (row >= m) continue;
#pragma unroll
    for (int q = 0; q < T::kTN / 4; ++q) {
      const int col = col0 + wn + 4 * ln + 16 * q;
      float* dst = c + long(row) * ldc + col;
      const float* v = &acc[i][4 * q];
      const bool whole = vec_c && col + 3 < n;
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

// dst (rows x cols_dst, pitch cols_dst) = src (rows x cols, pitch cols) with zeros past cols and
// past src_rows: the padded, 16-byte-aligned copy of an operand whose rows are not.
__global__ void pad_copy(const float* __restrict__ src, int src_rows, int cols, float* __restrict__ dst,
                         int rows, int cols_dst) {
  const long total = long(rows) * cols_dst;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < total; e += long(gridDim.x) * blockDim.x) {
    const int r = int(e / cols_dst), col = int(e % cols_dst);
    dst[e] = r < src_rows && col < cols ? src[long(r) * cols + col] : 0.f;
  }
}

// Compiled (BM, BN, BK, WM, WN), each with 2, 3 or 4 stages. Warp tile 32x64: the quads kernel.
#define MMLAB_REGISTER_TILED(X)                                                                         \
  X(128, 128, 8, 64, 64)                                                                                \
  X(128, 128, 16, 64, 64)                                                                               \
  X(128, 256, 16, 64, 64)                                                                               \
  X(256, 128, 16, 64, 64)                                                                               \
  X(128, 64, 16, 64, 64) X(64, 128, 16, 64, 64) X(128, 128, 16, 64, 32) X(128, 128, 32, 64, 32)         \
      X(256, 128, 16, 64, 32) X(128, 64, 16, 64, 32) X(64, 64, 16, 64, 32) X(64, 64, 32, 64, 32)        \
          X(128, 128, 8, 32, 64) X(128, 128, 16, 32, 64) X(128, 64, 16, 32, 64) X(128, 128, 8, 32, 128) \
              X(128, 128, 16, 32, 128) X(128, 256, 16, 32, 128)

constexpr const char* kCompiled =
    "128x128/8,16/64x64, 128x256, 256x128, 128x64, 64x128/16/64x64, 128x128/16,32/64x32, "
    "256x128, 128x64/16/64x32, 64x64/16,32/64x32, 128x128/8,16/32x64, 128x64/16/32x64, "
    "128x128/8,16/32x128, 128x256/16/32x128";

struct Choice {
  long bm, bn, bk, wm, wn, stages, split;
};

Choice tuned(const Problem& p);  // the `tuned` variant's table, below

Choice choice(const Problem& p, const Params& q) {
  if (q.variant() == "tuned") return tuned(p);
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages"), q.integer("split")};
}

long round4(long x) { return (x + 3) / 4 * 4; }

// Operands whose rows are not 16-byte aligned (k % 4 for A, n % 4 for B) are first copied into the
// workspace with their pitch rounded up to a multiple of 4 and zeros in the pad. The kernel then
// reads A's last chunk of four whole (the pad is zero) and never reads B's rows past k.
struct Padding {
  bool a, b;
  long lda, ldb;
  std::size_t a_floats, b_floats;
};
Padding padding(const Problem& p) {
  Padding d;
  d.a = p.k % 4 != 0, d.b = p.n % 4 != 0;
  d.lda = round4(p.k), d.ldb = round4(p.n);
  d.a_floats = d.a ? std::size_t(p.m * d.lda) : 0;
  d.b_floats = d.b ? std::size_t(p.k * d.ldb) : 0;
  return d;
}

long k_per_split(long k, const Choice& ch) {
  const long per = (k + ch.split - 1) / ch.split;
  return (per + ch.bk - 1) / ch.bk * ch.bk;  // whole k tiles per split
}

long threads_of(const Choice& ch) { return 32 * (ch.bm / ch.wm) * (ch.bn / ch.wn); }

LaunchConfig launch(const Problem& p, const Params& q) {
  const Choice ch = choice(p, q);
  const long k = p.k;
  LaunchConfig lc;
  lc.block = {unsigned(threads_of(ch)), 1, 1};
  lc.grid = {ceil_div(p.n, ch.bn), ceil_div(p.m, ch.bm), ceil_div(k, k_per_split(k, ch))};
  const long pitch_a = ch.wm == 32 ? ch.bm + 4 : ch.bm;  // the quads kernel pads A's transposed rows
  lc.shared_bytes = sizeof(float) * std::size_t(ch.stages * (pitch_a * ch.bk + ch.bk * ch.bn));
  return lc;
}

std::size_t workspace(const Problem& p, const Params&) {
  const Padding d = padding(p);
  return sizeof(float) * (d.a_floats + d.b_floats);
}

// The `tuned` table, read off experiments/flagship-tuning.ini on the H100 (data/flagship/tuning.csv,
// docs/flagship-notes.md). Where 128x128 tiles waste little to padding: the quads kernel with 8x16
// threads (warp 32x128) once 128x128 tiles make four well-filled waves (4095 and up); with 8x8
// threads (warp 32x64) from about one wave (240 of the 264 slots of two blocks per SM; 2048, 3072,
// 4096x1024x8192), k split in two when that fills the last wave much better (3072); with 128x64 tiles
// and k split four ways below that (1536, 1000x3000x2000); 128x128 tiles of 8x16 threads split
// four ways while that still gives every SM a block (1024); 128x64 tiles of 8x8 threads split four
// ways (512). Where padding tiles would waste more than 5% of the work (1025, 2049): 128x64 quads
// tiles, k split while the slices stay 512 deep.
constexpr double kSMs = 132, kSlots = 2 * kSMs;  // H100 and H200; two 256-thread blocks per SM

Choice tuned(const Problem& p) {
  auto fill = [](double blocks) { return blocks / (std::ceil(blocks / kSlots) * kSlots); };
  const double t128 = double(ceil_div(p.m, 128)) * double(ceil_div(p.n, 128));
  const double coverage = double(p.m) * double(p.n) / (t128 * 128 * 128);
  auto split_while = [&](long min_depth) {
    long split = 4;
    while (split > 1 && p.k / split < min_depth) split /= 2;
    return split;
  };
  if (coverage >= 0.95 || t128 >= 1000) {
    if (t128 >= 1000 && fill(t128) >= 0.85) return {128, 128, 16, 32, 128, 2, 1};
    if (t128 >= 240) return {128, 128, 16, 32, 64, 2, fill(t128) < 0.85 && fill(2 * t128) >= 0.85 ? 2 : 1};
    if (t128 >= 128) return {128, 64, 16, 32, 64, 4, split_while(128)};
    if (t128 * 4 >= kSMs && p.k >= 512) return {128, 128, 16, 64, 64, 3, 4};
    return {128, 64, 16, 64, 32, 3, split_while(128)};
  }
  return {128, 64, 16, 32, 64, 4, split_while(512)};
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Choice ch = choice(p, q);
  if (d.present && d.cc_major < 8) return "register_tiled needs cp.async: compute capability 8.0 or newer";
  const long k = round4(p.k), n = round4(p.n);
  if (p.m * k >= (1L << 31) || k * n >= (1L << 31) || p.m * p.n >= (1L << 31))
    return "register_tiled indexes with 32 bits: every matrix must have fewer than 2^31 elements";
  if (ch.split < 1 || ch.split > 64) return "split must be 1 to 64";
  if (ch.stages < 2 || ch.stages > 4) return "stages must be 2, 3 or 4";
#define MMLAB_MATCH(BM, BN, BK, WM, WN) \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK && ch.wm == WM && ch.wn == WN) return fits_int(p);
  MMLAB_REGISTER_TILED(MMLAB_MATCH)
#undef MMLAB_MATCH
  return "register_tiled compiles tile/depth/warp " + std::string(kCompiled) + "; not " +
         std::to_string(ch.bm) + "x" + std::to_string(ch.bn) + "/" + std::to_string(ch.bk) + "/" +
         std::to_string(ch.wm) + "x" + std::to_string(ch.wn);
}

struct Operands {
  const float *a, *b;
  int lda, ldb, k;
};

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
void launch_kernel(const RunArgs& r, const Operands& o, const LaunchConfig& lc, int per, bool split) {
  using Kernel = void (*)(const float*, int, const float*, int, float*, int, int, int, int, int, bool);
  Kernel kernel = nullptr;
  if constexpr (kWM == 32)
    kernel = register_tiled_quads_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  else if constexpr (kWN == 32)  // only 8x8 tiles have a separate split-k epilogue
    kernel = split ? register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, true>
                   : register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  else
    kernel = register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m), int(r.problem.n), o.k, per, split);
}

template <int kBM, int kBN, int kBK, int kWM, int kWN>
void launch_stages(const RunArgs& r, const Operands& o, const LaunchConfig& lc, long stages, int per,
                   bool split) {
  if (stages == 2) launch_kernel<kBM, kBN, kBK, kWM, kWN, 2>(r, o, lc, per, split);
  if (stages == 3) launch_kernel<kBM, kBN, kBK, kWM, kWN, 3>(r, o, lc, per, split);
  if (stages == 4) launch_kernel<kBM, kBN, kBK, kWM, kWN, 4>(r, o, lc, per, split);
}

void pad(const float* src, long rows, long cols, float* dst, long rows_dst, long cols_dst, cudaStream_t s) {
  const long total = rows_dst * cols_dst;
  const unsigned blocks = unsigned(std::min<long>((total + 255) / 256, 132 * 16));
  pad_copy<<<blocks, 256, 0, s>>>(src, int(rows), int(cols), dst, int(rows_dst), int(cols_dst));
}

void run(const RunArgs& r) {
  const Problem& p = r.problem;
  const Choice ch = choice(p, *r.params);
  const LaunchConfig lc = launch(p, *r.params);
  const Padding d = padding(p);
  Operands o{r.a, r.b, int(p.k), int(p.n), int(p.k)};
  float* work = static_cast<float*>(r.workspace);
  if (d.a) {
    pad(r.a, p.m, p.k, work, p.m, d.lda, r.stream);
    o.a = work, o.lda = int(d.lda);
  }
  if (d.b) {
    pad(r.b, p.k, p.n, work + d.a_floats, p.k, d.ldb, r.stream);
    o.b = work + d.a_floats, o.ldb = int(d.ldb);
  }
  const bool split = lc.grid.z > 1;
  if (split) MMLAB_CHECK(cudaMemsetAsync(r.c, 0, sizeof(float) * p.m * p.n, r.stream));
  const int per = int(k_per_split(p.k, ch));
#define MMLAB_LAUNCH(BM, BN, BK, WM, WN)                                       \
  if (ch.bm == BM && ch.bn == BN && ch.bk == BK && ch.wm == WM && ch.wn == WN) \
    launch_stages<BM, BN, BK, WM, WN>(r, o, lc, ch.stages, per, split);
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
    a.summary = "flagship: warp-tiled 8x8 and 8x16 register blocking, cp.async multi-stage pipeline, split-k";
    a.source = "algorithms/register_tiled.cu";
    a.variants = {{"tuned", "tile, warp tile, depth, stages and split chosen from the problem size"},
                  {"manual", "all from the axes"}};
    const std::vector<std::string> manual = {"manual"};
    a.axes = {
        {"tile",
         AxisKind::shape,
         "block tile BMxBN",
         "128x128",
         {"128x128", "128x256", "256x128", "128x64", "64x128", "64x64"},
         manual},
        {"warp",
         AxisKind::shape,
         "warp tile: 64x64 (8x16 per thread) or 64x32 (8x8), A as stored; 32x64 or 32x128 (8x8 or 8x16 in "
         "4x4 quads), A transposed",
         "64x64",
         {"64x64", "64x32", "32x64", "32x128"},
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
    a.constraints = std::string("tile/depth/warp ") + kCompiled +
                    "; stages 2 to 4; split 1 to 64; each (padded) matrix under 2^31 elements; any m, n, k "
                    "(operands with rows not 16-byte aligned are copied padded into the workspace)";
    a.supports = supports;
    a.launch_config = launch;
    a.workspace_bytes = workspace;
    a.run = run;
    return a;
  }();
  return a;
}
}  // namespace algorithms

}  // namespace mmlab
