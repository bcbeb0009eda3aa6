// Thread-block cluster primitives (sm_90) shared by the cluster kernels (cluster_cannon.cu,
// cluster_dns.cu): the cluster barrier and bulk copies (completing a peer's mbarrier, mbarrier.cuh) from a
// block's shared memory into another block's (distributed shared memory, DSMEM). Addresses are
// 32-bit shared-window addresses: `shared::cta` for the block's own memory, `shared::cluster` (from
// mapa) for a peer's. See docs/cluster-notes.md for what these move on the H100.
#pragma once

#include <functional>
#include <string>

#include "algorithms/kernels/aligned.cuh"
#include "algorithms/kernels/common.cuh"
#include "algorithms/ptx/mbarrier.cuh"

namespace mmlab {
namespace {

// This block's rank in its cluster (x fastest, then y, then z).
__device__ inline unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// The shared::cluster address of `local` (an address of this block's) in the block of rank `rank`.
__device__ inline unsigned peer_address(unsigned local, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(local), "r"(rank));
  return out;
}

// Split cluster barrier: every thread of every block arrives (release: its earlier shared-memory
// accesses become visible), then waits (acquire). A thread waits once before it arrives again.
__device__ inline void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ inline void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ inline void cluster_sync() { cluster_arrive(), cluster_wait(); }

// Orders this block's earlier generic-proxy writes to shared memory (st.shared, cp.async) before
// later bulk copies (the async proxy) read them.
__device__ inline void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from this block's shared
// memory into a peer's, completing `bytes` on the peer's mbarrier `peer_bar`.
__device__ inline void bulk_copy_to_peer(unsigned peer_dst, unsigned src, unsigned bytes, unsigned peer_bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          peer_dst),
      "r"(src), "r"(bytes), "r"(peer_bar)
      : "memory");
}
__device__ inline void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until the committed bulk copies of this thread have read their sources.
__device__ inline void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

// Host side: the launch configuration of `lc` in clusters of lc.cluster blocks (lc.grid a multiple).
struct ClusterLaunch {
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config{};
  ClusterLaunch(const LaunchConfig& lc, cudaStream_t stream) {
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = lc.cluster.x, cluster.val.clusterDim.y = lc.cluster.y;
    cluster.val.clusterDim.z = lc.cluster.z;
    config.gridDim = dim(lc.grid), config.blockDim = dim(lc.block);
    config.dynamicSmemBytes = lc.shared_bytes, config.stream = stream;
    config.attrs = &cluster, config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // config points at cluster
};

template <class... Params, class... Args>
void launch_in_clusters(void (*kernel)(Params...), const LaunchConfig& lc, cudaStream_t stream,
                        Args... args) {
  ClusterLaunch l(lc, stream);
  MMLAB_CHECK(cudaLaunchKernelEx(&l.config, kernel, Params(args)...));
}

// How many clusters of this launch the device holds at once; 0 when not even one fits (a cluster
// of 16 blocks, say, whose blocks need more than a GPC's SMs can give). Sets the kernel's shared
// memory and non-portable cluster size attributes on the way.
template <class... Params>
int clusters_that_fit(void (*kernel)(Params...), const LaunchConfig& lc) {
  allow_shared_bytes(kernel, lc.shared_bytes);
  MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  ClusterLaunch l(lc, nullptr);
  int count = 0;
  if (cudaOccupancyMaxActiveClusters(&count, kernel, &l.config) != cudaSuccess) {
    (void)cudaGetLastError();  // not a sticky error: the configuration is only unsupported
    return 0;
  }
  return count;
}

// What the cluster kernels admit, in words (the descriptor's constraints), and the check behind it:
// compute capability 9.0, 32-bit indexing of the padded operands, and at least one cluster of the
// launch resident on the device (`fit` returns clusters_that_fit; called only where there is one).
inline const char* const kClusterConstraints =
    "compute capability 9.0; each (padded) matrix under 2^31 elements; any m, n, k (the grid is rounded up "
    "to "
    "whole clusters)";
inline Reason cluster_supports(const Problem& p, const DeviceInfo& d, const std::string& who,
                               const std::string& cluster, const std::function<int()>& fit) {
  if (d.present && d.cc_major < 9) return "thread-block clusters need compute capability 9.0 or newer";
  if (Reason r = fits_aligned_int(p, who)) return r;
  if (d.present && fit() == 0) return "a " + cluster + " cluster of these blocks does not fit on the device";
  return std::nullopt;
}

}  // namespace
}  // namespace mmlab
