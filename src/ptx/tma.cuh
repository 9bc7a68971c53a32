// TMA (Tensor Memory Accelerator) wrappers: cp.async.bulk.tensor, PTX ISA
// 9.7.9.25 ("Data Movement: cp.async.bulk.tensor").
//
// The tensor map (CUtensorMap, 128 bytes) is built on the host by
// cuTensorMapEncodeTiled (src/tensor_map.h) and passed to the kernel as a
// `const __grid_constant__ CUtensorMap` parameter; its generic address is the
// operand these instructions take.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "ptx/common.cuh"

namespace tcgemm::ptx {

// Loads one 2-D box whose first element is at (inner, outer) — inner is the
// contiguous dimension — into shared memory at `dst`, and signals `bar` with
// complete_tx of the box's full byte size (out-of-bounds elements are filled
// with zeros and still counted). Issued by one thread.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            std::int32_t inner, std::int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(inner), "r"(outer)
      : "memory");
}

// The same load multicast to every CTA of the cluster named in `cta_mask`
// (bit i = cluster rank i): the box lands at the same shared-memory offset in
// each, and each CTA's mbarrier at `bar`'s offset receives complete_tx of the
// box's bytes (PTX ISA 9.7.9.25, .multicast::cluster).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, std::int32_t inner,
                                                      std::int32_t outer, std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(inner), "r"(outer),
      "h"(cta_mask)
      : "memory");
}

// The 3-D forms the production kernels use: (inner, outer, batch), the
// third dimension being the batch entry of a strided batched GEMM.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            std::int32_t inner, std::int32_t outer,
                                            std::int32_t batch) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(inner), "r"(outer),
      "r"(batch)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, std::int32_t inner,
                                                      std::int32_t outer, std::int32_t batch,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(inner), "r"(outer),
      "r"(batch), "h"(cta_mask)
      : "memory");
}

__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src,
                                             std::int32_t inner, std::int32_t outer,
                                             std::int32_t batch) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_addr(src)), "r"(inner), "r"(outer), "r"(batch)
      : "memory");
}

// Stores one 2-D box from shared memory at `src` to the tensor at (inner,
// outer), clipping out-of-bounds elements, as part of the issuing thread's
// current bulk async-group (PTX ISA 9.7.9.25, .global.shared::cta.bulk_group).
// Shared memory written by ordinary stores must be fenced to the async proxy
// first (fence_proxy_async_shared).
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src,
                                             std::int32_t inner, std::int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_addr(src)), "r"(inner), "r"(outer)
      : "memory");
}

// cp.async.bulk.commit_group (PTX ISA 9.7.9.27): closes the issuing thread's
// bulk async-group.
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// cp.async.bulk.wait_group.read N (PTX ISA 9.7.9.28): the issuing thread waits
// until at most N of its bulk groups still read their shared-memory source, so
// the source may be overwritten.
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// cp.async.bulk.wait_group N: waits until the groups' writes are complete.
template <int kPending>
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// fence.proxy.async.shared::cta (PTX ISA 9.7.13.4, membar / fence.proxy): orders
// this thread's ordinary (generic-proxy) shared-memory writes before later
// async-proxy accesses such as a TMA store reading them.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// prefetch.tensormap (PTX ISA 9.7.9.26): pulls the 128-byte descriptor into
// the cache ahead of the first load that uses it.
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

}  // namespace tcgemm::ptx
