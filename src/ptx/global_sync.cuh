// Flags in global memory between CTAs of one grid (stream-K's partial sums),
// in the PTX memory model's terms (PTX ISA 8.x "Memory Consistency Model";
// ld and st with .acquire / .release / .relaxed and .gpu scope, sm_70+).
//
// The pattern: the writer's threads store their data, each fences
// (fence.acq_rel.gpu), a CTA barrier gathers them, and one thread stores the
// flag with release semantics; the reader's one thread spins on the flag with
// acquire loads, then a barrier passes the acquired order on to its other
// threads, which read the data through L2 (ld.global.cg: no stale L1 line).
#pragma once

#include <cstdint>

namespace tcgemm::ptx {

__device__ __forceinline__ std::uint32_t ld_acquire_gpu(const std::uint32_t* flag) {
  std::uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

__device__ __forceinline__ void st_release_gpu(std::uint32_t* flag, std::uint32_t value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ void st_relaxed_gpu(std::uint32_t* flag, std::uint32_t value) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

// fence.acq_rel.gpu: this thread's earlier writes are ordered before its
// later ones (and those of threads it then synchronizes with) for every
// observer on the device.
__device__ __forceinline__ void fence_acq_rel_gpu() {
  asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

// Spins until *flag is non-zero (acquire); returns its value.
__device__ __forceinline__ std::uint32_t wait_flag_nonzero(const std::uint32_t* flag) {
  std::uint32_t value;
  while ((value = ld_acquire_gpu(flag)) == 0) {
  }
  return value;
}

}  // namespace tcgemm::ptx
