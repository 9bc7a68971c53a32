// Thread-block cluster wrappers (PTX ISA 9.7.13.3 barrier.cluster, 9.7.9.21
// mapa, 10.x special registers %cluster_ctarank) and the cluster-scope
// mbarrier arrival a consumer uses to release a slot that a peer CTA's TMA
// multicast writes into.
#pragma once

#include <cstdint>

#include "ptx/common.cuh"

namespace tcgemm::ptx {

// This CTA's rank inside its cluster (0 .. cluster size - 1).
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// The cluster barrier's two halves, for work that needs neither side of it
// to run while its round trip is in flight: every thread of every CTA in the
// cluster arrives (release), then waits (acquire) for all the arrivals.
// .aligned: every thread of a warp must execute each together (reconverge a
// warp whose lanes took different branches with __syncwarp first).
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Arrive, then wait. Makes mbarrier inits visible cluster-wide before remote
// use, and keeps a CTA alive until its peers are done touching its shared
// memory.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// One arrival on the mbarrier at the same shared-memory offset as `bar` in
// cluster CTA `cta` (which may be this CTA): mapa translates the address into
// the peer's window of the cluster's shared memory (PTX ISA 9.7.9.21).
// The release is CTA-scoped on purpose. What it publishes is "this CTA's
// wgmmas have finished reading the slot", and wgmma.wait_group already made
// those reads complete. A cluster-scoped release (.release.cluster) also
// waits for the thread's earlier global stores, the previous tile's
// epilogue, to become visible cluster-wide: measured on the H200, it cut
// ladder step 8 from 684 to 430 TFLOP/s at 4096^3.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint64_t* bar, std::uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

}  // namespace tcgemm::ptx
