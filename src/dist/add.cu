#include "dist/add.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/numeric.cuh"

namespace tcgemm::dist {
namespace {

template <typename T>
__global__ void add_lines_kernel(T* out, std::int64_t ld_out, const T* x, const T* y,
                                 std::int64_t inner, std::int64_t count, float beta) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::int64_t line = i / inner;
    T* const dst = out + line * ld_out + (i - line * inner);
    float value = to_float(x[i]) + to_float(y[i]);
    if (beta != 0.0f) value += beta * to_float(*dst);
    *dst = from_float<T>(value);
  }
}

template <typename T>
Status launch(void* out, std::int64_t ld_out, const void* x, const void* y, std::int64_t inner,
              std::int64_t outer, float beta, cudaStream_t stream) {
  constexpr int kThreads = 256;
  // Grid-stride: a grid of at most 2^16 blocks covers any count.
  constexpr std::int64_t kMaxBlocks = 1 << 16;
  const std::int64_t count = inner * outer;
  if (count == 0) return Status::success();
  const auto blocks =
      static_cast<unsigned>(std::min((count + kThreads - 1) / kThreads, kMaxBlocks));
  add_lines_kernel<T>
      <<<blocks, kThreads, 0, stream>>>(static_cast<T*>(out), ld_out, static_cast<const T*>(x),
                                        static_cast<const T*>(y), inner, count, beta);
  if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
    return {StatusCode::kCudaError,
            std::string("gemm_reduce_scatter: the sum kernel's launch failed: ") +
                cudaGetErrorString(err)};
  }
  return Status::success();
}

}  // namespace

Status add_lines(DType dtype, void* out, std::int64_t ld_out, const void* x, const void* y,
                 std::int64_t inner, std::int64_t outer, float beta, cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch<T>(out, ld_out, x, y, inner, outer, beta, stream);
  });
}

}  // namespace tcgemm::dist
