// mbarriers in shared memory (sm_90), for the kernels whose data arrives asynchronously: TMA tile
// loads (tma.cuh) and bulk copies between the blocks of a cluster (dsmem.cuh). A phase completes
// once its expected arrivals have arrived and every byte announced by expect_tx has been delivered
// (complete_tx). Addresses are 32-bit shared-window addresses (shared_address); the pointer forms
// take a barrier in this block's own shared memory.
//
// The scope is in the name: `_cta` for a barrier this block's threads and its own TMA loads
// complete (the wait acquires at CTA scope), `_cluster` for one that other blocks of the cluster
// complete, by arriving on it or copying into this block (release and acquire at cluster scope,
// so what a peer wrote before it arrived is visible after the wait).
#pragma once

#include <cstdint>

namespace mmlab {
namespace {

__device__ inline unsigned shared_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// `arrivals` expected arrivals per phase.
__device__ inline void mbarrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
__device__ inline void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  mbarrier_init(shared_address(bar), arrivals);
}
// Makes the initialised barriers visible to the async proxy (TMA, bulk copies) and the cluster.
__device__ inline void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` still to be delivered in this phase.
__device__ inline void mbarrier_expect_bytes(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ inline void mbarrier_expect_bytes(std::uint64_t* bar, unsigned bytes) {
  mbarrier_expect_bytes(shared_address(bar), bytes);
}

// One arrival on a barrier of this block (release at CTA scope).
__device__ inline void mbarrier_arrive_cta(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// One arrival on a peer block's barrier, `peer_bar` a shared::cluster address (mapa): this block's
// earlier accesses are visible to a thread that waits on it.
__device__ inline void mbarrier_arrive_cluster(unsigned peer_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(peer_bar) : "memory");
}

// Proxy fences. Shared memory is reached through two proxies: the generic one (ld/st.shared, cp.async,
// mbarrier arrivals and waits) and the async one (TMA loads, bulk copies, wgmma's operand reads), and
// a release/acquire pair (an mbarrier, a block barrier) orders accesses of one proxy only. Where a
// buffer passes from one proxy to the other, a proxy fence must lie on the path between them:
//   generic writes, then async reads   the writers fence before they release (wgmma's operands);
//   generic reads, then async writes   the thread that issues the TMA load or bulk copy fences after
//                                      its acquire (a stage the consumers have read and released).
// Without the second, tma_tiled's `specialized` 128x128 kernel overwrote stages whose last shared
// loads had not been served (issue #46; probes/tma_race_probe.cu).
__device__ inline void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// The same for a peer's shared memory (a bulk copy into a block of the cluster).
__device__ inline void fence_async_shared_cluster() {
  asm volatile("fence.proxy.async.shared::cluster;\n" ::: "memory");
}

// Waits until the phase of parity `parity` has completed (acquire at CTA scope).
__device__ inline void mbarrier_wait_cta(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
// The same, acquiring at cluster scope: the bytes the peers' copies delivered and what they wrote
// before arriving are visible.
__device__ inline void mbarrier_wait_cluster(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, "
        "1, 0, "
        "p; }"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
}

}  // namespace
}  // namespace mmlab
