// outer_product: A's tile in shared memory, B and C in registers; each thread adds outer
// products, so every shared-memory load feeds several multiply-adds ("CompOpt").
//
// Source: "SGEMM Implementation and Optimization on CUDA" (an SJTU ACA Lab project README) ("CompOpt Method",
// "Prefetch Method"): an SM instruction takes at most one operand from shared memory, so the inner product
// (two shared operands) is replaced by an outer product of A's column (shared) and B's row
// (registers).
// Split: a block of TILE x VECTOR threads computes a TILE x (TILE VECTOR) tile of C; thread t owns
// column t of it and keeps TILE accumulators (a column of C) in registers. Per k step of TILE,
// the block stages A's TILE x TILE tile in shared memory (each thread loads TILE / VECTOR values);
// then for each k every thread loads one value of B straight from global memory (coalesced along
// the row) and multiplies it with the TILE values of A's column, read 4 at a time (all threads
// read the same address: a broadcast).
// The tile is stored transposed (k, rows), with its 4-float groups XOR-swizzled by k so the
// transposing stores spread over the banks while the reads stay 16-byte aligned.
// Variants: default stages each A tile between two barriers; prefetch loads the next A tile into
// registers while the current one is used, and stores it into a second buffer (double buffering).
// Constraints: the compiled (tile, vector) pairs (`mmlab list outer_product`: tile 16 or 32 with
// vector 2, 4 or 8); any m, n, k.
// Example: mmlab run --algorithms outer_product --outer_product.variant all --tile 16,32 --vector 4,8 --size
// 4096
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

template <int kT, int kV, bool kPrefetch>
__global__ void __launch_bounds__(kT* kV)
    outer_product_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                         int m, int n, int k) {
  constexpr int kThreads = kT * kV, kLoads = kT * kT / kThreads, kGroups = kT / 4;
  static_assert(kT % 4 == 0 && (kT * kT) % kThreads == 0, "whole float4 groups; every thread loads alike");
  __shared__ __align__(16) float as[kPrefetch ? 2 : 1][kT][kT];  // (buffer, k, rows swizzled)
  const int tid = threadIdx.x;
  const long row0 = long(blockIdx.y) * kT, col = long(blockIdx.x) * kThreads + tid;
  // Element l of this thread's share of an A tile: row e / T, k offset e % T (coalesced along k).
  auto load = [&](long p0, float(&reg)[kLoads]) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int e = tid + l * kThreads, r = e / kT, x = e % kT;
      reg[l] = row0 + r < m && p0 + x < k ? a[(row0 + r) * k + p0 + x] : 0.f;
    }
  };
  auto store = [&](int buf, const float(&reg)[kLoads]) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int e = tid + l * kThreads, r = e / kT, x = e % kT;
      as[buf][x][(((r >> 2) ^ (x % kGroups)) << 2) | (r & 3)] = reg[l];
    }
  };
  float acc[kT] = {};
  float next[kLoads];
  load(0, next);
  store(0, next);
  __syncthreads();
  int buf = 0;
  for (long p0 = 0; p0 < k; p0 += kT) {
    const bool more = p0 + kT < k;
    if (kPrefetch && more) load(p0 + kT, next);  // in flight while this tile is used
#pragma unroll
    for (int x = 0; x < kT; ++x) {
      const float bv = p0 + x < k && col < n ? b[(p0 + x) * n + col] : 0.f;
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        const float4 av = *reinterpret_cast<const float4*>(&as[buf][x][(g ^ (x % kGroups)) << 2]);
        acc[4 * g + 0] = fmaf(av.x, bv, acc[4 * g + 0]);
        acc[4 * g + 1] = fmaf(av.y, bv, acc[4 * g + 1]);
        acc[4 * g + 2] = fmaf(av.z, bv, acc[4 * g + 2]);
        acc[4 * g + 3] = fmaf(av.w, bv, acc[4 * g + 3]);
      }
    }
    if (kPrefetch) {
      // Nobody reads buf ^ 1 now: the last barrier came after its last use.
      if (more) store(buf ^ 1, next);
      __syncthreads();
      buf ^= 1;
    } else {
      __syncthreads();  // everyone is done with the tile
      if (more) {
        load(p0 + kT, next);
        store(0, next);
      }
      __syncthreads();
    }
  }
  if (col < n)
#pragma unroll
    for (int i = 0; i < kT; ++i)
      if (row0 + i < m) c[(row0 + i) * n + col] = acc[i];
}

enum class Kind { compopt, prefetch };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"default", "CompOpt: stage A's tile, then outer products"},
    {"prefetch", "the next A tile loaded while the current one is used (double buffer)"}};

LaunchConfig launch(const Problem& p, const Params& q, const DeviceInfo&) {
  const long t = q.integer("tile"), v = q.integer("vector");
  LaunchConfig lc;
  lc.block = {unsigned(t * v), 1, 1};
  lc.grid = {ceil_div(p.n, t * v), ceil_div(p.m, t), 1};
  lc.shared_bytes =
      sizeof(float) * std::size_t(t * t * (variant_kind<Kind>(kVariants, q) == Kind::prefetch ? 2 : 1));
  return lc;
}

template <int kT, int kV, bool kPrefetch>
void launch_kernel(const RunArgs& r, const LaunchConfig& lc) {
  outer_product_kernel<kT, kV, kPrefetch><<<dim(lc.grid), dim(lc.block), 0, r.stream>>>(
      r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k));
}

// The compiled (TILE, VECTOR) pairs, each without and with the prefetch.
#define MMLAB_ENTRY(T, V)                                                    \
  {{"default", {{"tile", #T}, {"vector", #V}}}, launch_kernel<T, V, false>}, \
      {{"prefetch", {{"tile", #T}, {"vector", #V}}}, launch_kernel<T, V, true>},
const KernelTable<Launcher> kKernels = {MMLAB_ENTRY(16, 2) MMLAB_ENTRY(16, 4) MMLAB_ENTRY(16, 8)
                                            MMLAB_ENTRY(32, 2) MMLAB_ENTRY(32, 4) MMLAB_ENTRY(32, 8)};
#undef MMLAB_ENTRY

void run(const RunArgs& r) {
  kKernels.at (*r.params)(r, launch(r.problem, *r.params, *r.device));
  MMLAB_CHECK_LAUNCH();
}

}  // namespace

MMLAB_ALGORITHM(outer_product) {
  a.summary =
      "A tile in shared memory, B and C in registers, outer products (SGEMM README, CompOpt/Prefetch)";
  a.variants = kVariants;
  a.axes = {
      {"tile", AxisKind::integer, "TILE: rows of the C tile and k step; TILE accumulators per thread", "32"},
      {"vector", AxisKind::integer, "VECTOR: TILE x VECTOR threads, each owning one column of the C tile",
       "8"}};
  a.constraints = "any m, n, k";
  a.supports = supports_int_indexing;
  use_kernels(a, kKernels, launch, run);
}

}  // namespace mmlab
