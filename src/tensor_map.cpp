#include "tensor_map.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

namespace tcgemm {
namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// TMA hardware rules (PTX ISA 5.5.3, CUDA driver API cuTensorMapEncodeTiled).
constexpr std::uint64_t kGlobalAlignmentBytes = 16;
constexpr std::uint64_t kStrideMultipleBytes = 16;
constexpr std::uint64_t kMaxGlobalDim = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxStrideBytes = std::uint64_t{1} << 40;

EncodeTiledFn encode_tiled_fn() {
  static EncodeTiledFn fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI version of cuTensorMapEncodeTiled (introduced in CUDA 12.0).
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault,
                                         &query) == cudaSuccess &&
        query == cudaDriverEntryPointSuccess) {
      fn = reinterpret_cast<EncodeTiledFn>(ptr);
    }
  });
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

Status encode_tensor_map(const TensorMap2d& view, CUtensorMap* map) {
  const std::uint64_t elem = size_of(view.dtype);
  if (reinterpret_cast<std::uintptr_t>(view.base) % kGlobalAlignmentBytes != 0) {
    return {StatusCode::kNotSupported, "TMA needs a 16-byte aligned base pointer"};
  }
  if ((view.ld * elem) % kStrideMultipleBytes != 0) {
    return {StatusCode::kNotSupported,
            "TMA needs a leading dimension that is a multiple of 16 bytes (ld=" +
                std::to_string(view.ld) + ")"};
  }
  if (view.ld * elem >= kMaxStrideBytes) {
    return {StatusCode::kNotSupported,
            "TMA needs a leading dimension under 2^40 bytes (ld=" + std::to_string(view.ld) + ")"};
  }
  if (view.inner > kMaxGlobalDim || view.outer > kMaxGlobalDim) {
    return {StatusCode::kNotSupported, "TMA dimensions are limited to 2^32 elements"};
  }
  EncodeTiledFn encode = encode_tiled_fn();
  if (encode == nullptr) {
    return {StatusCode::kCudaError, "cuTensorMapEncodeTiled is not available from the CUDA driver"};
  }
  const cuuint64_t dims[2] = {view.inner, view.outer};
  const cuuint64_t strides[1] = {view.ld * elem};  // bytes; dimension 0 is contiguous
  const cuuint32_t box[2] = {view.box_inner, view.box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result =
      encode(map, tma_dtype(view.dtype), 2, const_cast<void*>(view.base), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, view.swizzle,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return {StatusCode::kCudaError, "cuTensorMapEncodeTiled failed with CUresult " +
                                        std::to_string(static_cast<int>(result))};
  }
  return Status::success();
}

}  // namespace tcgemm
