// The aligned repack of a GEMM's operands (repack.cu).
#pragma once

#include <cuda_runtime_api.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <span>

namespace tcgemm::kernels::prod {

// dst[e][o][i] = src[e * stride + o * ld + i] for `entries` batch entries of
// `outer` lines of `inner` 16-bit elements; i runs up to ld_dst (a multiple
// of 8), the padding zero. dst is 16-byte aligned.
struct RepackJob {
  const void* src = nullptr;
  void* dst = nullptr;
  std::int64_t inner = 0;
  std::int64_t outer = 0;
  std::int64_t ld = 0;
  std::int64_t stride = 0;
  std::int64_t entries = 1;
  std::int64_t ld_dst = 0;
  std::int64_t stride_dst = 0;
};

// At most this many jobs per launch: a GEMM's A and B.
inline constexpr int kMaxRepackJobs = 2;

// Copies every job in one launch (a dependent launch, launch.cuh), so two
// repacked operands pay one ramp-up and one tail. Every job is checked
// before anything is enqueued: an error enqueues nothing.
Status launch_repack(std::span<const RepackJob> jobs, cudaStream_t stream);

inline Status launch_repack(const RepackJob& job, cudaStream_t stream) {
  return launch_repack(std::span<const RepackJob>(&job, 1), stream);
}

}  // namespace tcgemm::kernels::prod
