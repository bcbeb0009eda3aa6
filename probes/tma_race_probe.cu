// tma_race_probe: tma_tiled's `specialized` kernel (a producer warpgroup issuing TMA loads, consumer
// warps releasing stages by mbarrier, setmaxnreg between them) rebuilt with one knob at a time, so the
// wrong entries it returned on large problems (issue #46: 4541x15918x149, 8285x11502x2617 with
// tile=128x128;warp=32x128) can be pinned on one construct. Knobs:
//   as_is        the kernel as tma_tiled ships it (until the fix): 2 blocks per SM (launch bounds),
//                producers drop to 40 registers, consumers rise to 208, lane 0 of each consumer warp
//                releases a stage after __syncwarp
//   one_block    the same code, launched with 116 KiB of shared memory: one block per SM
//   no_setmaxnreg  no register hand-over (the consumers stay at the launch's 128)
//   all_arrive   every consumer thread arrives on the stage's `freed` barrier (count 128)
//   proxy_fence  the producer fences the async proxy after each wait on `freed`
//   consumer_wg_barrier  the consumers meet at a named barrier (bar.sync 1, 128) before one thread
//                releases the stage
// Each knob x depth {16, 32} x stages {2, 4} runs `--repeats` times on each shape (C poisoned with NaN
// first) against a float64 product on the GPU; a line per case: entries off by more than 1e-4 of
// max |C|, output tiles holding them (and how many of those lie on the last row or column of tiles).
// Run: build/bin/mmlab-tma-race-probe [--repeats N] [MxNxK ...]  (sm_90a; exit 1 if any case failed)
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/tma_maps.cuh"
#include "algorithms/ptx/tma.cuh"

namespace mmlab {
namespace {

enum class Knob { as_is, one_block, no_setmaxnreg, all_arrive, proxy_fence, consumer_wg_barrier };
const char* const kKnobNames[] = {"as_is",       "one_block",  "no_setmaxnreg",
                                  "all_arrive",  "proxy_fence", "consumer_wg_barrier"};

constexpr int kBM = 128, kBN = 128, kQN = 4;
template <int kBK>
using Tile = Quads<kBM, kBN, kBK, kQN, 0>;

template <int kBK, int kStages, Knob kKnob>
__global__ void __launch_bounds__(256, 2)
    probe_kernel(const __grid_constant__ CUtensorMap at_map, const __grid_constant__ CUtensorMap b_map,
                 float* __restrict__ c, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Tile<kBK>;
  constexpr int kConsumers = S::kThreads;  // 128
  extern __shared__ __align__(128) float smem[];
  std::uint64_t* landed = reinterpret_cast<std::uint64_t*>(smem + kStages * S::kStage);
  std::uint64_t* freed = landed + kStages;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int tiles = (k + kBK - 1) / kBK;
  auto stage = [&](int t) { return smem + (t % kStages) * S::kStage; };
  const int issuer = kConsumers;
  if (threadIdx.x == issuer) {
    for (int s = 0; s < kStages; ++s)
      mbarrier_init(&landed[s], 1),
          mbarrier_init(&freed[s], kKnob == Knob::all_arrive ? kConsumers : kConsumers / 32);
    mbarrier_init_fence();
  }
  __syncthreads();
  typename S::Acc acc = {};
  if (threadIdx.x >= kConsumers) {
    if constexpr (kKnob != Knob::no_setmaxnreg) release_registers<40>();
    if (threadIdx.x == issuer)
      for (int t = 0; t < tiles; ++t) {
        if (t >= kStages) {
          mbarrier_wait_cta(&freed[t % kStages], unsigned(t / kStages - 1) & 1u);
          if constexpr (kKnob == Knob::proxy_fence) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        }
        std::uint64_t* bar = &landed[t % kStages];
        mbarrier_expect_bytes(bar, sizeof(float) * S::kStage);
        tma_load_2d(stage(t), at_map, row0, t * kBK, bar);
        tma_load_2d(stage(t) + S::kTileA, b_map, col0, t * kBK, bar);
      }
    return;
  }
  if constexpr (kKnob != Knob::no_setmaxnreg) claim_registers<208>();
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait_cta(&landed[t % kStages], unsigned(t / kStages) & 1u);
    S::product(stage(t), stage(t) + S::kTileA, acc);
    if constexpr (kKnob == Knob::all_arrive) {
      mbarrier_arrive_cta(&freed[t % kStages]);
    } else if constexpr (kKnob == Knob::consumer_wg_barrier) {
      asm volatile("bar.sync 1, 128;\n" ::: "memory");
      if (threadIdx.x % 32 == 0) mbarrier_arrive_cta(&freed[t % kStages]);
    } else {
      __syncwarp();
      if (threadIdx.x % 32 == 0) mbarrier_arrive_cta(&freed[t % kStages]);
    }
  }
  S::store(acc, c, n, row0, col0, m, n);
#endif
}

__global__ void fill(float* x, long count, unsigned long long seed) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x) {
    unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (unsigned long long)(i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = float(double(z >> 11) * (1.0 / 9007199254740992.0) * 2 - 1);
  }
}
__global__ void poison(float* x, long count) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x)
    x[i] = __int_as_float(0x7fc00000);
}
// ref = A B in float64, 16 x 16 tiles through shared memory.
__global__ void reference(const float* a, const float* b, double* ref, int m, int n, int k) {
  __shared__ double as[16][17], bs[16][17];
  const int r = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  double sum = 0;
  for (int k0 = 0; k0 < k; k0 += 16) {
    as[threadIdx.y][threadIdx.x] = r < m && k0 + threadIdx.x < k ? a[long(r) * k + k0 + threadIdx.x] : 0.0;
    bs[threadIdx.y][threadIdx.x] = col < n && k0 + threadIdx.y < k ? b[long(k0 + threadIdx.y) * n + col] : 0.0;
    __syncthreads();
    for (int p = 0; p < 16; ++p) sum += as[threadIdx.y][p] * bs[p][threadIdx.x];
    __syncthreads();
  }
  if (r < m && col < n) ref[long(r) * n + col] = sum;
}
// bad entries and a per-tile count of them.
__global__ void compare(const float* c, const double* ref, int m, int n, double bound, unsigned* bad_tiles,
                        unsigned long long* bad) {
  const long count = long(m) * n;
  const int tiles_n = (n + kBN - 1) / kBN;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x) {
    const double d = fabs(double(c[i]) - ref[i]);
    if (!(d <= bound)) {
      atomicAdd(bad, 1ull);
      const int r = int(i / n), col = int(i % n);
      atomicAdd(&bad_tiles[(r / kBM) * tiles_n + col / kBN], 1u);
    }
  }
}

using ProbeLaunch = void (*)(const CUtensorMap&, const CUtensorMap&, float*, int, int, int);
template <int kBK, int kStages, Knob kKnob>
void launch(const CUtensorMap& at, const CUtensorMap& b, float* c, int m, int n, int k) {
  const auto kernel = probe_kernel<kBK, kStages, kKnob>;
  std::size_t bytes = sizeof(float) * kStages * Tile<kBK>::kStage + 2 * sizeof(std::uint64_t) * kStages;
  if (kKnob == Knob::one_block) bytes = std::max<std::size_t>(bytes, 116 * 1024);  // > half an SM's
  allow_shared_bytes(kernel, bytes);
  kernel<<<dim3(ceil_div(n, kBN), ceil_div(m, kBM)), 256, bytes>>>(at, b, c, m, n, k);
  MMLAB_CHECK_LAUNCH();
}

struct Case {
  Knob knob;
  int depth, stages;
  ProbeLaunch fn;
};
#define MMLAB_CASE(K, D, S) {Knob::K, D, S, launch<D, S, Knob::K>},
#define MMLAB_KNOB(K) MMLAB_CASE(K, 16, 2) MMLAB_CASE(K, 16, 4) MMLAB_CASE(K, 32, 2) MMLAB_CASE(K, 32, 4)
const Case kCases[] = {MMLAB_KNOB(as_is) MMLAB_KNOB(one_block) MMLAB_KNOB(no_setmaxnreg) MMLAB_KNOB(all_arrive)
                           MMLAB_KNOB(proxy_fence) MMLAB_KNOB(consumer_wg_barrier)};
#undef MMLAB_KNOB
#undef MMLAB_CASE

}  // namespace
}  // namespace mmlab

int main(int argc, char** argv) {
  using namespace mmlab;
  int repeats = 5;
  std::vector<std::array<long, 3>> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
      continue;
    }
    long m, n, k;
    if (std::sscanf(argv[i], "%ldx%ldx%ld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
      std::fprintf(stderr, "usage: %s [--repeats N] [MxNxK ...]\n", argv[0]);
      return 2;
    }
    shapes.push_back({m, n, k});
  }
  if (shapes.empty()) shapes = {{4541, 15918, 149}, {8285, 11502, 2617}, {4096, 4096, 149}};
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no GPU\n");
    return 77;
  }
  bool all_ok = true;
  try {
    for (const auto& s : shapes) {
      const long m = s[0], n = s[1], k = s[2], ldb = round4(n), pitch = round4(m);
      float *a, *b, *bp, *at, *c;
      double* ref;
      unsigned* tiles;
      unsigned long long* bad;
      const int tiles_m = int(ceil_div(m, kBM)), tiles_n = int(ceil_div(n, kBN));
      MMLAB_CHECK(cudaMalloc(&a, sizeof(float) * m * k));
      MMLAB_CHECK(cudaMalloc(&b, sizeof(float) * k * n));
      MMLAB_CHECK(cudaMalloc(&bp, sizeof(float) * k * ldb));
      MMLAB_CHECK(cudaMalloc(&at, sizeof(float) * k * pitch));
      MMLAB_CHECK(cudaMalloc(&c, sizeof(float) * m * n));
      MMLAB_CHECK(cudaMalloc(&ref, sizeof(double) * m * n));
      MMLAB_CHECK(cudaMalloc(&tiles, sizeof(unsigned) * tiles_m * tiles_n));
      MMLAB_CHECK(cudaMalloc(&bad, sizeof(unsigned long long)));
      fill<<<1024, 256>>>(a, m * k, 1);
      fill<<<1024, 256>>>(b, k * n, 2);
      transpose(a, m, k, at, pitch, 0);
      pad(b, k, n, bp, k, ldb, 132, 0);
      reference<<<dim3(ceil_div(n, 16), ceil_div(m, 16)), dim3(16, 16)>>>(a, b, ref, int(m), int(n), int(k));
      MMLAB_CHECK_LAUNCH();
      MMLAB_CHECK(cudaDeviceSynchronize());
      // max |ref|, on the host (once per shape)
      std::vector<double> host(std::size_t(m * n));
      MMLAB_CHECK(cudaMemcpy(host.data(), ref, sizeof(double) * m * n, cudaMemcpyDeviceToHost));
      double most = 0;
      for (double v : host) most = std::fmax(most, std::fabs(v));
      std::printf("shape %ldx%ldx%ld: %d x %d tiles, max |C| %.3g\n", m, n, k, tiles_m, tiles_n, most);
      for (const Case& cs : kCases) {
        const CUtensorMap at_map = tensor_map(at, k, m, pitch, cs.depth, kBM);
        const CUtensorMap b_map = tensor_map(bp, k, n, ldb, cs.depth, kBN);
        unsigned long long total = 0, worst = 0;
        long tiles_bad = 0, edge_bad = 0;
        for (int rep = 0; rep < repeats; ++rep) {
          poison<<<1024, 256>>>(c, m * n);
          MMLAB_CHECK(cudaMemset(tiles, 0, sizeof(unsigned) * tiles_m * tiles_n));
          MMLAB_CHECK(cudaMemset(bad, 0, sizeof(unsigned long long)));
          cs.fn(at_map, b_map, c, int(m), int(n), int(k));
          compare<<<1024, 256>>>(c, ref, int(m), int(n), 1e-4 * most, tiles, bad);
          MMLAB_CHECK_LAUNCH();
          unsigned long long count = 0;
          MMLAB_CHECK(cudaMemcpy(&count, bad, sizeof(count), cudaMemcpyDeviceToHost));
          std::vector<unsigned> per(std::size_t(tiles_m) * tiles_n);
          MMLAB_CHECK(cudaMemcpy(per.data(), tiles, sizeof(unsigned) * per.size(), cudaMemcpyDeviceToHost));
          for (int i = 0; i < tiles_m * tiles_n; ++i)
            if (per[i]) {
              ++tiles_bad;
              edge_bad += i / tiles_n == tiles_m - 1 || i % tiles_n == tiles_n - 1;
            }
          total += count, worst = std::max(worst, count);
        }
        std::printf("  %-20s depth %2d stages %d: %s  bad entries %llu in %d runs (worst run %llu), tiles %ld (%ld on the edge)\n",
                    kKnobNames[int(cs.knob)], cs.depth, cs.stages, total ? "FAILED" : "ok    ", total, repeats,
                    worst, tiles_bad, edge_bad);
        std::fflush(stdout);
        all_ok = all_ok && total == 0;
      }
      for (void* p : {(void*)a, (void*)b, (void*)bp, (void*)at, (void*)c, (void*)ref, (void*)tiles, (void*)bad})
        cudaFree(p);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return all_ok ? 0 : 1;
}
