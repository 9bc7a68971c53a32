// TMA (Tensor Memory Accelerator) wrappers: cp.async.bulk.tensor, PTX ISA
// 9.7.9.25 ("Data Movement: cp.async.bulk.tensor").
//
// The tensor map (CUtensorMap, 128 bytes) is built on the host by
// cuTensorMapEncodeTiled (src/tensor_map.h) and passed to the kernel as a
// `const __grid_constant__ CUtensorMap` parameter; its generic address is the
// operand these instructions take.
#pragma once

#include "ptx/common.cuh"

#include <cuda.h>

#include <cstdint>

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

// prefetch.tensormap (PTX ISA 9.7.9.26): pulls the 128-byte descriptor into
// the cache ahead of the first load that uses it.
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map))
               : "memory");
}

}  // namespace tcgemm::ptx
