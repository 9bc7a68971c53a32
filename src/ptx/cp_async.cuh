// cp.async wrappers (PTX ISA "Data Movement and Conversion Instructions:
// cp.async", sm_80+): a 16-byte copy from global to shared memory that does
// not pass through registers, and the per-thread groups that track it.
#pragma once

#include <cstdint>

#include "ptx/common.cuh"

namespace tcgemm::ptx {

// Copies 16 bytes from global `src` to shared `dst`, asynchronously to the
// issuing thread. .cg caches in L2 only (the operand is read once per CTA
// and staged in shared memory anyway). Both addresses are 16-byte aligned.
__device__ __forceinline__ void cp_async_cg_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)),
               "l"(__cvta_generic_to_global(src))
               : "memory");
}

// Copies the 16 bytes at `src` to shared `dst` when `full`, else writes 16
// zero bytes to `dst` and reads nothing (src-size 0; `src` must still be a
// valid global address form). kL1 keeps the line in L1 for other warps of
// the SM (.ca), else L2 only (.cg); both ask L2 to fetch the whole 256-byte
// sector group around it (a streamed operand's next bytes). 16-byte aligned.
template <bool kL1>
__device__ __forceinline__ void cp_async_16_zfill(void* dst, const void* src, bool full) {
  const std::uint32_t bytes = full ? 16 : 0;
  if constexpr (kL1) {
    asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(__cvta_generic_to_global(src)), "r"(bytes)
                 : "memory");
  } else {
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(__cvta_generic_to_global(src)), "r"(bytes)
                 : "memory");
  }
}

// cp.async.commit_group: closes the thread's copies issued so far into a group.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// cp.async.wait_group N: waits until at most kPending of the thread's
// committed groups are still in flight. The copies are then complete for this
// thread only: other threads see them after a barrier.
template <int kPending>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace tcgemm::ptx
