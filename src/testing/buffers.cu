// Device buffers and the two fills every check starts from: seeded normal
// values (never zeros or constants, which run faster and hide unwritten
// outputs) and a NaN poison that compare() counts as non-finite.
#include "testing/testing.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>
#include <utility>

namespace tcgemm::testing {

DeviceAllocError::DeviceAllocError(std::size_t bytes, cudaError_t error)
    : std::runtime_error("cudaMalloc of " + std::to_string(bytes) +
                         " bytes failed: " + cudaGetErrorString(error)),
      bytes_(bytes),
      error_(error) {}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  if (const cudaError_t err = cudaMalloc(&ptr_, bytes); err != cudaSuccess) {
    // A failed cudaMalloc also stays recorded as the runtime's last error
    // (not sticky: the context is fine). Clear it, or the next
    // cudaGetLastError() check would blame an unrelated call for it.
    static_cast<void>(cudaGetLastError());
    throw DeviceAllocError(bytes, err);
  }
}

DeviceBuffer::~DeviceBuffer() {
  // A destructor cannot report; an error here means the context is already
  // broken and the next checked call will say so.
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

std::int64_t span_elements(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t ld) {
  if (rows <= 0 || cols <= 0) return 0;
  return layout == Layout::kRowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

namespace {

constexpr int kFillThreads = 256;
// Grid-stride loops below cover any count; more blocks than this only adds
// scheduling work.
constexpr std::int64_t kMaxFillBlocks = 65536;

int fill_blocks(std::int64_t count) {
  return static_cast<int>(std::min((count + kFillThreads - 1) / kFillThreads, kMaxFillBlocks));
}

// SplitMix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit
// mix, so element i of a seed's stream is mix(mix(seed) + (i + 1) * gamma),
// computable for any i independently.
__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

// Box-Muller on the 64 hash bits: 24 bits for each uniform, exactly
// representable in float. u1 is in (0, 1] so log(u1) is finite.
__device__ __forceinline__ float normal_at(std::uint64_t key, std::int64_t index) {
  const std::uint64_t h = mix64(key + (static_cast<std::uint64_t>(index) + 1) * kGoldenGamma);
  constexpr float kTwoPow24Inv = 1.0f / 16777216.0f;
  const float u1 = static_cast<float>((h >> 40) + 1) * kTwoPow24Inv;
  const float u2 = static_cast<float>(h & 0xFFFFFFull) * kTwoPow24Inv;
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

// Uniform in {-3, ..., -1, 1, ..., 3} from the same hash: every product
// and partial sum of a GEMM on such values is a small integer, exact in fp32.
__device__ __forceinline__ float small_integer_at(std::uint64_t key, std::int64_t index) {
  const std::uint64_t h = mix64(key + (static_cast<std::uint64_t>(index) + 1) * kGoldenGamma);
  const int v = static_cast<int>((h >> 32) % 6);  // 0 .. 5
  return static_cast<float>(v < 3 ? v - 3 : v - 2);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ float from_float(float v) {
  return v;
}

// The value generators of the fills: element i of a seed's stream.
struct Normal {
  __device__ float operator()(std::uint64_t key, std::int64_t i) const { return normal_at(key, i); }
};
struct SmallInteger {
  __device__ float operator()(std::uint64_t key, std::int64_t i) const {
    return small_integer_at(key, i);
  }
};

template <typename T, typename Value>
__global__ void fill_values_kernel(T* out, std::int64_t count, std::uint64_t key) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = from_float<T>(Value{}(key, i));
  }
}

// `count` elements of `dtype` from Value's stream of `seed`.
template <typename Value>
void fill_values(void* ptr, DType dtype, std::int64_t count, std::uint64_t seed,
                 cudaStream_t stream) {
  if (count <= 0) return;
  const std::uint64_t key = mix64(seed);
  const int blocks = fill_blocks(count);
  switch (dtype) {
    case DType::kBF16:
      fill_values_kernel<__nv_bfloat16, Value>
          <<<blocks, kFillThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(ptr), count, key);
      break;
    case DType::kFP16:
      fill_values_kernel<__half, Value>
          <<<blocks, kFillThreads, 0, stream>>>(static_cast<__half*>(ptr), count, key);
      break;
    case DType::kFP32:
      fill_values_kernel<float, Value>
          <<<blocks, kFillThreads, 0, stream>>>(static_cast<float*>(ptr), count, key);
      break;
  }
  TCGEMM_CHECK_CUDA(cudaGetLastError());
}

template <typename Bits>
__global__ void fill_bits_kernel(Bits* out, std::int64_t count, Bits pattern) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = pattern;
  }
}

}  // namespace

void fill_normal(void* ptr, DType dtype, std::int64_t count, std::uint64_t seed,
                 cudaStream_t stream) {
  fill_values<Normal>(ptr, dtype, count, seed, stream);
}

void fill_small_integers(void* ptr, DType dtype, std::int64_t count, std::uint64_t seed,
                         cudaStream_t stream) {
  fill_values<SmallInteger>(ptr, dtype, count, seed, stream);
}

void fill_poison(void* ptr, DType dtype, std::int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  // Quiet-NaN bit patterns: exponent all ones, top mantissa bit set.
  constexpr std::uint16_t kBF16NaN = 0x7FC0;
  constexpr std::uint16_t kFP16NaN = 0x7E00;
  constexpr std::uint32_t kFP32NaN = 0x7FC00000u;
  const int blocks = fill_blocks(count);
  switch (dtype) {
    case DType::kBF16:
      fill_bits_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint16_t*>(ptr), count,
                                                            kBF16NaN);
      break;
    case DType::kFP16:
      fill_bits_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint16_t*>(ptr), count,
                                                            kFP16NaN);
      break;
    case DType::kFP32:
      fill_bits_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint32_t*>(ptr), count,
                                                            kFP32NaN);
      break;
  }
  TCGEMM_CHECK_CUDA(cudaGetLastError());
}

}  // namespace tcgemm::testing
