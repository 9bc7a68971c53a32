// Warp-level tensor-core MMA (mma.sync, PTX ISA 9.7.14) and the streaming
// 16-byte global load that feeds it straight from registers, for kernels
// that skip shared memory (the production family's small-M path).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tcgemm::ptx {

// D (16 x 8, fp32) += A (16 x 16, row) * B (16 x 8, col), 16-bit inputs.
// Per lane (g = lane / 4, q = lane % 4), as PTX ISA 9.7.14.5.8 lays out
// m16n8k16: a0 holds A(g, 2q..2q+1), a1 A(g+8, 2q..2q+1), a2 A(g, 2q+8..
// 2q+9), a3 A(g+8, 2q+8..2q+9); b0 B(2q..2q+1, g), b1 B(2q+8..2q+9, g);
// d[0..1] D(g, 2q..2q+1), d[2..3] D(g+8, 2q..2q+1). Each 32-bit register
// packs two elements, the lower k (or column) in the low half.
template <typename T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], std::uint32_t a0, std::uint32_t a1,
                                             std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                             std::uint32_t b1) {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>,
                "mma_m16n8k16 takes bf16 or fp16 inputs");
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// 16 bytes from read-only global memory read once: through the
// non-coherent path without allocating in L1, L2 fetching the whole 256-byte
// block around it (PTX ISA 9.7.9.8, ld's .L1::no_allocate and .L2::256B).
// `ptr` is 16-byte aligned.
__device__ __forceinline__ uint4 ld_global_stream_v4(const void* ptr) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(ptr));
  return v;
}

// 16 bytes from read-only global memory that other warps read too (kept in
// L1). `ptr` is 16-byte aligned.
__device__ __forceinline__ uint4 ld_global_shared_v4(const void* ptr) {
  uint4 v;
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(ptr));
  return v;
}

}  // namespace tcgemm::ptx
