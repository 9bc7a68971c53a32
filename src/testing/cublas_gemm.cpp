// cuBLAS as the second opinion and the speed baseline: the same problem,
// the same buffers, through cublasGemmEx with fp32 compute.
//
// cuBLAS sees every matrix as column-major. A row-major R x C matrix with
// leading dimension ld is, read column-major, its C x R transpose with the same
// ld; so a row-major A or B becomes op = T. A row-major C is handled by
// computing its transpose instead: C^T = B^T * A^T, i.e. the operands swap
// places, M and N swap, and each operand's op flips.
#include "testing/testing.h"

#include <climits>
#include <utility>

namespace tcgemm::testing {

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kFP16:
      return CUDA_R_16F;
    case DType::kFP32:
      break;
  }
  return CUDA_R_32F;
}

namespace {

bool fits_int(std::int64_t v) { return v >= 0 && v <= INT_MAX; }

// One operand as cuBLAS takes it.
struct BlasOperand {
  const void* ptr;
  cudaDataType_t type;
  int ld;
  long long stride;
  cublasOperation_t op;
};

// `transposed` asks for the operand's transpose (the C^T case); a row-major
// matrix is already its transpose in column-major terms.
BlasOperand blas_operand(const MatrixRef& m, bool transposed) {
  const bool row_major = m.layout == Layout::kRowMajor;
  return {m.ptr, cuda_type(m.dtype), static_cast<int>(m.ld), static_cast<long long>(m.stride),
          row_major != transposed ? CUBLAS_OP_T : CUBLAS_OP_N};
}

}  // namespace

cublasStatus_t cublas_gemm(cublasHandle_t handle, const GemmArgs& args) {
  if (!fits_int(args.m) || !fits_int(args.n) || !fits_int(args.k) || !fits_int(args.a.ld) ||
      !fits_int(args.b.ld) || !fits_int(args.c.ld) || !fits_int(args.batch_count)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (const cublasStatus_t s = cublasSetStream(handle, args.stream); s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }

  const bool c_row_major = args.c.layout == Layout::kRowMajor;
  BlasOperand first = blas_operand(args.a, c_row_major);
  BlasOperand second = blas_operand(args.b, c_row_major);
  int m = static_cast<int>(args.m);
  int n = static_cast<int>(args.n);
  if (c_row_major) {
    std::swap(first, second);
    std::swap(m, n);
  }
  const int k = static_cast<int>(args.k);
  const cudaDataType_t c_type = cuda_type(args.c.dtype);
  const int ldc = static_cast<int>(args.c.ld);

  if (args.batch_count == 1) {
    return cublasGemmEx(handle, first.op, second.op, m, n, k, &args.alpha, first.ptr, first.type,
                        first.ld, second.ptr, second.type, second.ld, &args.beta, args.c.ptr,
                        c_type, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  return cublasGemmStridedBatchedEx(
      handle, first.op, second.op, m, n, k, &args.alpha, first.ptr, first.type, first.ld,
      first.stride, second.ptr, second.type, second.ld, second.stride, &args.beta, args.c.ptr,
      c_type, ldc, static_cast<long long>(args.c.stride), static_cast<int>(args.batch_count),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace tcgemm::testing
