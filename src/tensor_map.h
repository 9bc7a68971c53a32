// Host-side TMA descriptor construction (cuTensorMapEncodeTiled).
//
// The driver function is looked up once at run time through
// cudaGetDriverEntryPointByVersion, so the library links only the CUDA
// runtime, not libcuda.
#pragma once

#include <cuda.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm {

// A 2-D view of a matrix for TMA: `inner` contiguous elements per line,
// `outer` lines `ld` elements apart. The box is box_inner x box_outer
// elements; with 128-byte swizzle box_inner * element size must be <= 128.
struct TensorMap2d {
  const void* base = nullptr;
  DType dtype = DType::kBF16;
  std::uint64_t inner = 0;
  std::uint64_t outer = 0;
  std::uint64_t ld = 0;
  std::uint32_t box_inner = 0;
  std::uint32_t box_outer = 0;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
};

// A 3-D view: `batch` matrices like TensorMap2d's, `batch_stride` elements
// apart (the production kernels' strided batches; batch == 1 for one
// matrix, when batch_stride is not used). The box is one matrix deep.
struct TensorMap3d {
  const void* base = nullptr;
  DType dtype = DType::kBF16;
  std::uint64_t inner = 0;
  std::uint64_t outer = 0;
  std::uint64_t batch = 1;
  std::uint64_t ld = 0;
  std::uint64_t batch_stride = 0;
  std::uint32_t box_inner = 0;
  std::uint32_t box_outer = 0;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
};

// TMA's addressing rules (PTX ISA 5.5.3, cuTensorMapEncodeTiled): a
// 16-byte-aligned base, global strides that are multiples of 16 bytes and
// under 2^40 bytes, dimensions up to 2^32 elements.
inline constexpr std::uint64_t kTmaAlignmentBytes = 16;
inline constexpr std::uint64_t kTmaMaxStrideBytes = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kTmaMaxGlobalDim = std::uint64_t{1} << 32;

constexpr bool tma_stride_ok(std::uint64_t bytes) {
  return bytes % kTmaAlignmentBytes == 0 && bytes < kTmaMaxStrideBytes;
}

// The bytes a TMA load's L2 miss is promoted to for a map whose rows are
// `pitch_bytes` apart: 256, or 128 where the pitch is at least 256 bytes
// and not a multiple of 256 (most rows then start off a 128-byte line, and
// 256-byte fetches cost a padded ld such as 4104 16% on the H100:
// tensor_map.cpp).
constexpr std::uint64_t l2_promotion_bytes(std::uint64_t pitch_bytes) {
  return pitch_bytes >= 256 && pitch_bytes % 256 != 0 ? 128 : 256;
}

// Encodes `view` into *map. Out-of-bounds box elements load as zeros.
// Errors: kNotSupported when the view breaks a TMA rule (base not 16-byte
// aligned, ld * element size not a multiple of 16, a dimension over 2^32),
// kCudaError when the driver entry point is missing or encoding fails.
Status encode_tensor_map(const TensorMap2d& view, CUtensorMap* map);
Status encode_tensor_map_3d(const TensorMap3d& view, CUtensorMap* map);

// Points an encoded map at another base address (cuTensorMapReplaceAddress):
// host-only bit edits, no device access. `base` must be 16-byte aligned.
Status replace_tensor_map_address(CUtensorMap* map, const void* base);

}  // namespace tcgemm
