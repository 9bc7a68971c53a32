// tcgemm::blas: cuBLAS's GEMM arguments mapped onto tcgemm::GemmArgs
// (include/tcgemm/blas.h).
#include <tcgemm/blas.h>

#include <cstdint>
#include <string>

#include "dispatch.h"

namespace tcgemm::blas {
namespace {

bool known(Op op) { return op == Op::kN || op == Op::kT || op == Op::kC; }

// A column-major matrix used as it is (N), or transposed (T, C): the
// transpose of a column-major matrix is the same memory read row-major.
Layout layout_of(Op op) { return op == Op::kN ? Layout::kColMajor : Layout::kRowMajor; }

Status bad_op(const char* name, Op op) {
  return {StatusCode::kInvalidValue, std::string(name) + " is " +
                                         std::to_string(static_cast<int>(op)) +
                                         ", not an Op (N = 0, T = 1, C = 2)"};
}

}  // namespace

Status gemm_strided_batched_ex_args(Op transa, Op transb, std::int64_t m, std::int64_t n,
                                    std::int64_t k, float alpha, const void* a, DType a_type,
                                    std::int64_t lda, std::int64_t stride_a, const void* b,
                                    DType b_type, std::int64_t ldb, std::int64_t stride_b,
                                    float beta, void* c, DType c_type, std::int64_t ldc,
                                    std::int64_t stride_c, std::int64_t batch_count,
                                    cudaStream_t stream, GemmArgs& args) {
  if (!known(transa)) return bad_op("transa", transa);
  if (!known(transb)) return bad_op("transb", transb);
  args = GemmArgs{};
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {a, a_type, layout_of(transa), lda, stride_a};
  args.b = {b, b_type, layout_of(transb), ldb, stride_b};
  args.c = {c, c_type, Layout::kColMajor, ldc, stride_c};
  args.alpha = alpha;
  args.beta = beta;
  args.batch_count = batch_count;
  args.stream = stream;
  return Status::success();
}

Status gemm_ex_args(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
                    float alpha, const void* a, DType a_type, std::int64_t lda, const void* b,
                    DType b_type, std::int64_t ldb, float beta, void* c, DType c_type,
                    std::int64_t ldc, cudaStream_t stream, GemmArgs& args) {
  return gemm_strided_batched_ex_args(transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type,
                                      ldb, 0, beta, c, c_type, ldc, 0, 1, stream, args);
}

Status gemm_strided_batched_ex(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
                               float alpha, const void* a, DType a_type, std::int64_t lda,
                               std::int64_t stride_a, const void* b, DType b_type, std::int64_t ldb,
                               std::int64_t stride_b, float beta, void* c, DType c_type,
                               std::int64_t ldc, std::int64_t stride_c, std::int64_t batch_count,
                               cudaStream_t stream, const GemmOptions& options) {
  // cuBLAS's rule, batchCount >= 0 (tcgemm::gemm's own is >= 1: 0 is handled
  // below).
  if (batch_count < 0) {
    return {StatusCode::kInvalidValue,
            "batch_count=" + std::to_string(batch_count) + " is negative (it must be >= 0)"};
  }
  GemmArgs args;
  if (Status s = gemm_strided_batched_ex_args(transa, transb, m, n, k, alpha, a, a_type, lda,
                                              stride_a, b, b_type, ldb, stride_b, beta, c, c_type,
                                              ldc, stride_c, batch_count, stream, args);
      !s.ok()) {
    return s;
  }
  if (batch_count == 0) {
    // No batch entries, nothing to run (cuBLAS returns success too, where
    // tcgemm::gemm asks for batch_count >= 1); the other arguments are
    // still checked, as cuBLAS checks its sizes and leading dimensions, and
    // the options, as gemm checks them on its quick returns. Not the
    // pointers, which a call with no entries need not give.
    GemmArgs one = args;
    one.batch_count = 1;
    void* const stand_in = reinterpret_cast<void*>(std::uintptr_t{256});
    one.a.ptr = stand_in;
    one.b.ptr = stand_in;
    one.c.ptr = stand_in;
    if (Status s = validate(one); !s.ok()) return s;
    const KernelInfo* forced = nullptr;
    return options_kernel(options, &forced);
  }
  return gemm(args, options);
}

Status gemm_ex(Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const void* a, DType a_type, std::int64_t lda, const void* b, DType b_type,
               std::int64_t ldb, float beta, void* c, DType c_type, std::int64_t ldc,
               cudaStream_t stream, const GemmOptions& options) {
  return gemm_strided_batched_ex(transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb,
                                 0, beta, c, c_type, ldc, 0, 1, stream, options);
}

}  // namespace tcgemm::blas
