// Small PTX helpers every other wrapper uses.
#pragma once

#include <cstdint>

namespace tcgemm::ptx {

// Shared-memory (state space .shared::cta) address of a generic pointer into
// shared memory: the 32-bit operand form PTX instructions take.
__device__ __forceinline__ std::uint32_t smem_addr(const void* ptr) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(ptr));
}

// setmaxnreg (PTX ISA 9.7.19.5, sm_90a): lower or raise this warpgroup's
// register budget. kRegs is a multiple of 8 in [24, 256]. Takes effect only
// when the kernel has a register cap at entry (__launch_bounds__(threads, 1))
// and each warpgroup role is one branch of a single if/else.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// bar.sync with a named barrier (PTX ISA 9.7.13.1): synchronizes `threads`
// threads (a multiple of 32) on barrier `id` (1..15; 0 is __syncthreads), e.g.
// one warpgroup without stopping the others.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 (PTX ISA, "Warp-level matrix
// store instruction: stmatrix"; sm_90): the warp stores four 8 x 8 matrices of
// 16-bit elements, transposed. Register i of every thread holds two elements
// of matrix i in the mma accumulator layout (thread t: row t / 4, columns
// 2 (t % 4) and 2 (t % 4) + 1, low half first); lanes 8i .. 8i + 7 give the
// 16-byte-aligned addresses of matrix i's stored rows, which (transposed) are
// its columns.
__device__ __forceinline__ void stmatrix_x4_trans(void* row_address, std::uint32_t r0,
                                                  std::uint32_t r1, std::uint32_t r2,
                                                  std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   smem_addr(row_address)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// The same without .trans: lanes 8i .. 8i + 7 give the addresses of matrix
// i's rows, stored as they are (row t / 4 of the accumulator layout is the
// matrix's row t / 4 in memory).
__device__ __forceinline__ void stmatrix_x4(void* row_address, std::uint32_t r0, std::uint32_t r1,
                                            std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   smem_addr(row_address)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// ld.shared.v4.b32 / ld.shared.u16: shared-memory loads through a generic
// pointer into shared memory. (Where the compiler cannot tell the pointer's
// state space, it loads through generic LD instructions.) 16-byte and 2-byte
// aligned.
__device__ __forceinline__ uint4 ld_shared_v4(const void* ptr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(smem_addr(ptr))
               : "memory");
  return v;
}

__device__ __forceinline__ std::uint16_t ld_shared_u16(const void* ptr) {
  std::uint16_t v;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(smem_addr(ptr)) : "memory");
  return v;
}

// st.global.v4.b32: 16 bytes to global memory in one instruction (ptr
// 16-byte aligned; the compiler, unsure of the alignment of an address that
// is computed, may otherwise split a uint4 store into four 32-bit ones).
__device__ __forceinline__ void st_global_v4(void* ptr, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(__cvta_generic_to_global(ptr)),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace tcgemm::ptx
