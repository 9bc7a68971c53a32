// mbarrier wrappers (PTX ISA 9.7.13.15, "Parallel Synchronization and
// Communication Instructions: mbarrier"), CTA scope, as the worklog's kernel 7
// uses them: no arrival tokens, the waiter tracks the phase parity itself.
//
// Phase parity: a barrier starts in phase 0. try_wait.parity(p) returns true
// once the phase with parity p has completed. On a freshly initialized barrier
// waiting for parity 1 returns at once (the "previous" phase counts as done),
// which is why a producer waiting on an empty-slot barrier starts with parity
// 1 and a consumer waiting on a full-slot barrier starts with parity 0.
#pragma once

#include <cstdint>

#include "ptx/common.cuh"

namespace tcgemm::ptx {

// Sets the expected arrival count. Must be made visible before other threads
// or the TMA unit use the barrier (fence_mbarrier_init + a CTA barrier).
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals));
}

// fence.mbarrier_init (PTX ISA 9.7.13.4): orders prior mbarrier.init before
// later arrivals from other threads and from the async proxy (TMA).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}

// One arrival that also raises the phase's transaction count by `bytes`: the
// phase completes once all arrivals are in AND that many bytes have landed
// through complete_tx (a TMA load naming this barrier).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
      "r"(bytes)
      : "memory");
}

__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase with this parity has completed. try_wait itself
// suspends the thread for a hardware-chosen time, so the loop is not a hot spin.
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// try_wait with a suspend-time hint (mbarrier.try_wait's suspendTimeHint
// operand, PTX ISA 7.8+): the thread may be suspended for up to `hint_ns`
// nanoseconds while the phase is incomplete, and resumes when it completes.
__device__ __forceinline__ bool mbarrier_try_wait_parity_hint(std::uint64_t* bar,
                                                              std::uint32_t parity,
                                                              std::uint32_t hint_ns) {
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, %3;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity), "r"(hint_ns)
      : "memory");
  return done != 0;
}

// mbarrier_wait_parity with the hint: a waiting warp sleeps instead of
// coming back to try again after the default window, leaving its issue
// slots to the warps of its SM sub-partition that have work. (cuBLAS's
// kernels on the H200 wait this way, with the same 50 us: their SASS shows
// NANOSLEEP.SYNCS 0xc350 after each try_wait; docs/production.md.)
__device__ __forceinline__ void mbarrier_wait_parity_sleep(std::uint64_t* bar,
                                                           std::uint32_t parity) {
  constexpr std::uint32_t kHintNs = 50000;
  while (!mbarrier_try_wait_parity_hint(bar, parity, kHintNs)) {
  }
}

// st.async (PTX ISA 9.7.9.12, sm_90): stores 16 bytes (four 32-bit words)
// to shared memory `dst` through the async proxy and completes 16 bytes of
// transaction on the mbarrier `bar`, as a TMA load does, so that a thread
// whose wait on the barrier's phase returns sees them. The producer hands
// small data (a tile's coordinates) to consumers this way: the barrier
// orders it as it orders the tile. Both addresses are this CTA's, in its
// shared::cluster window (mapa). dst is 16-byte aligned.
__device__ __forceinline__ void st_async_16(void* dst, std::uint32_t w0, std::uint32_t w1,
                                            std::uint32_t w2, std::uint32_t w3,
                                            std::uint64_t* bar) {
  asm volatile(
      "{\n"
      ".reg .b32 rank, dst, bar;\n"
      "mov.u32 rank, %%cluster_ctarank;\n"
      "mapa.shared::cluster.u32 dst, %0, rank;\n"
      "mapa.shared::cluster.u32 bar, %5, rank;\n"
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [dst], {%1, %2, %3, %4}, "
      "[bar];\n"
      "}\n" ::"r"(smem_addr(dst)),
      "r"(w0), "r"(w1), "r"(w2), "r"(w3), "r"(smem_addr(bar))
      : "memory");
}

}  // namespace tcgemm::ptx
