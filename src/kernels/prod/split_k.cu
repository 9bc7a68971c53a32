// The split-K reduction: a bandwidth-bound pass over the fp32 partial sums.
// Each thread owns kVector consecutive rows of one column of C (a column of
// C is contiguous, M elements of every partial slice too), reads them from
// every split in order and writes C once.
#include <algorithm>

#include "kernels/launch.cuh"
#include "kernels/numeric.cuh"
#include "kernels/prod/split_k.h"
#include "ptx/griddep.cuh"

namespace tcgemm::kernels::prod {
namespace {

constexpr int kThreads = 256;
constexpr int kVector = 4;  // rows per thread: one 16-byte load per split
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;

template <typename TOut>
__global__ void __launch_bounds__(kThreads) reduce_kernel(SplitKReduction job) {
  ptx::griddep_wait();  // a dependent launch: the kernel before it is done
  ptx::griddep_launch_dependents();
  const std::int64_t row_groups = (job.m + kVector - 1) / kVector;
  const std::int64_t groups = row_groups * job.n * job.batch_count;
  const std::int64_t slice = job.m * job.n;
  const bool vector_loads = job.m % kVector == 0;
  for (std::int64_t g = std::int64_t{blockIdx.x} * kThreads + threadIdx.x; g < groups;
       g += std::int64_t{gridDim.x} * kThreads) {
    const std::int64_t column = g / row_groups;  // over every batch entry's columns
    const std::int64_t row0 = (g - column * row_groups) * kVector;
    const std::int64_t batch = column / job.n;
    const std::int64_t col = column - batch * job.n;
    const float* p = job.partials + batch * job.splits * slice + col * job.m + row0;
    float sum[kVector] = {};
    for (int s = 0; s < job.splits; ++s, p += slice) {
      if (vector_loads) {
        const float4 v = *reinterpret_cast<const float4*>(p);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
      } else {
#pragma unroll
        for (int i = 0; i < kVector; ++i) {
          if (row0 + i < job.m) sum[i] += p[i];
        }
      }
    }
    TOut* c = static_cast<TOut*>(job.c) + batch * job.stride_c + col * job.ldc + row0;
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      if (row0 + i < job.m) {
        float value = job.alpha * sum[i];
        if (job.beta != 0.0f) value += job.beta * to_float(c[i]);
        c[i] = from_float<TOut>(value);
      }
    }
  }
}

template <typename TOut>
Status launch_for(const SplitKReduction& job, cudaStream_t stream) {
  const std::int64_t groups = (job.m + kVector - 1) / kVector * job.n * job.batch_count;
  const auto blocks =
      static_cast<unsigned>(std::min((groups + kThreads - 1) / kThreads, kMaxBlocks));
  return launch_dependent_kernel(&reduce_kernel<TOut>, "prod split-K reduction", dim3(blocks),
                                 kThreads, 0, 1, stream, job);
}

}  // namespace

Status launch_split_k_reduction(const SplitKReduction& job, cudaStream_t stream) {
  return visit_dtype(
      job.c_dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(job, stream); });
}

}  // namespace tcgemm::kernels::prod
