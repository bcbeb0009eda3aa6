// small's kernel (algorithms/small.cu says how it splits the work): the stage layout, each thread's
// copies, the two products of a stage (FP32 FFMA, or the FP32-accurate three TF32 mma.sync) and the
// kernel with its in-cluster k reduction through DSMEM. Included by small.cu only.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "algorithms/kernels/tf32_split.cuh"
#include "algorithms/ptx/cp_async.cuh"

namespace mmlab {
namespace {
namespace cg = cooperative_groups;

constexpr int kDepth = 16;  // k per stage
constexpr int kPitchA = kDepth + 4;  // A's rows in shared memory: 80 bytes, 16-byte aligned

// The product of the staged tiles: FP32 FFMA, or FP32-accurate three TF32 products (tf32x3).
enum class Product { ffma, tf32x3 };

template <int BM, int BN, int TM, Product P = Product::ffma>
struct Tile {
  static constexpr int kThreads = BM * BN / (4 * TM);  // TM x 4 outputs each
  // B's rows in shared memory: as copied for FFMA's 16-byte reads along n; 8 floats more for the
  // mma fragments, whose 4 k rows x 8 columns then fall in 32 different banks.
  static constexpr int kPitchB = P == Product::ffma ? BN : BN + 8;
  static constexpr int kStageFloats = BM * kPitchA + kDepth * kPitchB;
  static constexpr int kStages = BM >= 128 ? 3 : 4;  // within the 48 KiB of static shared memory
  static constexpr int kSharedFloats = kStages * kStageFloats;
  static_assert(kSharedFloats >= BM * BN, "the partial tile reuses the pipeline's shared memory");
};

// A thread's share of each stage's copies, fixed for the whole k loop: its copies of A are rows
// r0 + i kARowStep at the same k offset qa, its copies of B k offsets qb + i kBRowStep of the same
// column cb (V = 4 floats per copy, 16 bytes, or 1 float). The row pointers and the bounds of m and n
// are worked out once; a stage adds its k and checks k_end.
template <int BM, int BN, int TM, Product P, bool kVec>
struct Loader {
  using T = Tile<BM, BN, TM, P>;
  static constexpr int V = kVec ? 4 : 1;
  static constexpr int kAPerRow = kDepth / V, kBPerRow = BN / V;  // copies per row of A, of B
  static constexpr int kACopies = BM * kAPerRow / T::kThreads, kBCopies = kDepth * kBPerRow / T::kThreads;
  static constexpr int kARowStep = T::kThreads / kAPerRow, kBRowStep = T::kThreads / kBPerRow;
  static_assert(kACopies >= 1 && kBCopies >= 1 && T::kThreads % kAPerRow == 0 && T::kThreads % kBPerRow == 0,
                "each thread copies whole strided rows");
  const float* a_row;  // A(row0 + r0, k_begin + qa)
  const float* b_col;  // B(k_begin + qb, col0 + cb)
  unsigned a_dst, b_dst;  // shared-window offsets within a stage
  unsigned a_rows;        // bit i: row r0 + i kARowStep is inside A
  bool b_inside;          // column col0 + cb is inside B
  int qa, qb;             // k offsets within a stage

  __device__ Loader(const float* a, const float* b, int m, int n, int k, int row0, int col0, int k_begin) {
    const int t = threadIdx.x, r0 = t / kAPerRow, cb = (t % kBPerRow) * V;
    qa = (t % kAPerRow) * V, qb = t / kBPerRow;
    a_row = a + long(row0 + r0) * k + k_begin + qa;
    b_col = b + long(k_begin + qb) * n + col0 + cb;
    a_dst = 4u * (r0 * kPitchA + qa), b_dst = 4u * (BM * kPitchA + qb * T::kPitchB + cb);
    a_rows = 0;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) a_rows |= unsigned(row0 + r0 + i * kARowStep < m) << i;
    b_inside = col0 + cb < n;
  }

  // Stage `s` of this block's k range (k0 = k_begin + s kDepth, ks = s kDepth) into `stage`.
  __device__ __forceinline__ void load(unsigned stage, int ks, int k_left, int k, int n) const {
    const bool a_k = qa < k_left;  // k_left = k_end - k0 (a 16-byte copy is all inside or all outside)
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const bool in = a_k && (a_rows >> i & 1u);
      const float* src = a_row + long(i * kARowStep) * k + ks;  // not read where !in (a zero-size copy)
      const unsigned dst = stage + a_dst + 4u * (i * kARowStep * kPitchA);
      if constexpr (kVec) copy16(dst, src, in);
      else copy4(dst, src, in);
    }
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      const bool in = b_inside && qb + i * kBRowStep < k_left;
      const float* src = b_col + long(ks + i * kBRowStep) * n;
      const unsigned dst = stage + b_dst + 4u * (i * kBRowStep * T::kPitchB);
      if constexpr (kVec) copy16(dst, src, in);
      else copy4(dst, src, in);
    }
  }
};

// Stores W consecutive outputs of row `row` from column `col` (those inside C); `vec`: one W-wide
// store where the run is whole (n a multiple of 4 and C 16-byte aligned).
template <int W>
__device__ __forceinline__ void store(float* __restrict__ c, int m, int n, int row, int col, const float (&v)[W],
                                      bool vec) {
  if (row >= m) return;
  float* out = c + long(row) * n + col;
  if (vec && col + W - 1 < n) {
    if constexpr (W == 4) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<float2*>(out) = make_float2(v[0], v[1]);
  } else {
    for (int u = 0; u < W && col + u < n; ++u) out[u] = v[u];
  }
}

// The FFMA product: TM x 4 outputs per thread, rows ty + i kRowStep (interleaved, so a warp's reads
// of A fall in different banks), columns 4 tx .. 4 tx + 3.
template <int BM, int BN, int TM>
struct Ffma {
  static constexpr int kCols = BN / 4;      // threads along n
  static constexpr int kRowStep = BM / TM;  // a thread's rows are ty + i kRowStep
  static constexpr int W = 4;               // consecutive outputs per run
  float acc[TM][4] = {};
  int tx = int(threadIdx.x) % kCols, ty = int(threadIdx.x) / kCols;

  __device__ __forceinline__ void stage(const float* as, const float* bs) {
#pragma unroll
    for (int q = 0; q < kDepth; q += 4) {
      float4 av[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        av[i] = *reinterpret_cast<const float4*>(as + (ty + i * kRowStep) * kPitchA + q);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float4 bv = *reinterpret_cast<const float4*>(bs + (q + j) * BN + tx * 4);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float x = j == 0 ? av[i].x : j == 1 ? av[i].y : j == 2 ? av[i].z : av[i].w;
          acc[i][0] = fmaf(x, bv.x, acc[i][0]);
          acc[i][1] = fmaf(x, bv.y, acc[i][1]);
          acc[i][2] = fmaf(x, bv.z, acc[i][2]);
          acc[i][3] = fmaf(x, bv.w, acc[i][3]);
        }
      }
    }
  }
  // f(row, col, outputs): each run of W consecutive outputs of the thread, tile coordinates.
  template <typename F>
  __device__ __forceinline__ void each(F f) const {
#pragma unroll
    for (int i = 0; i < TM; ++i) f(ty + i * kRowStep, tx * 4, acc[i]);
  }
};

// The FP32-accurate product (tf32x3.cu's split3 recipe, fused into the k loop): each warp a
// 4TM x 32 tile of m16n8k8 TF32 mma.sync fragments; every value read from the stage is split into
// big + small (kernels/tf32_split.cuh) and small*big + big*small + big*big accumulate the stage's
// part, which is added into the FP32 sums by an ordinary add (the error grows with the stages, not
// with k inside one mma chain).
template <int BM, int BN, int TM>
struct Tf32x3 {
  using T = Tile<BM, BN, TM, Product::tf32x3>;
  static constexpr int W = 2;
  static constexpr int kWM = 4 * TM, kMi = TM / 4, kNj = 4;  // warp tile kWM x 32: kMi x kNj fragments
  static_assert(TM % 4 == 0 && BM % kWM == 0 && BN % 32 == 0, "whole warp tiles");
  float acc[kMi][kNj][4] = {};
  int wm, wn, g, t;  // the warp tile's origin; the lane's group and thread in group

  __device__ Tf32x3() {
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    wm = (warp % (BM / kWM)) * kWM, wn = (warp / (BM / kWM)) * 32, g = lane / 4, t = lane % 4;
  }
  __device__ __forceinline__ void stage(const float* as, const float* bs) {
    float part[kMi][kNj][4] = {};
#pragma unroll
    for (int kk = 0; kk < kDepth; kk += 8) {
      unsigned a_big[kMi][4], a_small[kMi][4], b_big[kNj][2], b_small[kNj][2];
#pragma unroll
      for (int i = 0; i < kMi; ++i)
        split_a_fragment(as + (wm + 16 * i + g) * kPitchA + kk + t, kPitchA, a_big[i], a_small[i]);
#pragma unroll
      for (int j = 0; j < kNj; ++j)
        split_b_fragment(bs + (kk + t) * T::kPitchB + wn + 8 * j + g, T::kPitchB, b_big[j], b_small[j]);
#pragma unroll
      for (int i = 0; i < kMi; ++i)
#pragma unroll
        for (int j = 0; j < kNj; ++j) {
          mma(part[i][j], a_small[i], b_big[j]);
          mma(part[i][j], a_big[i], b_small[j]);
          mma(part[i][j], a_big[i], b_big[j]);
        }
    }
#pragma unroll
    for (int i = 0; i < kMi; ++i)
#pragma unroll
      for (int j = 0; j < kNj; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
  }
  // A fragment's elements e = 0, 1 (row g) and 2, 3 (row g + 8) are column pairs 2t, 2t + 1.
  template <typename F>
  __device__ __forceinline__ void each(F f) const {
#pragma unroll
    for (int i = 0; i < kMi; ++i)
#pragma unroll
      for (int j = 0; j < kNj; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
          f(wm + 16 * i + g + 8 * h, wn + 8 * j + 2 * t, v);
        }
  }
};

template <int BM, int BN, int TM, Product P>
using ProductOf = std::conditional_t<P == Product::ffma, Ffma<BM, BN, TM>, Tf32x3<BM, BN, TM>>;

// Block (x, y): output tile (y, x / split), k range x % split (its rank in the cluster of `split`
// blocks along x), `per` k (whole stages) each.
template <int BM, int BN, int TM, Product P, bool kVec>
__global__ void __launch_bounds__(Tile<BM, BN, TM, P>::kThreads)
    small_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                 int n, int k, int split, int per) {
  using T = Tile<BM, BN, TM, P>;
  __shared__ __align__(16) float smem[T::kSharedFloats];
  const int rank = blockIdx.x % split, part = blockIdx.z * split + rank;  // rank in the cluster; k part
  const int row0 = blockIdx.y * BM, col0 = (blockIdx.x / split) * BN;
  c += long(blockIdx.z) * m * n;  // with groups: this group's slice of the workspace
  const int k_begin = part * per, k_end = min(k, k_begin + per);
  const int steps = max(0, (k_end - k_begin + kDepth - 1) / kDepth);
  ProductOf<BM, BN, TM, P> product;
  const Loader<BM, BN, TM, P, kVec> loader(a, b, m, n, k, row0, col0, k_begin);
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));

#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < steps) loader.load(base + 4u * s * T::kStageFloats, s * kDepth, k_end - k_begin - s * kDepth, k, n);
    commit();
  }
  for (int t = 0; t < steps; ++t) {
    wait_for<T::kStages - 2>();
    __syncthreads();  // stage t is in; every thread is done with the stage that t + T::kStages - 1 reuses
    const int next = t + T::kStages - 1;
    if (next < steps)
      loader.load(base + 4u * (next % T::kStages) * T::kStageFloats, next * kDepth, k_end - k_begin - next * kDepth, k, n);
    commit();
    const float* as = smem + (t % T::kStages) * T::kStageFloats;
    product.stage(as, as + BM * kPitchA);
  }
  constexpr int W = decltype(product)::W;
  const bool vec = kVec && (reinterpret_cast<std::uintptr_t>(c) % 16 == 0);
  if (split == 1) {
    product.each([&](int r, int q, const float(&v)[W]) { store<W>(c, m, n, row0 + r, col0 + q, v, vec); });
    return;
  }
  wait_for<0>();
  __syncthreads();  // the stages become this block's partial tile (BM x BN)
  product.each([&](int r, int q, const float(&v)[W]) {
    if constexpr (W == 4) *reinterpret_cast<float4*>(smem + r * BN + q) = make_float4(v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<float2*>(smem + r * BN + q) = make_float2(v[0], v[1]);
  });
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every partial of the cluster is complete
  const int first = rank * BM / split, last = (rank + 1) * BM / split;  // this block's rows of the sum
  for (int e = threadIdx.x; e < (last - first) * (BN / 4); e += T::kThreads) {
    const int r = first + e / (BN / 4), q = (e % (BN / 4)) * 4;
    float4 sum = *reinterpret_cast<const float4*>(cluster.map_shared_rank(smem, 0u) + r * BN + q);
    for (int s = 1; s < split; ++s) {
      const float4 v = *reinterpret_cast<const float4*>(cluster.map_shared_rank(smem, unsigned(s)) + r * BN + q);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    const float out[4] = {sum.x, sum.y, sum.z, sum.w};
    store<4>(c, m, n, row0 + r, col0 + q, out, vec);
  }
  __syncwarp();    // the loop's lanes ran different counts: the cluster barrier is warp-aligned
  cluster.sync();  // no block leaves while a peer still reads its partial
}

}  // namespace
}  // namespace mmlab
