// Element types: conversions to and from fp32, and the DType -> C++ type map.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <tcgemm/tcgemm.h>

namespace tcgemm {

template <typename T>
__host__ __device__ __forceinline__ float to_float(T x) {
  return static_cast<float>(x);
}

template <typename T>
__host__ __device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    return x;
  }
}

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with the C++ type of `dtype`; returns f's result.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBF16:
      return f(TypeTag<__nv_bfloat16>{});
    case DType::kFP16:
      return f(TypeTag<__half>{});
    case DType::kFP32:
      break;
  }
  return f(TypeTag<float>{});
}

}  // namespace tcgemm
