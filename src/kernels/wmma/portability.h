// What differs between CUDA's WMMA and Moore Threads' MUSA WMMA, in one place,
// so that the WMMA ladder (src/kernels/wmma/k*.cu) builds for MUSA by
// swapping this header's branch rather than editing kernels.
//
// Compiled and tested for CUDA only. The MUSA branch is written from the
// MUSA SDK names the S4000 article uses (shared/seeds/s4000-wmma-hgemm.zh.txt)
// and is UNTESTED: no MUSA toolchain or Moore Threads GPU was available.
//
//   what                   CUDA (this build)           MUSA (untested)
//   WMMA namespace         nvcuda::wmma (<mma.h>)      mtmusa::wmma (<crt/mma.h>, behind
//                                                      __MUSA_INCLUDE_COMPILER_INTERNAL_HEADERS__)
//   warp width             32 lanes                    128 lanes (every Moore Threads GPU)
//   fp16 fragment shapes   16x16x16 (also 32x8x16,     16x8x8, 16x16x8, 16x16x16, 32x32x16
//                          8x32x16)                    on MP_22 (S4000)
//   kernel attributes      none                        mtgpu_tiny_offset, mtgpu_enable_ldma_index
//                                                      (the article measured +2 and +1 TFLOP/s)
//   async global->shared   cp.async.cg 16 B (PTX)      __pipeline_memcpy_async (the article
//                                                      doubted it is really asynchronous)
//   runtime                cudaXxx (cuda_runtime.h)    musaXxx (musa_runtime.h)
//   BLAS                   cublasXxx (cublas_v2.h)     mublasXxx (mublas.h)
//   half / bfloat16        __half / __nv_bfloat16      __half / __mt_bfloat16
//
// The ladder kernels use only this header's names: wmma_port::fragment and
// the other WMMA names, kWarpSize for every lane computation, sync_warp,
// copy_async_16 / copy_async_commit / copy_async_wait, and
// TCGEMM_WMMA_KERNEL_ATTRS before a kernel. Host code (launchers, the registry)
// uses the CUDA runtime directly and is not covered by this header.
#pragma once

#if defined(__MUSACC__)

// ---- MUSA (UNTESTED) --------------------------------------------------------
#include <musa_bf16.h>
#include <musa_fp16.h>
#include <musa_pipeline.h>
#include <musa_runtime.h>
#define __MUSA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <crt/mma.h>
#undef __MUSA_INCLUDE_COMPILER_INTERNAL_HEADERS__

namespace tcgemm::wmma_port {
namespace api = ::mtmusa::wmma;
inline constexpr int kWarpSize = 128;
}  // namespace tcgemm::wmma_port

// Offsets of the kernel's memory accesses fit in INT_MAX; MUSA-specific
// address-generation path for the shared-memory loads.
#define TCGEMM_WMMA_KERNEL_ATTRS \
  __attribute__((mtgpu_tiny_offset)) __attribute__((mtgpu_enable_ldma_index))
#define TCGEMM_PORT_RUNTIME(name) musa##name
#define TCGEMM_PORT_BLAS(name) mublas##name

namespace tcgemm::wmma_port {
__device__ __forceinline__ void copy_async_16(void* dst, const void* src) {
  __pipeline_memcpy_async(dst, src, 16);
}
__device__ __forceinline__ void copy_async_commit() { __pipeline_commit(); }
template <int kPending>
__device__ __forceinline__ void copy_async_wait() {
  __pipeline_wait_prior(kPending);
}
}  // namespace tcgemm::wmma_port

#else

// ---- CUDA ----------------------------------------------------------------------
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "ptx/cp_async.cuh"

namespace tcgemm::wmma_port {
namespace api = ::nvcuda::wmma;
inline constexpr int kWarpSize = 32;
}  // namespace tcgemm::wmma_port

#define TCGEMM_WMMA_KERNEL_ATTRS
#define TCGEMM_PORT_RUNTIME(name) cuda##name
#define TCGEMM_PORT_BLAS(name) cublas##name

namespace tcgemm::wmma_port {
__device__ __forceinline__ void copy_async_16(void* dst, const void* src) {
  ptx::cp_async_cg_16(dst, src);
}
__device__ __forceinline__ void copy_async_commit() { ptx::cp_async_commit(); }
template <int kPending>
__device__ __forceinline__ void copy_async_wait() {
  ptx::cp_async_wait_group<kPending>();
}
}  // namespace tcgemm::wmma_port

#endif

// ---- the names the kernels use, the same on both ---------------------------------
namespace tcgemm::wmma_port {

using api::accumulator;
using api::col_major;
using api::fill_fragment;
using api::fragment;
using api::load_matrix_sync;
using api::matrix_a;
using api::matrix_b;
using api::mem_col_major;
using api::mma_sync;
using api::store_matrix_sync;

__device__ __forceinline__ void sync_warp() { __syncwarp(); }

}  // namespace tcgemm::wmma_port
