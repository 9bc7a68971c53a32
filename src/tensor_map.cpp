#include "tensor_map.h"

#include <cuda_runtime_api.h>

#include <string>

namespace tcgemm {
namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

using ReplaceAddressFn = CUresult (*)(CUtensorMap*, void*);

// The driver's entry point `symbol` (ABI version 12000: both tensor-map
// calls date from CUDA 12.0); nullptr when the driver lacks it. The getters
// below look each one up once (function-local statics are thread-safe).
void* driver_entry_point(const char* symbol) {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &ptr, 12000, cudaEnableDefault, &query) ==
          cudaSuccess &&
      query == cudaDriverEntryPointSuccess) {
    return ptr;
  }
  return nullptr;
}

EncodeTiledFn encode_tiled_fn() {
  static const auto fn =
      reinterpret_cast<EncodeTiledFn>(driver_entry_point("cuTensorMapEncodeTiled"));
  return fn;
}

ReplaceAddressFn replace_address_fn() {
  static const auto fn =
      reinterpret_cast<ReplaceAddressFn>(driver_entry_point("cuTensorMapReplaceAddress"));
  return fn;
}

CUtensorMapDataType tma_dtype(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::kFP16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::kFP32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

}  // namespace

namespace {

// The rules and the driver call both ranks share; dims[0] is contiguous,
// strides in elements (strides[i] between consecutive indices of dims[i + 1]).
Status encode(const void* base, DType dtype, std::uint32_t rank, const std::uint64_t* dims,
              const std::uint64_t* strides, const std::uint32_t* box, CUtensorMapSwizzle swizzle,
              CUtensorMap* map) {
  const std::uint64_t elem = size_of(dtype);
  if (reinterpret_cast<std::uintptr_t>(base) % kTmaAlignmentBytes != 0) {
    return {StatusCode::kNotSupported, "TMA needs a 16-byte aligned base pointer"};
  }
  for (std::uint32_t i = 0; i + 1 < rank; ++i) {
    if ((strides[i] * elem) % kTmaAlignmentBytes != 0) {
      return {StatusCode::kNotSupported,
              "TMA needs strides that are multiples of 16 bytes (stride " + std::to_string(i) +
                  " = " + std::to_string(strides[i]) + " elements)"};
    }
    if (strides[i] * elem >= kTmaMaxStrideBytes) {
      return {StatusCode::kNotSupported, "TMA needs strides under 2^40 bytes (stride " +
                                             std::to_string(i) + " = " +
                                             std::to_string(strides[i]) + " elements)"};
    }
  }
  for (std::uint32_t i = 0; i < rank; ++i) {
    if (dims[i] > kTmaMaxGlobalDim) {
      return {StatusCode::kNotSupported, "TMA dimensions are limited to 2^32 elements"};
    }
  }
  // L2 promotion: a miss fetches 256 bytes, unless the row pitch is at
  // least that and not a multiple of it; then 128. A box row is 128 bytes
  // (64 16-bit elements), and at such a pitch most rows start off a
  // 128-byte line: on the H100, 4096^3 with ld = 4104 (a pitch 16 bytes
  // past 8192) took 0.217 ms with 256-byte promotion and 0.187 with
  // 128-byte or none (0.176 at ld 4096; cuBLAS 0.183-0.186), its L2 read
  // requests 2.2x and DRAM reads 1.37x those at ld 4096 (ncu); at ld 4112
  // (32 bytes past) 256-byte promotion cost 1%, at ld 4096 and 4160 (a
  // multiple of 256 bytes, and of 128 only) nothing
  // (bench/results/h100/2026-12-06-s15/ld/). So 256 stays only where every
  // row starts at the same offset in its 256 bytes. Rows narrower than 256
  // bytes lie packed, and a 256-byte fetch reads on into the next ones.
  const std::uint64_t pitch = rank > 1 ? strides[0] * elem : 0;
  const CUtensorMapL2promotion promotion = l2_promotion_bytes(pitch) == 128
                                               ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                               : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  EncodeTiledFn encode_fn = encode_tiled_fn();
  if (encode_fn == nullptr) {
    return {StatusCode::kCudaError, "cuTensorMapEncodeTiled is not available from the CUDA driver"};
  }
  constexpr std::uint32_t kMaxRank = 3;
  cuuint64_t global_dims[kMaxRank];
  cuuint64_t global_strides[kMaxRank - 1];  // bytes
  cuuint32_t box_dims[kMaxRank];
  cuuint32_t element_strides[kMaxRank];
  for (std::uint32_t i = 0; i < rank; ++i) {
    global_dims[i] = dims[i];
    box_dims[i] = box[i];
    element_strides[i] = 1;
    if (i + 1 < rank) global_strides[i] = strides[i] * elem;
  }
  const CUresult result =
      encode_fn(map, tma_dtype(dtype), rank, const_cast<void*>(base), global_dims, global_strides,
                box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return {StatusCode::kCudaError, "cuTensorMapEncodeTiled failed with CUresult " +
                                        std::to_string(static_cast<int>(result))};
  }
  return Status::success();
}

}  // namespace

Status encode_tensor_map(const TensorMap2d& view, CUtensorMap* map) {
  const std::uint64_t dims[2] = {view.inner, view.outer};
  const std::uint64_t strides[1] = {view.ld};
  const std::uint32_t box[2] = {view.box_inner, view.box_outer};
  return encode(view.base, view.dtype, 2, dims, strides, box, view.swizzle, map);
}

Status encode_tensor_map_3d(const TensorMap3d& view, CUtensorMap* map) {
  const std::uint64_t dims[3] = {view.inner, view.outer, view.batch};
  // A one-entry batch dimension is never stepped along; any valid stride does.
  const std::uint64_t strides[2] = {view.ld, view.batch > 1 ? view.batch_stride : view.ld};
  const std::uint32_t box[3] = {view.box_inner, view.box_outer, 1};
  return encode(view.base, view.dtype, 3, dims, strides, box, view.swizzle, map);
}

Status replace_tensor_map_address(CUtensorMap* map, const void* base) {
  if (reinterpret_cast<std::uintptr_t>(base) % kTmaAlignmentBytes != 0) {
    return {StatusCode::kInvalidValue, "TMA needs a 16-byte aligned base pointer"};
  }
  ReplaceAddressFn fn = replace_address_fn();
  if (fn == nullptr) {
    return {StatusCode::kCudaError,
            "cuTensorMapReplaceAddress is not available from the CUDA driver"};
  }
  const CUresult r = fn(map, const_cast<void*>(base));
  if (r != CUDA_SUCCESS) {
    return {StatusCode::kCudaError, "cuTensorMapReplaceAddress failed with CUresult " +
                                        std::to_string(static_cast<int>(r))};
  }
  return Status::success();
}

}  // namespace tcgemm
