// cluster_sync_probe: each cluster synchronisation construct the cluster kernels use, alone in a
// tiny kernel (blocks of 128 threads, in clusters), so that a sanitizer finding in cluster_cannon
// or cluster_dns can be pinned on one construct (docs/cluster-notes.md, "Sanitizers"):
//   cluster_barrier  barrier.cluster arrive/wait, then a peer's word read through mapa + ld
//   cg_sync          cooperative_groups cluster.sync() and map_shared_rank (what cluster_dns uses)
//   mbarrier_local   an mbarrier in the block's own shared memory, every thread arriving
//   mbarrier_remote  one thread per block arriving on the peer's mbarrier (cluster_cannon's "free")
//   bulk_copy        cp.async.bulk shared::cta -> shared::cluster completing on the peer's mbarrier
//                    (cluster_cannon's "full")
// Each case runs in clusters of 2 with its buffers at the start of shared memory, again near the
// top of 200 KiB (where the cluster kernels' stages reach), and in 40 clusters of 16 blocks (more
// than the device holds at once), checks what it moved and prints "CASE ok" or "CASE
// FAILED: why"; exit 0 when all asked cases pass. Run: build/bin/mmlab-cluster-sync-probe [CASE...] (all by
// default; sm_90).
#include <cooperative_groups.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/launch/clusters.cuh"
#include "algorithms/ptx/dsmem.cuh"

namespace cg = cooperative_groups;

namespace mmlab {
namespace {

constexpr int kThreads = 128;
constexpr int kWords = 256;  // 1 KiB moved per block

enum class Case { cluster_barrier, cg_sync, mbarrier_local, mbarrier_remote, bulk_copy };

__device__ unsigned peer_of(unsigned rank) { return rank ^ 1u; }  // clusters of an even size

// The buffers sit `offset` bytes into dynamic shared memory (0, or near the top of a 200 KiB
// allocation like the cluster kernels' stages).
__global__ void probe(Case which, int* result, unsigned offset) {
  extern __shared__ __align__(128) unsigned char smem[];
  int* data = reinterpret_cast<int*>(smem + offset);
  int* landing = data + kWords;
  unsigned long long& bar = *reinterpret_cast<unsigned long long*>(landing + kWords);
  const unsigned rank = cluster_rank(), peer = peer_of(rank);
  for (int i = threadIdx.x; i < kWords; i += kThreads) data[i] = int(rank * 1000 + i), landing[i] = -1;
  int bad = 0;
  switch (which) {
    case Case::cluster_barrier: {
      cluster_sync();
      for (int i = threadIdx.x; i < kWords; i += kThreads) {
        int v;
        asm volatile("ld.shared::cluster.u32 %0, [%1];"
                     : "=r"(v)
                     : "r"(peer_address(shared_address(&data[i]), peer)));
        bad += v != int(peer * 1000 + i);
      }
      cluster_sync();
      break;
    }
    case Case::cg_sync: {
      cg::cluster_group cluster = cg::this_cluster();
      cluster.sync();
      const int* theirs = cluster.map_shared_rank(data, peer);
      for (int i = threadIdx.x; i < kWords; i += kThreads) bad += theirs[i] != int(peer * 1000 + i);
      cluster.sync();
      break;
    }
    case Case::mbarrier_local: {
      if (threadIdx.x == 0) mbarrier_init(shared_address(&bar), kThreads);
      __syncthreads();
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(&bar)) : "memory");
      mbarrier_wait_cluster(shared_address(&bar), 0);
      break;
    }
    case Case::mbarrier_remote: {
      if (threadIdx.x == 0) mbarrier_init(shared_address(&bar), 1), mbarrier_init_fence();
      cluster_sync();
      if (threadIdx.x == 0) mbarrier_arrive_cluster(peer_address(shared_address(&bar), peer));
      mbarrier_wait_cluster(shared_address(&bar), 0);
      cluster_sync();
      break;
    }
    case Case::bulk_copy: {
      if (threadIdx.x == 0) {
        mbarrier_init(shared_address(&bar), 1), mbarrier_init_fence();
        mbarrier_expect_bytes(shared_address(&bar), kWords * sizeof(int));  // the peer's copy lands here
      }
      fence_async_shared();
      cluster_sync();
      if (threadIdx.x == 0) {
        bulk_copy_to_peer(peer_address(shared_address(landing), peer), shared_address(data),
                          kWords * sizeof(int), peer_address(shared_address(&bar), peer));
        bulk_commit();
        bulk_wait_read();
      }
      mbarrier_wait_cluster(shared_address(&bar), 0);
      for (int i = threadIdx.x; i < kWords; i += kThreads) bad += landing[i] != int(peer * 1000 + i);
      cluster_sync();  // no block leaves while its copy may still be landing in the peer
      break;
    }
  }
  if (bad) atomicAdd(result, bad);
}

const char* const kNames[] = {"cluster_barrier", "cg_sync", "mbarrier_local", "mbarrier_remote", "bulk_copy"};

constexpr unsigned kFootprint = 2 * kWords * sizeof(int) + 16;

// One case in clusters of `size` blocks, `clusters` of them (more than the device holds at once
// when the buffers are high: one block per SM, so the clusters run in waves).
bool run_case(Case c, int* result, unsigned shared_bytes, unsigned size, unsigned clusters) {
  const std::string name = std::string(kNames[int(c)]) + (shared_bytes > kFootprint ? " high" : " low") +
                           ", " + std::to_string(clusters) + " clusters of " + std::to_string(size);
  cudaMemset(result, 0, sizeof(int));
  LaunchConfig lc;
  lc.grid = {size * clusters, 1, 1}, lc.block = {kThreads, 1, 1}, lc.cluster = {size, 1, 1};
  lc.shared_bytes = shared_bytes;
  ClusterLaunch l(lc, nullptr);
  cudaError_t e = cudaLaunchKernelEx(&l.config, probe, c, result, shared_bytes - kFootprint);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  int bad = -1;
  if (e == cudaSuccess) e = cudaMemcpy(&bad, result, sizeof bad, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    std::printf("%s FAILED: %s\n", name.c_str(), cudaGetErrorString(e));
    return false;
  }
  if (bad) {
    std::printf("%s FAILED: %d words wrong\n", name.c_str(), bad);
    return false;
  }
  std::printf("%s ok\n", name.c_str());
  return true;
}

}  // namespace
}  // namespace mmlab

int main(int argc, char** argv) {
  using namespace mmlab;
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) {
    int found = -1;
    for (int c = 0; c < 5; ++c)
      if (std::strcmp(argv[i], kNames[c]) == 0) found = c;
    if (found < 0) {
      std::fprintf(stderr,
                   "unknown case '%s' (cluster_barrier, cg_sync, mbarrier_local, mbarrier_remote, "
                   "bulk_copy)\n",
                   argv[i]);
      return 2;
    }
    cases.push_back(Case(found));
  }
  if (cases.empty())
    for (int c = 0; c < 5; ++c) cases.push_back(Case(c));
  int* result = nullptr;
  if (cudaMalloc(&result, sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "no GPU\n");
    return 77;
  }
  // Each case twice: buffers at the start of shared memory, then near the top of 200 KiB.
  constexpr unsigned kHigh = 200 * 1024;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kHigh);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  bool ok = true;
  for (Case c : cases) ok = run_case(c, result, kFootprint, 2, 4) && ok;
  for (Case c : cases) ok = run_case(c, result, kHigh, 2, 4) && ok;
  // 16-block clusters (cluster_cannon's 4 x 4 torus), in waves.
  for (Case c : cases) ok = run_case(c, result, kHigh, 16, 40) && ok;
  return ok ? 0 : 1;
}
