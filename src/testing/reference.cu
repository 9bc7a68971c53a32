// The reference GEMM: one thread per output element, a plain fp32 dot product
// over K. No tiling, no shared memory, no tensor cores: it shares nothing with
// the kernels it checks, and its correctness can be read off the page.
#include "testing/element_access.cuh"
#include "testing/testing.h"

#include <algorithm>

namespace tcgemm::testing {
namespace {

constexpr int kBlockSide = 16;
// gridDim.y is limited to 65535; the loops below stride over whatever the
// grid does not cover, so both dimensions use the same cap.
constexpr std::int64_t kMaxGridSide = 65535;

// A and B share one input dtype (the API requires it), so the inner loop reads
// them through typed pointers; C is read once per element, through the
// generic loader.
template <typename TIn>
__global__ void reference_kernel(std::int64_t m, std::int64_t n, std::int64_t k,
                                 detail::StridedMatrix a, detail::StridedMatrix b,
                                 detail::StridedMatrix c, float alpha, float beta, float* ref) {
  const auto* a_ptr = static_cast<const TIn*>(a.ptr);
  const auto* b_ptr = static_cast<const TIn*>(b.ptr);
  const std::int64_t col_step = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  const std::int64_t row_step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t col = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; col < n;
       col += col_step) {
    for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         row < m; row += row_step) {
      float acc = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) {
        const float a_val = detail::to_float(a_ptr[row * a.row_stride + p * a.col_stride]);
        const float b_val = detail::to_float(b_ptr[p * b.row_stride + col * b.col_stride]);
        acc = fmaf(a_val, b_val, acc);
      }
      float out = alpha * acc;
      // BLAS semantics: with beta == 0, C is not read (it may hold NaN).
      if (beta != 0.0f) out = fmaf(beta, detail::load_as_float(c, row, col), out);
      ref[row + col * m] = out;
    }
  }
}

}  // namespace

void reference_gemm(const GemmArgs& args, float* ref, cudaStream_t stream) {
  if (args.m <= 0 || args.n <= 0) return;
  const auto a = detail::strided(args.a.ptr, args.a.dtype, args.a.layout, args.a.ld);
  const auto b = detail::strided(args.b.ptr, args.b.dtype, args.b.layout, args.b.ld);
  const auto c = detail::strided(args.c.ptr, args.c.dtype, args.c.layout, args.c.ld);
  const dim3 block(kBlockSide, kBlockSide);
  const dim3 grid(
      static_cast<unsigned>(std::min((args.m + kBlockSide - 1) / kBlockSide, kMaxGridSide)),
      static_cast<unsigned>(std::min((args.n + kBlockSide - 1) / kBlockSide, kMaxGridSide)));
  switch (args.a.dtype) {
    case DType::kBF16:
      reference_kernel<__nv_bfloat16>
          <<<grid, block, 0, stream>>>(args.m, args.n, args.k, a, b, c, args.alpha, args.beta, ref);
      break;
    case DType::kFP16:
      reference_kernel<__half>
          <<<grid, block, 0, stream>>>(args.m, args.n, args.k, a, b, c, args.alpha, args.beta, ref);
      break;
    case DType::kFP32:
      reference_kernel<float>
          <<<grid, block, 0, stream>>>(args.m, args.n, args.k, a, b, c, args.alpha, args.beta, ref);
      break;
  }
  TCGEMM_CHECK_CUDA(cudaGetLastError());
}

}  // namespace tcgemm::testing
