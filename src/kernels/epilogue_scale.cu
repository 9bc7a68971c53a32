// C = beta * C: what a GEMM with K == 0 computes (BLAS semantics).
#include <string>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/numeric.cuh"

namespace tcgemm::kernels {
namespace {

constexpr int kThreads = 256;

// One thread per element of one batch entry (blockIdx.y), grid-stride over
// the rows x cols elements in storage order.
template <typename T>
__global__ void scale_c_kernel(T* c, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                               std::int64_t stride, float beta) {
  T* entry = c + static_cast<std::int64_t>(blockIdx.y) * stride;
  const std::int64_t count = rows * cols;
  for (std::int64_t i = blockIdx.x * std::int64_t{kThreads} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * kThreads) {
    T& x = entry[(i / rows) * ld + i % rows];
    x = beta == 0.0f ? from_float<T>(0.0f) : from_float<T>(beta * to_float(x));
  }
}

}  // namespace

Status launch_scale_c(const GemmArgs& args) {
  // In storage order a row-major M x N matrix is N-contiguous "rows" of M lines.
  const bool col_major = args.c.layout == Layout::kColMajor;
  const std::int64_t rows = col_major ? args.m : args.n;
  const std::int64_t cols = col_major ? args.n : args.m;
  constexpr std::int64_t kMaxBlocks = 4096;
  constexpr std::int64_t kMaxBatchPerLaunch = 65535;  // gridDim.y limit
  const std::int64_t blocks = std::min(kMaxBlocks, (rows * cols + kThreads - 1) / kThreads);
  return visit_dtype(args.c.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* c = static_cast<T*>(args.c.ptr);
    for (std::int64_t first = 0; first < args.batch_count; first += kMaxBatchPerLaunch) {
      const auto batches =
          static_cast<unsigned>(std::min(kMaxBatchPerLaunch, args.batch_count - first));
      const Status status =
          launch_kernel(&scale_c_kernel<T>, "scale_c", dim3(static_cast<unsigned>(blocks), batches),
                        kThreads, 0, 1, args.stream, c + first * args.c.stride, rows, cols,
                        args.c.ld, args.c.stride, args.beta);
      if (!status.ok()) return status;
    }
    return Status::success();
  });
}

}  // namespace tcgemm::kernels
