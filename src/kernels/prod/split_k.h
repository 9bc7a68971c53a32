// The reduction after a split-K launch of the production kernel (split_k.cu).
#pragma once

#include <cuda_runtime_api.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm::kernels::prod {

// C[b] = alpha * (P[b * splits] + ... + P[b * splits + splits - 1]) + beta * C[b]
// for every batch entry b, the partial sums P[e] fp32, column-major M x N,
// dense (ld M, M * N apart), summed in split order (the same bits on every
// run). C column-major with ldc and stride_c; beta == 0 does not read C.
struct SplitKReduction {
  const float* partials = nullptr;
  int splits = 1;
  void* c = nullptr;
  DType c_dtype = DType::kBF16;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t ldc = 0;
  std::int64_t stride_c = 0;
  std::int64_t batch_count = 1;
  float alpha = 1.0f;
  float beta = 0.0f;
};

Status launch_split_k_reduction(const SplitKReduction& job, cudaStream_t stream);

}  // namespace tcgemm::kernels::prod
