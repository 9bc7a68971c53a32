// compare(): every element of C against the fp32 reference, on the GPU (a
// 16384 x 28672 output is 470M elements; a host loop would dominate a bench
// run). Each block reduces its share to one Partial; the host adds the few
// partials in a fixed order, so the result is deterministic.
#include "testing/element_access.cuh"
#include "testing/testing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tcgemm::testing {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1024;

// Trivially constructible (no member initializers): it lives in __shared__.
struct Partial {
  double err2;             // sum of (c - ref)^2 over finite c
  double ref2;             // sum of ref^2 over finite c
  double max_abs;          // max |c - ref| over finite c
  std::int64_t max_index;  // column-major index of max_abs, -1 if none; ties keep the lower
  std::int64_t nonfinite;  // count of NaN / Inf in c
  std::int64_t mismatches;  // finite c != ref rounded to c's dtype
};

__host__ __device__ constexpr Partial empty_partial() { return {0.0, 0.0, 0.0, -1, 0, 0}; }

__host__ __device__ void merge(Partial& into, const Partial& other) {
  into.err2 += other.err2;
  into.ref2 += other.ref2;
  into.nonfinite += other.nonfinite;
  into.mismatches += other.mismatches;
  const bool other_wins =
      other.max_index >= 0 && (into.max_index < 0 || other.max_abs > into.max_abs ||
                               (other.max_abs == into.max_abs && other.max_index < into.max_index));
  if (other_wins) {
    into.max_abs = other.max_abs;
    into.max_index = other.max_index;
  }
}

// The reference as C's dtype holds it (round to nearest even, as the
// kernels' conversions do).
__device__ __forceinline__ float rounded_to(DType dtype, float value) {
  switch (dtype) {
    case DType::kBF16:
      return __bfloat162float(__float2bfloat16_rn(value));
    case DType::kFP16:
      return __half2float(__float2half_rn(value));
    case DType::kFP32:
      break;
  }
  return value;
}

__global__ void compare_kernel(detail::StridedMatrix c, std::int64_t m, std::int64_t n,
                               const float* ref, Partial* partials) {
  Partial mine = empty_partial();
  const std::int64_t total = m * n;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       idx < total; idx += step) {
    const double value = detail::load_as_float(c, idx % m, idx / m);
    if (!isfinite(value)) {
      ++mine.nonfinite;
      continue;
    }
    const double expected = ref[idx];
    if (static_cast<float>(value) != rounded_to(c.dtype, ref[idx])) ++mine.mismatches;
    const double diff = value - expected;
    mine.err2 += diff * diff;
    mine.ref2 += expected * expected;
    // A NaN reference makes err2 NaN, which fails every tolerance; no special case.
    if (fabs(diff) > mine.max_abs || mine.max_index < 0) {
      mine.max_abs = fabs(diff);
      mine.max_index = idx;
    }
  }

  __shared__ Partial block[kThreads];
  block[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) merge(block[threadIdx.x], block[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = block[0];
}

}  // namespace

ErrorStats compare(const GemmArgs& args, const float* ref, cudaStream_t stream) {
  ErrorStats stats;
  if (args.m <= 0 || args.n <= 0) return stats;

  const std::int64_t total = args.m * args.n;
  const int blocks = static_cast<int>(std::min((total + kThreads - 1) / kThreads, kMaxBlocks));
  DeviceBuffer partials_dev(sizeof(Partial) * static_cast<std::size_t>(blocks));
  const auto c = detail::strided(args.c.ptr, args.c.dtype, args.c.layout, args.c.ld);
  compare_kernel<<<blocks, kThreads, 0, stream>>>(c, args.m, args.n, ref,
                                                  static_cast<Partial*>(partials_dev.get()));
  TCGEMM_CHECK_CUDA(cudaGetLastError());

  std::vector<Partial> partials(static_cast<std::size_t>(blocks));
  TCGEMM_CHECK_CUDA(cudaMemcpyAsync(partials.data(), partials_dev.get(), partials_dev.bytes(),
                                    cudaMemcpyDeviceToHost, stream));
  TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));

  Partial sum = empty_partial();
  for (const Partial& p : partials) merge(sum, p);
  stats.rel_fro = sum.ref2 > 0.0 ? std::sqrt(sum.err2 / sum.ref2) : std::sqrt(sum.err2);
  stats.nonfinite = sum.nonfinite;
  stats.mismatches = sum.mismatches;
  if (sum.max_index >= 0) {
    stats.max_abs = sum.max_abs;
    stats.max_row = sum.max_index % args.m;
    stats.max_col = sum.max_index / args.m;
  }
  return stats;
}

bool exact_on_small_integers(const GemmArgs& args) {
  const auto small_integer = [](float x) { return std::nearbyint(x) == x && std::fabs(x) <= 4.0f; };
  const double bound = 9.0 * static_cast<double>(args.k) * std::fabs(args.alpha) +
                       3.0 * std::fabs(args.beta);
  return small_integer(args.alpha) && small_integer(args.beta) && bound < 16777216.0;
}

double tolerance_for(DType output) {
  // docs/benchmarking.md: bf16/fp16 outputs carry their own rounding (~3e-3 typical);
  // an fp32 output only differs from the reference by summation order.
  return output == DType::kFP32 ? 1e-4 : 1e-2;
}

bool bitwise_equal(const void* a, const void* b, std::size_t bytes) {
  if (bytes == 0) return true;
  std::vector<unsigned char> host_a(bytes);
  std::vector<unsigned char> host_b(bytes);
  TCGEMM_CHECK_CUDA(cudaMemcpy(host_a.data(), a, bytes, cudaMemcpyDeviceToHost));
  TCGEMM_CHECK_CUDA(cudaMemcpy(host_b.data(), b, bytes, cudaMemcpyDeviceToHost));
  return std::memcmp(host_a.data(), host_b.data(), bytes) == 0;
}

}  // namespace tcgemm::testing
