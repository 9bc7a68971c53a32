// Verification toolkit shared by tcgemm-bench and the GPU tests.
//
// Everything here is independent of the optimized kernels: the reference GEMM
// is a plain one-thread-per-output kernel accumulating in fp32, cuBLAS is a
// second opinion, and the comparison reads every element of C (so a poisoned,
// unwritten element fails). See docs/benchmarking.md, "How it verifies".
#pragma once

#include <tcgemm/tcgemm.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

// Throws tcgemm::testing::CudaError with file:line and the CUDA error string;
// for tools and tests only (the library itself returns a Status instead). A
// GoogleTest test reports the exception as a failure; tcgemm-bench reports it
// and exits with status 1.
#define TCGEMM_CHECK_CUDA(expr)                                                      \
  do {                                                                               \
    const cudaError_t tcgemm_err_ = (expr);                                          \
    if (tcgemm_err_ != cudaSuccess) {                                                \
      throw ::tcgemm::testing::CudaError(std::string(__FILE__) + ":" +               \
                                         std::to_string(__LINE__) + ": " + #expr +   \
                                         " failed: " + cudaGetErrorString(tcgemm_err_)); \
    }                                                                                \
  } while (0)

namespace tcgemm::testing {

// A failed CUDA call in the verification toolkit, the bench or the tests.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What DeviceBuffer throws when cudaMalloc fails: the message names the byte
// count and the CUDA error. error() is cudaErrorMemoryAllocation when the
// device is merely out of memory, which leaves the context usable; any other
// code is a failure unrelated to this request (no device, or a context an
// earlier error has broken).
class DeviceAllocError : public std::runtime_error {
 public:
  DeviceAllocError(std::size_t bytes, cudaError_t error);

  std::size_t bytes() const { return bytes_; }
  cudaError_t error() const { return error_; }

 private:
  std::size_t bytes_;
  cudaError_t error_;
};

// Owning device allocation (cudaMalloc / cudaFree), move-only. The
// constructor throws DeviceAllocError when the allocation fails, after
// clearing the runtime's last error so later cudaGetLastError() checks do not
// report this failure again.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Elements a matrix of rows x cols with this layout and ld spans
// (the last element's index + 1); 0 for an empty matrix.
std::int64_t span_elements(std::int64_t rows, std::int64_t cols, Layout layout,
                           std::int64_t ld);

// Fills `count` elements of `dtype` with normal(0, 1) values drawn from a
// counter-based generator: the same (seed, index) gives the same value.
void fill_normal(void* ptr, DType dtype, std::int64_t count, std::uint64_t seed,
                 cudaStream_t stream = nullptr);

// Fills `count` elements with integers uniform in {-3, ..., -1, 1, ..., 3}
// (no zeros), from the same kind of counter-based generator: on such inputs
// every fp32 sum of a GEMM with K up to about 10^6 is exact, so C must equal
// the reference rounded to C's dtype element for element
// (ErrorStats::mismatches).
void fill_small_integers(void* ptr, DType dtype, std::int64_t count, std::uint64_t seed,
                         cudaStream_t stream = nullptr);

// Whether a GEMM on fill_small_integers operands has an exact fp32
// reference: alpha and beta integers of magnitude at most 4 and every
// partial sum (at most 9 K |alpha| + 3 |beta|) under 2^24.
bool exact_on_small_integers(const GemmArgs& args);

// Fills `count` elements with a NaN bit pattern, so any element a kernel
// fails to write is caught by compare().
void fill_poison(void* ptr, DType dtype, std::int64_t count, cudaStream_t stream = nullptr);

// ref (fp32, column-major M x N, ld = M) = alpha * A * B + beta * C, reading A,
// B and (when beta != 0) C as described by args, for batch entry 0 only.
// One thread per output element, fp32 accumulation, any layout and dtype.
void reference_gemm(const GemmArgs& args, float* ref, cudaStream_t stream = nullptr);

// cuBLAS's name for a dtype (CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F).
cudaDataType_t cuda_type(DType dtype);

// The same problem through cublasGemmEx (CUBLAS_COMPUTE_32F, default algo),
// mapping row-major operands onto transposes. Returns the cuBLAS status.
cublasStatus_t cublas_gemm(cublasHandle_t handle, const GemmArgs& args);

struct ErrorStats {
  double rel_fro = 0.0;        // ||C - ref||_F / ||ref||_F
  double max_abs = 0.0;        // max |C - ref|
  std::int64_t max_row = -1;   // where max_abs occurs
  std::int64_t max_col = -1;
  std::int64_t nonfinite = 0;  // elements of C that are NaN or Inf (unwritten or broken)
  // Finite elements of C that differ from the reference rounded to C's dtype.
  // Meaningful where the reference is exact (small-integer inputs, integer
  // alpha and beta: fill_small_integers); then it must be 0.
  std::int64_t mismatches = 0;
  bool passed(double tolerance) const { return nonfinite == 0 && rel_fro < tolerance; }
};

// Compares every element of args.c (batch entry 0, its dtype/layout/ld)
// against ref (fp32 column-major, ld = M). Synchronizes `stream`.
ErrorStats compare(const GemmArgs& args, const float* ref, cudaStream_t stream = nullptr);

// Tolerance on rel_fro for an output dtype: 1e-2 for bf16/fp16, 1e-4 for fp32
// (docs/benchmarking.md).
double tolerance_for(DType output);

// True when the `bytes` at device pointers a and b are identical.
bool bitwise_equal(const void* a, const void* b, std::size_t bytes);

// C = alpha * A * B + beta * C in double on the CPU, for small problems in
// tests. Inputs and C are host arrays of floats holding the (rounded) values,
// each in the layout and ld given by args; the result is column-major, ld = M.
std::vector<double> cpu_reference_gemm(const GemmArgs& args, const std::vector<float>& a,
                                       const std::vector<float>& b,
                                       const std::vector<float>& c);

}  // namespace tcgemm::testing
