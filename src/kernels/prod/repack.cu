// The aligned repack of an operand TMA cannot address (a base pointer off 16
// bytes, or a leading dimension or batch stride that is not a multiple of 8
// elements): a bandwidth-bound copy into dense scratch whose lines start on
// 16 bytes, streamed by TMA after.
#include <algorithm>
#include <string>

#include "kernels/launch.cuh"
#include "kernels/prod/repack.h"

namespace tcgemm::kernels::prod {
namespace {

constexpr int kThreads = 256;
constexpr int kVector = 8;                    // 16-bit elements per 16-byte store
constexpr int kSegment = kThreads * kVector;  // elements of a line per block and pass
constexpr std::int64_t kMaxGridY = 65535;

// One block copies kSegment-element segments of kLines lines at a time
// (lines blockIdx.y * kLines.., then gridDim.y * kLines further on): 2-byte
// loads that a warp issues over 64 contiguous bytes (the source lines have
// any alignment), kLines * 8 of them in flight per thread, staged in shared
// memory, then 16-byte stores. Elements from `inner` up to ld_dst are zero.
constexpr int kLines = 4;

__global__ void __launch_bounds__(kThreads) repack_kernel(RepackJob job) {
  __shared__ __align__(16) std::uint16_t segment[kLines][kSegment];
  const auto* src = static_cast<const std::uint16_t*>(job.src);
  auto* dst = static_cast<std::uint16_t*>(job.dst);
  const std::int64_t first = std::int64_t{blockIdx.x} * kSegment;
  // Elements of this block's segment that exist in the source and in the
  // destination line (32-bit from here on: the copy is instruction-bound
  // otherwise).
  const int in_segment = static_cast<int>(std::min<std::int64_t>(kSegment, job.inner - first));
  const int out_segment = static_cast<int>(std::min<std::int64_t>(kSegment, job.ld_dst - first));
  const std::int64_t lines = job.outer * job.entries;
  for (std::int64_t line0 = std::int64_t{blockIdx.y} * kLines; line0 < lines;
       line0 += std::int64_t{gridDim.y} * kLines) {
    // Line l's source and destination (one 64-bit division per line, and
    // none without a batch).
    const std::uint16_t* in[kLines];
    std::uint16_t* out[kLines];
#pragma unroll
    for (int l = 0; l < kLines; ++l) {
      const std::int64_t line = line0 + l < lines ? line0 + l : lines - 1;
      const std::int64_t entry = job.entries == 1 ? 0 : line / job.outer;
      const std::int64_t outer = line - entry * job.outer;
      in[l] = src + entry * job.stride + outer * job.ld + first;
      out[l] = dst + entry * job.stride_dst + outer * job.ld_dst + first;
    }
#pragma unroll
    for (int l = 0; l < kLines; ++l) {
#pragma unroll
      for (int i = threadIdx.x; i < kSegment; i += kThreads) {
        segment[l][i] = i < in_segment ? in[l][i] : std::uint16_t{0};
      }
    }
    __syncthreads();
    const int index = threadIdx.x * kVector;
#pragma unroll
    for (int l = 0; l < kLines; ++l) {
      if (line0 + l < lines && index < out_segment) {
        *reinterpret_cast<uint4*>(out[l] + index) =
            *reinterpret_cast<const uint4*>(&segment[l][index]);
      }
    }
    __syncthreads();
  }
}

}  // namespace

Status launch_repack(const RepackJob& job, cudaStream_t stream) {
  const std::int64_t lines = job.outer * job.entries;
  const auto blocks_x = static_cast<unsigned>((job.ld_dst + kSegment - 1) / kSegment);
  const auto blocks_y = static_cast<unsigned>(std::min((lines + kLines - 1) / kLines, kMaxGridY));
  return launch_kernel(&repack_kernel, "prod repack", dim3(blocks_x, blocks_y), kThreads, 0, 1,
                       stream, job);
}

}  // namespace tcgemm::kernels::prod
