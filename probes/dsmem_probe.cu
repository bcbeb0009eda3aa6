// dsmem_probe: how fast the blocks of a Hopper thread-block cluster move data into each other's
// shared memory (distributed shared memory, DSMEM): the first step of the cluster Cannon/DNS work
// (docs/cluster-notes.md). For clusters of 2, 4, 8 and 16 blocks (16 is non-portable), one block
// per SM, every block moving data to its right-hand neighbour (rank + 1 mod size):
//   local   16-byte loads from the block's own shared memory (the ceiling to compare with),
//   loads   16-byte loads from the neighbour's shared memory (cluster.map_shared_rank),
//   bulk    cp.async.bulk.shared::cluster copies of 16 KiB chunks from the block's shared memory
//           into the neighbour's, completing on the neighbour's mbarrier (one thread issues them).
// Prints GB/s per SM (bytes moved by one block / its time), median of 5 launches, as CSV. The bulk
// rounds end in a cluster barrier (so no phase's copies overtake the last), which the figure includes.
// Run: build/bin/mmlab-dsmem-probe (a Hopper GPU; compute capability 9.0).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "runtime/cuda_check.hpp"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kChunk = 16 * 1024;    // bytes of one bulk copy
constexpr int kInFlight = 16;        // bulk copies per round (the mbarrier expects all of them)
constexpr int kBuffer = 2 * kChunk;  // the block's source and its landing zone, each this big
constexpr int kLoadRounds = 2048;    // loads: passes over the neighbour's 32 KiB
constexpr int kBulkRounds = 256;     // bulk: rounds of kInFlight copies, a cluster barrier after each

enum class Mode { local, loads, bulk };

__device__ unsigned smem_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

__global__ void probe_kernel(Mode mode, float* sink) {
  extern __shared__ __align__(128) unsigned char smem[];  // source (kBuffer), landing (kBuffer), mbarrier
  unsigned char* source = smem;
  unsigned char* landing = smem + kBuffer;
  unsigned long long* barrier = reinterpret_cast<unsigned long long*>(smem + 2 * kBuffer);
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks(), next = (rank + 1) % size;
  for (int i = threadIdx.x; i < kBuffer / 4; i += blockDim.x) reinterpret_cast<float*>(source)[i] = float(i);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(barrier)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  cluster.sync();

  float acc = 0;
  if (mode != Mode::bulk) {
    const float4* from = reinterpret_cast<const float4*>(
        mode == Mode::local ? source : static_cast<unsigned char*>(cluster.map_shared_rank(source, next)));
    for (int r = 0; r < kLoadRounds; ++r)
      for (int i = threadIdx.x; i < kBuffer / 16; i += blockDim.x) {
        const float4 v = from[i];
        acc += v.x + v.y + v.z + v.w;
      }
  } else {
    // The neighbour's landing zone and mbarrier, as shared::cluster addresses.
    unsigned remote_landing = 0, remote_barrier = 0;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote_landing)
                 : "r"(smem_address(landing)), "r"(next));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote_barrier)
                 : "r"(smem_address(barrier)), "r"(next));
    for (int r = 0; r < kBulkRounds; ++r) {
      if (threadIdx.x == 0) {
        // This block expects kInFlight chunks from its left-hand neighbour in this phase.
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(barrier)),
                     "r"(kInFlight * kChunk)
                     : "memory");
        for (int c = 0; c < kInFlight; ++c)
          asm volatile(
              "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, "
              "[%3];" ::"r"(remote_landing + (c % 2) * kChunk),
              "r"(smem_address(source + (c % 2) * kChunk)), "r"(kChunk), "r"(remote_barrier)
              : "memory");
        // Wait for this phase: the left-hand neighbour's chunks have all landed here.
        unsigned done = 0;
        while (!done)
          asm volatile(
              "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
              : "=r"(done)
              : "r"(smem_address(barrier)), "r"(unsigned(r & 1))
              : "memory");
      }
      cluster.sync();  // no block starts the next phase's copies before every block ended this one
    }
    acc = float(reinterpret_cast<const float*>(landing)[threadIdx.x]);
  }
  cluster.sync();                  // no block leaves while a neighbour may still write into it
  if (acc == -1.f) sink[0] = acc;  // keeps the loads
}

double bytes_per_block(Mode mode) {
  return mode == Mode::bulk ? double(kBulkRounds) * kInFlight * kChunk : double(kLoadRounds) * kBuffer;
}

}  // namespace

int main() {
  int device = 0, sms = 0, cc = 0;
  MMLAB_CHECK(cudaGetDevice(&device));
  MMLAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MMLAB_CHECK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, device));
  if (cc < 9) {
    std::printf("SKIPPED: thread-block clusters need compute capability 9.0\n");
    return 77;
  }
  cudaDeviceProp p{};
  MMLAB_CHECK(cudaGetDeviceProperties(&p, device));
  const int shared = 116 * 1024;  // more than half an SM's shared memory: one block per SM
  MMLAB_CHECK(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  MMLAB_CHECK(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  float* sink = nullptr;
  MMLAB_CHECK(cudaMalloc(&sink, sizeof(float)));
  cudaEvent_t t0, t1;
  MMLAB_CHECK(cudaEventCreate(&t0));
  MMLAB_CHECK(cudaEventCreate(&t1));
  std::printf("# %s, %d SMs; one block of %d threads per SM\n", p.name, sms, kThreads);
  std::printf("mode,cluster,blocks,GB_per_s_per_SM,GB_per_s_total\n");
  const char* names[] = {"local", "loads", "bulk"};
  for (int size : {2, 4, 8, 16})
    for (Mode mode : {Mode::local, Mode::loads, Mode::bulk}) {
      cudaLaunchConfig_t lc{};
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = size, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
      lc.blockDim = dim3(kThreads);
      lc.dynamicSmemBytes = shared;
      lc.attrs = attr;
      lc.numAttrs = 1;
      int clusters = 0;  // as many clusters as fit at once: every block has an SM of its own
      lc.gridDim = dim3(size * (sms / size));
      MMLAB_CHECK(cudaOccupancyMaxActiveClusters(&clusters, probe_kernel, &lc));
      if (clusters == 0) {
        std::printf("%s,%d,0,,  # no cluster of this size fits\n", names[int(mode)], size);
        continue;
      }
      lc.gridDim = dim3(size * std::min(clusters, sms / size));
      std::vector<float> ms;
      for (int i = 0; i < 6; ++i) {
        MMLAB_CHECK(cudaEventRecord(t0));
        MMLAB_CHECK(cudaLaunchKernelEx(&lc, probe_kernel, mode, sink));
        MMLAB_CHECK(cudaEventRecord(t1));
        MMLAB_CHECK(cudaEventSynchronize(t1));
        float t = 0;
        MMLAB_CHECK(cudaEventElapsedTime(&t, t0, t1));
        if (i) ms.push_back(t);  // the first is a warm-up
      }
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2] * 1e-3;
      const double per_sm = bytes_per_block(mode) / median / 1e9;
      std::printf("%s,%d,%u,%.1f,%.0f\n", names[int(mode)], size, lc.gridDim.x, per_sm,
                  per_sm * lc.gridDim.x);
    }
  return 0;
}
