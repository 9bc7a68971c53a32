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
