// Device-side element access shared by the reference GEMM and compare():
// any matrix of the public API (dtype, row/column-major, leading dimension)
// read as float at (row, col). Kept deliberately plain: these kernels are the
// yardstick for the optimized ones.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace tcgemm::testing::detail {

// A matrix as a base pointer and a stride per index:
// element (row, col) lives at ptr[row * row_stride + col * col_stride].
struct StridedMatrix {
  const void* ptr = nullptr;
  DType dtype = DType::kBF16;
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 0;
};

inline StridedMatrix strided(const void* ptr, DType dtype, Layout layout, std::int64_t ld) {
  return layout == Layout::kRowMajor ? StridedMatrix{ptr, dtype, ld, 1}
                                     : StridedMatrix{ptr, dtype, 1, ld};
}

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

__device__ __forceinline__ float load_as_float(const StridedMatrix& m, std::int64_t row,
                                               std::int64_t col) {
  const std::int64_t offset = row * m.row_stride + col * m.col_stride;
  switch (m.dtype) {
    case DType::kBF16:
      return to_float(static_cast<const __nv_bfloat16*>(m.ptr)[offset]);
    case DType::kFP16:
      return to_float(static_cast<const __half*>(m.ptr)[offset]);
    case DType::kFP32:
      break;
  }
  return static_cast<const float*>(m.ptr)[offset];
}

}  // namespace tcgemm::testing::detail
