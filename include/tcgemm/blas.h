// tcgemm in BLAS's terms: cublasGemmEx's and cublasGemmStridedBatchedEx's
// arguments, for code that calls cuBLAS today.
//
// Every matrix is column-major, as in BLAS; op(A) and op(B) say whether the
// stored matrix is used as it is (N) or transposed (T):
//
//   C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C
//   A is m x k, lda >= max(1, m), for N; k x m, lda >= max(1, k), for T
//   B is k x n, ldb >= max(1, k), for N; n x k, ldb >= max(1, n), for T
//   ldc >= max(1, m)
//
// A call such as
//
//   cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha,
//                A, CUDA_R_16BF, lda, B, CUDA_R_16BF, ldb, &beta,
//                C, CUDA_R_16BF, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
//
// becomes
//
//   tcgemm::blas::gemm_ex(tcgemm::blas::Op::kT, tcgemm::blas::Op::kN, m, n, k, alpha,
//                         A, tcgemm::DType::kBF16, lda, B, tcgemm::DType::kBF16, ldb,
//                         beta, C, tcgemm::DType::kBF16, ldc, stream);
//
// with alpha and beta by value (fp32, cuBLAS's CUBLAS_COMPUTE_32F) and the
// stream instead of a handle. Op's values are cuBLAS's (CUBLAS_OP_N = 0,
// CUBLAS_OP_T = 1, CUBLAS_OP_C = 2), so a cublasOperation_t converts with a
// static_cast; C (conjugate transpose) is T for these real types. Inputs
// bf16 or fp16 (both the same), C bf16, fp16 or fp32, as tcgemm::gemm takes
// (a superset of cuBLAS's pairs: bf16 into fp16 C, say).
//
// Where tcgemm refuses what cuBLAS documents no check for: a negative
// stride with batch_count > 1, and a non-finite alpha or beta, are
// kInvalidValue. batch_count 0 runs nothing and succeeds, as in cuBLAS,
// when the other arguments but the pointers are valid; a negative one is
// kInvalidValue.
//
// Each call maps its arguments onto tcgemm::GemmArgs (gemm_ex_args) and
// runs tcgemm::gemm: the same kernels, results, errors and quick returns
// (tcgemm.h). op(A) is A as tcgemm sees it: an A used transposed is an
// m x k row-major matrix with ld = lda, which an error message describes
// so; lda, ldb and ldc keep their names, A, B, C and strideA, strideB,
// strideC are a, b, c and a.stride, b.stride, c.stride. A transa or transb
// that is not an Op is kInvalidValue naming it. The *_args forms give the
// GemmArgs for tcgemm::describe, tcgemm::workspace_size and
// tcgemm::GemmPlan::create.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm::blas {

enum class Op : int { kN = 0, kT = 1, kC = 2 };

// The GemmArgs gemm_ex runs (on `stream`, no workspace, batch_count 1), or
// kInvalidValue naming transa or transb when it is not an Op. The arguments
// are not otherwise checked: tcgemm::validate and tcgemm::gemm do that.
Status gemm_ex_args(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
                    float alpha, const void* a, DType a_type, std::int64_t lda, const void* b,
                    DType b_type, std::int64_t ldb, float beta, void* c, DType c_type,
                    std::int64_t ldc, cudaStream_t stream, GemmArgs& args);

// C = alpha * op(A) * op(B) + beta * C, as cublasGemmEx with
// CUBLAS_COMPUTE_32F computes it; see tcgemm::gemm for the errors.
Status gemm_ex(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const void* a, DType a_type, std::int64_t lda, const void* b, DType b_type,
               std::int64_t ldb, float beta, void* c, DType c_type, std::int64_t ldc,
               cudaStream_t stream = nullptr, const GemmOptions& options = {});

// The strided batched forms (cublasGemmStridedBatchedEx): batch_count
// problems, entry i of each matrix stride_a / stride_b / stride_c elements
// after entry i - 1 (0 on A or B shares one matrix; C's entries must not
// overlap). gemm_strided_batched_ex with batch_count 0 runs nothing: it
// returns what tcgemm::validate says of the same arguments with one entry
// and any pointers (sizes, leading dimensions, dtypes, alpha, beta); the *_args
// form then gives GemmArgs with batch_count 0, which tcgemm::validate
// refuses.
Status gemm_strided_batched_ex_args(Op transa, Op transb, std::int64_t m, std::int64_t n,
                                    std::int64_t k, float alpha, const void* a, DType a_type,
                                    std::int64_t lda, std::int64_t stride_a, const void* b,
                                    DType b_type, std::int64_t ldb, std::int64_t stride_b,
                                    float beta, void* c, DType c_type, std::int64_t ldc,
                                    std::int64_t stride_c, std::int64_t batch_count,
                                    cudaStream_t stream, GemmArgs& args);

Status gemm_strided_batched_ex(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
                               float alpha, const void* a, DType a_type, std::int64_t lda,
                               std::int64_t stride_a, const void* b, DType b_type, std::int64_t ldb,
                               std::int64_t stride_b, float beta, void* c, DType c_type,
                               std::int64_t ldc, std::int64_t stride_c, std::int64_t batch_count,
                               cudaStream_t stream = nullptr, const GemmOptions& options = {});

}  // namespace tcgemm::blas
