// wgmma wrappers: warpgroup-level matrix multiply-accumulate, PTX ISA 9.7.15
// ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions").
//
// A warpgroup is 4 consecutive warps whose first warp index is a multiple of
// 4. wgmma.mma_async is issued by all 128 threads together; it runs on the
// tensor cores asynchronously, so the protocol around it is:
//   wgmma_fence()          before the first wgmma of a batch, and whenever the
//                          accumulator registers were touched by other code
//   wgmma ... (n times)    each reads A and B from shared memory through
//                          64-bit matrix descriptors
//   wgmma_commit_group()   closes the batch into one wgmma-group
//   wgmma_wait_group<N>()  waits until at most N groups are still pending;
//                          only then may the accumulators be read or the
//                          shared memory the finished groups read be reused.
#pragma once

#include "ptx/common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tcgemm::ptx {

// Shared-memory matrix descriptor (PTX ISA 9.7.15.5.1, "Matrix Descriptor
// Format") for a K-major tile written by TMA with 128-byte swizzle:
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset >> 4 (unused for swizzled
//               K-major layouts; conventionally 16 bytes)
//   bits 32-45  stride-dimension byte offset >> 4: the distance between
//               consecutive groups of 8 rows, 8 rows x 128 bytes = 1024
//   bits 62-63  swizzle mode, 1 = 128-byte swizzle
// The tile must start on a 1024-byte boundary (the swizzle pattern repeats
// every 8 rows of 128 bytes). Stepping 16 elements (32 bytes) along K inside
// the 64-element-wide tile is done by adding 32 to the start address.
//
// The high word (stride offset and swizzle) is the same for every
// descriptor below, K- or MN-major; a step inside a tile changes only the
// start address in the low word (smem_desc_step).
inline constexpr std::uint64_t kSmemDescSw128High =
    (std::uint64_t{8 * 128 / 16} << 32) | (std::uint64_t{1} << 62);

__device__ __forceinline__ std::uint64_t make_smem_desc_k_major_sw128(const void* tile) {
  constexpr std::uint64_t kLeadingByteOffset = 16;
  const std::uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | ((kLeadingByteOffset >> 4) << 16) | kSmemDescSw128High;
}

// The same descriptor for an MN-major tile (M contiguous for A, N for B: the
// transposed operands, wgmma's imm-trans bit set) written by TMA as boxes of
// 64 MN-elements (128 bytes, one swizzle row) x K rows, 128-byte swizzle. In
// the canonical MN-major layout ((8 x 16 B, m), (8, k)) of PTX ISA 9.7.15.5.1.2
// (CUTLASS's make_gmma_desc<Major::MN> names the same fields):
//   leading-dimension byte offset: from one 64-element MN chunk to the next,
//     i.e. the size of one TMA box, `chunk_bytes`;
//   stride-dimension byte offset: from one group of 8 K rows to the next,
//     8 rows x 128 bytes = 1024.
// A k16 step covers two 8-row groups; stepping 16 along K is 16 rows x 128
// bytes = 2048 bytes, so the start stays on the 1024-byte swizzle boundary.
__device__ __forceinline__ std::uint64_t make_smem_desc_mn_major_sw128(const void* tile,
                                                                       std::uint32_t chunk_bytes) {
  const std::uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | ((static_cast<std::uint64_t>(chunk_bytes) >> 4) << 16) |
         kSmemDescSw128High;
}

// `desc` (either form above) moved `bytes` further into shared memory: one
// 32-bit add to the start-address field, which cannot carry out of it
// (shared addresses fit its 14 bits), the high word a constant.
__device__ __forceinline__ std::uint64_t smem_desc_step(std::uint64_t desc, std::uint32_t bytes) {
  return kSmemDescSw128High | (static_cast<std::uint32_t>(desc) + (bytes >> 4));
}

// wgmma.fence (PTX ISA 9.7.15.6.1).
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// wgmma.commit_group (PTX ISA 9.7.15.6.2).
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// wgmma.wait_group N (PTX ISA 9.7.15.6.3).
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across a wgmma
// boundary (the registers are being written asynchronously).
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma.mma_async m64nNk16 with fp32 accumulators, A and B both K-major in
// shared memory (imm-trans-a = imm-trans-b = 0), for N = 64, 96, 128, 192, 256
// (prod::kWgmmaWidths):
//   D(64 x N, fp32, registers) = A(64 x 16) * B(16 x N) + (scale_d ? D : 0)
// Each of the 128 threads holds N / 2 accumulators; for 8-column chunk j,
// d[4j + 0..3] are (r, c), (r, c+1), (r+8, c), (r+8, c+1) with
// r = 16 * warp_in_group + lane / 4 and c = 8 * j + 2 * (lane % 4)
// (PTX ISA 9.7.15.5.2, "Matrix fragments for wgmma.mma_async .m64nNk16").
template <int N, typename T>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], std::uint64_t desc_a,
                                             std::uint64_t desc_b, std::uint32_t scale_d);

// The accumulator operands of one wgmma: the register-list text (%0 ...) and
// the matching "+f" constraints, generated once per accumulator count.
#define TCGEMM_WGMMA_D32_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}"
#define TCGEMM_WGMMA_D32_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define TCGEMM_WGMMA_D48_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47" \
  "}"
#define TCGEMM_WGMMA_D48_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define TCGEMM_WGMMA_D64_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}"
#define TCGEMM_WGMMA_D64_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define TCGEMM_WGMMA_D96_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95" \
  "}"
#define TCGEMM_WGMMA_D96_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define TCGEMM_WGMMA_D128_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}"
#define TCGEMM_WGMMA_D128_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// One wgmma with `count` accumulators. The descriptors and the scale-d flag
// are the operands right after the accumulators; their numbers are passed in
// as text (desc_a_op, desc_b_op, scale_op), e.g. "%32", "%33", "%34".
// The two operands after scale_op are the imm-trans-a and imm-trans-b
// immediates ("n" constraints: 0 = K-major, 1 = MN-major).
#define TCGEMM_WGMMA_F32(n, ptx_type, count, desc_a_op, desc_b_op, scale_op, trans_a_op,       \
                         trans_b_op, d, desc_a, desc_b, scale_d, trans_a, trans_b)            \
  asm volatile(                                                                              \
      "{\n"                                                                                  \
      ".reg .pred p;\n"                                                                      \
      "setp.ne.b32 p, " scale_op ", 0;\n"                                                    \
      "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." ptx_type "." ptx_type "\n"           \
      TCGEMM_WGMMA_D##count##_REGS ",\n"                                                     \
      desc_a_op ", " desc_b_op ", p, 1, 1, " trans_a_op ", " trans_b_op ";\n"                \
      "}\n"                                                                                  \
      : TCGEMM_WGMMA_D##count##_OPERANDS(d)                                                  \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(trans_a), "n"(trans_b))

// Specializations for the (N, input type) pairs tcgemm uses, K-major A and B.
#define TCGEMM_DEFINE_WGMMA(n, count, desc_a_op, desc_b_op, scale_op, trans_a_op, trans_b_op,  \
                            ctype, ptx_type)                                                 \
  template <>                                                                                \
  __device__ __forceinline__ void wgmma_m64k16<n, ctype>(                                    \
      float(&d)[n / 2], std::uint64_t desc_a, std::uint64_t desc_b, std::uint32_t scale_d) {   \
    TCGEMM_WGMMA_F32(n, ptx_type, count, desc_a_op, desc_b_op, scale_op, trans_a_op,          \
                     trans_b_op, d, desc_a, desc_b, scale_d, 0, 0);                           \
  }                                                                                          \
  template <int kTransA, int kTransB>                                                        \
  __device__ __forceinline__ void wgmma_m64k16_t(                                            \
      float(&d)[n / 2], std::uint64_t desc_a, std::uint64_t desc_b, std::uint32_t scale_d,     \
      std::integral_constant<int, n>, ctype) {                                               \
    TCGEMM_WGMMA_F32(n, ptx_type, count, desc_a_op, desc_b_op, scale_op, trans_a_op,          \
                     trans_b_op, d, desc_a, desc_b, scale_d, kTransA, kTransB);               \
  }

TCGEMM_DEFINE_WGMMA(64, 32, "%32", "%33", "%34", "%35", "%36", __nv_bfloat16, "bf16")
TCGEMM_DEFINE_WGMMA(64, 32, "%32", "%33", "%34", "%35", "%36", __half, "f16")
TCGEMM_DEFINE_WGMMA(96, 48, "%48", "%49", "%50", "%51", "%52", __nv_bfloat16, "bf16")
TCGEMM_DEFINE_WGMMA(96, 48, "%48", "%49", "%50", "%51", "%52", __half, "f16")
TCGEMM_DEFINE_WGMMA(128, 64, "%64", "%65", "%66", "%67", "%68", __nv_bfloat16, "bf16")
TCGEMM_DEFINE_WGMMA(128, 64, "%64", "%65", "%66", "%67", "%68", __half, "f16")
TCGEMM_DEFINE_WGMMA(192, 96, "%96", "%97", "%98", "%99", "%100", __nv_bfloat16, "bf16")
TCGEMM_DEFINE_WGMMA(192, 96, "%96", "%97", "%98", "%99", "%100", __half, "f16")
TCGEMM_DEFINE_WGMMA(256, 128, "%128", "%129", "%130", "%131", "%132", __nv_bfloat16, "bf16")
TCGEMM_DEFINE_WGMMA(256, 128, "%128", "%129", "%130", "%131", "%132", __half, "f16")

// wgmma_m64k16 with each operand K-major (false) or MN-major (true): the
// production kernels' form, for every storage order of A and B.
template <int N, typename T, bool kMnMajorA, bool kMnMajorB>
__device__ __forceinline__ void wgmma_m64k16_major(float (&d)[N / 2], std::uint64_t desc_a,
                                                   std::uint64_t desc_b, std::uint32_t scale_d) {
  wgmma_m64k16_t<kMnMajorA ? 1 : 0, kMnMajorB ? 1 : 0>(d, desc_a, desc_b, scale_d,
                                                       std::integral_constant<int, N>{}, T{});
}

}  // namespace tcgemm::ptx
