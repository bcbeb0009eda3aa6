// cluster_cannon's `tma` and `specialized` kernels (algorithms/cluster_cannon.cu has the algorithm and
// the default variant's kernel; docs/cluster-notes.md, step 5, what they measure). Included by
// cluster_cannon.cu only.
#pragma once

#include <cstdint>

#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/ptx/dsmem.cuh"
#include "algorithms/ptx/tma.cuh"

namespace mmlab {
namespace {

// The `tma` variant: the same torus and flow control around the flagship's TMA-fed product
// (tma_tiled.cu: A^T and B tiles by `cp.async.bulk.tensor`, 128 x 256 tiles of 8 x 16 per thread at
// one block an SM). Every tile lands on its stage's `full` mbarrier, whether TMA read it from global
// memory (step 0 of a panel) or the neighbours pushed it, so each stage completes one phase per tile.
// TMA zero-fills what lies past m, n and k, so no load is clamped; A is transposed into the workspace
// first. Two forms:
//   kProducer false (`tma`)  thread 0 issues the loads and the pushes between a block barrier and its
//                            own product, so its waits for the neighbours hold the whole block;
//   kProducer true           a producer warpgroup of its own (one lane of it, `specialized`) loads,
//   (`specialized`)          pushes and frees; the consumer warps only wait for a tile, multiply and
//                            release the stage by an mbarrier (no block barrier in the k loop). As in
//                            tma_tiled's specialized, setmaxnreg moves registers from the producers
//                            to the consumers (56 and 224 here; a single producer warp instead would
//                            leave the consumers 168, the register file being split among the four
//                            schedulers' warps). ptxas reports the launch's 168 and spills nothing.
constexpr int kProducerThreads = 128, kProducerRegisters = 56, kConsumerRegisters = 224;
template <int kQ, int kBM, int kBN, int kBK, int kStages, int kQN, bool kProducer>
__global__ void __launch_bounds__(Quads<kBM, kBN, kBK, kQN, 0>::kThreads + (kProducer ? kProducerThreads : 0),
                                  Quads<kBM, kBN, kBK, kQN, 0>::kMinBlocks)
    cluster_cannon_tma_kernel(const __grid_constant__ CUtensorMap at_map, const __grid_constant__ CUtensorMap b_map,
                              float* __restrict__ c, int ldc, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Quads<kBM, kBN, kBK, kQN, 0>;
  constexpr unsigned kBytesA = S::kTileA * sizeof(float), kBytesB = S::kTileB * sizeof(float);
  constexpr int kConsumerWarps = S::kThreads / 32;
  extern __shared__ __align__(128) float smem[];  // kStages x [A^T (BK, BM), B (BK, BN)], then the mbarriers
  std::uint64_t* const landed = reinterpret_cast<std::uint64_t*>(smem + kStages * S::kStage);
  auto stage = [&](int t) { return smem + (t % kStages) * S::kStage; };
  auto full = [&](int t) { return &landed[t % kStages]; };                      // tile t has landed here
  auto free = [&](int t) { return shared_address(&landed[kStages + t % kStages]); };  // receivers freed it
  auto consumed = [&](int t) { return &landed[2 * kStages + t % kStages]; };  // consumer warps done (kProducer)

  const int j = blockIdx.x % kQ, i = blockIdx.y % kQ;
  const unsigned left = i * kQ + (j + kQ - 1) % kQ, up = ((i + kQ - 1) % kQ) * kQ + j;
  const unsigned right = i * kQ + (j + 1) % kQ, down = ((i + 1) % kQ) * kQ + j;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  const int tiles = (k + kQ * kBK - 1) / (kQ * kBK) * kQ;
  auto k0_of = [&](int t) { return (t / kQ) * kQ * kBK + (i + j + t) % kQ * kBK; };
  auto pushed = [&](int t) { return t < tiles && t % kQ != 0; };
  auto load = [&](int t) {  // tile t from global memory (its stage's last readers are done)
    fence_async_shared();
    mbarrier_expect_bytes(full(t), kBytesA + kBytesB);
    tma_load_2d(stage(t), at_map, row0, k0_of(t), full(t));
    tma_load_2d(stage(t) + S::kTileA, b_map, col0, k0_of(t), full(t));
  };
  unsigned free_parity = 0;  // bit s: the parity of free(s)'s next phase
  auto push = [&](int t) {   // tile t, landed here, on as the left neighbour's A and the upper one's B of t + 1
    if (t + 1 >= kStages) {  // their stage (t + 1) % STAGES held tile t + 1 - STAGES: both freed it
      mbarrier_wait_cluster(free(t + 1), (free_parity >> ((t + 1) % kStages)) & 1);
      free_parity ^= 1u << ((t + 1) % kStages);
      fence_async_shared_cluster();  // the peers' reads of that stage before the copies' writes
    }
    const unsigned src = shared_address(stage(t)), dst = shared_address(stage(t + 1));
    const unsigned bar = shared_address(full(t + 1));
    bulk_copy_to_peer(peer_address(dst, left), src, kBytesA, peer_address(bar, left));
    bulk_copy_to_peer(peer_address(dst + kBytesA, up), src + kBytesA, kBytesB, peer_address(bar, up));
    bulk_commit();
  };
  auto release = [&](int t) {  // tile t's stage is free here and a push refills it: tell both senders
    mbarrier_arrive_cluster(peer_address(free(t), right)), mbarrier_arrive_cluster(peer_address(free(t), down));
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      mbarrier_init(full(s), 1), mbarrier_init(free(s), 2), mbarrier_init(consumed(s), kConsumerWarps);
    mbarrier_init_fence();
  }
  cluster_sync();  // every block's barriers exist before any peer uses them
  // The global tiles among the first STAGES - 1 (thread 0 loads tile STAGES - 1 in the loop), or among
  // the first STAGES (the producer's loop starts with tile STAGES) into their empty stages.
  const int issuer = kProducer ? S::kThreads : 0, ahead = kProducer ? kStages : kStages - 1;
  if (threadIdx.x == issuer)
    for (int t = 0; t < ahead && t < tiles; ++t)
      if (!pushed(t)) load(t);

  // Each path ends at the cluster barrier (no block leaves while a peer may still read or write its
  // shared memory); only the consumers hold accumulators, so the producer's path keeps none alive.
  if constexpr (kProducer) {
    if (threadIdx.x >= S::kThreads) {  // the producer warpgroup; one lane works
      release_registers<kProducerRegisters>();
      if (threadIdx.x == issuer) {
        for (int t = 0; t < tiles; ++t) {
          if (pushed(t)) mbarrier_expect_bytes(full(t), kBytesA + kBytesB);
          const bool pushing = pushed(t + 1);
          if (pushing) {
            mbarrier_wait_cluster(shared_address(full(t)), unsigned(t / kStages) & 1u);
            push(t);
          }
          const int next = t - 1 + kStages;  // into tile t - 1's stage, once the consumers and its push are done
          if (t > 0 && next < tiles) {
            mbarrier_wait_cta(consumed(t - 1), unsigned((t - 1) / kStages) & 1u);
            if (pushing) bulk_wait_read<1>(); else bulk_wait_read();
            if (pushed(next)) release(t - 1); else load(next);
          }
        }
        bulk_wait_read();
      }
      cluster_sync();
    } else {
      claim_registers<kConsumerRegisters>();
      typename S::Acc acc = {};
      for (int t = 0; t < tiles; ++t) {
        mbarrier_wait_cluster(shared_address(full(t)), unsigned(t / kStages) & 1u);  // tile t is here
        S::product(stage(t), stage(t) + S::kTileA, acc);
        __syncwarp();
        if (threadIdx.x % 32 == 0) mbarrier_arrive_cta(consumed(t));  // this warp is done with its stage
      }
      cluster_sync();
      S::store(acc, c, ldc, row0, col0, m, n);
    }
  } else {
    typename S::Acc acc = {};
    for (int t = 0; t < tiles; ++t) {
      if (threadIdx.x == 0 && pushed(t)) mbarrier_expect_bytes(full(t), kBytesA + kBytesB);
      mbarrier_wait_cluster(shared_address(full(t)), unsigned(t / kStages) & 1u);  // tile t is here
      if (threadIdx.x == 0) bulk_wait_read();  // the last push has read its stage
      __syncthreads();                         // every thread has finished tile t - 1
      if (threadIdx.x == 0) {
        if (t > 0 && pushed(t - 1 + kStages)) release(t - 1);
        if (pushed(t + 1)) push(t);
        const int next = t + kStages - 1;  // its stage held tile t - 1; nobody pushes into it
        if (next < tiles && !pushed(next)) load(next);
      }
      S::product(stage(t), stage(t) + S::kTileA, acc);
    }
    if (threadIdx.x == 0) bulk_wait_read();
    cluster_sync();
    S::store(acc, c, ldc, row0, col0, m, n);
  }
#endif
}

}  // namespace
}  // namespace mmlab
