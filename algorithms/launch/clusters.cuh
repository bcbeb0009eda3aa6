// Launches in thread-block clusters (sm_90) for the cluster kernels (cluster_cannon.cu,
// cluster_dns.cu; their device side is ptx/dsmem.cuh): the launch configuration, how many clusters
// fit, and the checks the cluster algorithms share.
#pragma once

#include <functional>
#include <string>

#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

// The launch configuration of `lc` in clusters of lc.cluster blocks (lc.grid a multiple).
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

// Sets what a launch of `kernel` in clusters of `blocks` blocks needs: its shared memory, and the
// non-portable cluster size where `blocks` > 8.
template <class Kernel>
void allow_clusters(Kernel* kernel, const LaunchConfig& lc, int blocks) {
  allow_shared_bytes(kernel, lc.shared_bytes);
  if (blocks > 8) MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
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
