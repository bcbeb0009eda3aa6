// Thread-block cluster primitives (sm_90) shared by the cluster kernels (cluster_cannon.cu,
// cluster_dns.cu): the cluster barrier and bulk copies (completing a peer's mbarrier, mbarrier.cuh) from a
// block's shared memory into another block's (distributed shared memory, DSMEM). Addresses are
// 32-bit shared-window addresses: `shared::cta` for the block's own memory, `shared::cluster` (from
// mapa) for a peer's. See docs/cluster-notes.md for what these move on the H100. Their launches in
// clusters: launch/clusters.cuh.
#pragma once

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
// Waits until the committed bulk copies of this thread have read their sources, all but the last
// kPending groups.
template <int kPending = 0>
__device__ inline void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

}  // namespace
}  // namespace mmlab
