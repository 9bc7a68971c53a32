// The aligned repack of an operand TMA cannot address (a base pointer off 16
// bytes, or a leading dimension or batch stride that is not a multiple of 8
// elements): a bandwidth-bound copy into dense scratch whose lines start on
// 16 bytes, streamed by TMA after.
//
// Method: every load and every store is 16 bytes, aligned. A source line
// starts at byte address s (2-byte aligned only); call a = s & ~15 its
// aligned base and h = (s & 15) / 2 its shift in elements (0..7). Output
// chunk t of the line (elements 8t .. 8t + 7) is then elements h .. h + 7 of
// the aligned source chunks t and t + 1 (at a + 16t and a + 16t + 16) put end
// to end. A group of lanes shares a line: lane k loads aligned chunks
// k, k + lanes, k + 2 lanes, .. (each load a coalesced run across the group),
// takes chunk t + 1 from its neighbour with a shuffle (the group's last lane
// from its first lane's next chunk, which that lane loads once more at the
// end), shifts the pair by h with funnel shifts and selects on h (uniform per
// line, so no dynamically indexed register array, which would live in local
// memory), and stores one 16-byte chunk. Aligned chunks that are not wholly
// inside the line's elements (the first when h != 0, the last when the line
// does not end on 16 bytes) are read element by element, only the elements
// of the line: the source may start at its first element and end at its
// last, and a chunk load there would read outside it. Elements outside the
// line read as zero, which is what the destination's padding (inner up to
// ld_dst) must hold, so the padding takes no code of its own.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/launch.cuh"
#include "kernels/prod/realign.cuh"
#include "kernels/prod/repack.h"
#include "ptx/griddep.cuh"

namespace tcgemm::kernels::prod {
namespace {

constexpr int kThreads = 256;
// Output chunks per thread and pass, their 16-byte loads in flight together.
constexpr int kUnroll = 4;
// A job's blocks across its lines, and a launch's blocks in all (a 1-D grid).
constexpr std::int64_t kMaxBlocksY = 65535;
constexpr std::int64_t kMaxBlocks = (std::int64_t{1} << 31) - 1;
// Chunk and element offsets within a line are 32-bit, and 64-bit arithmetic
// comes once per line, to keep each chunk's instructions few; no line is
// longer than this for a problem validate() accepts (M, N, K < 2^31).
constexpr std::int64_t kMaxLine = std::int64_t{1} << 31;

// Aligned chunk j of a line as elements 8j - h .. 8j - h + 7 of the line,
// where n = h + inner: 2-byte loads of the elements inside the line, zero for
// the rest. Every load is issued (an element outside the line reads the
// line's first instead, then is dropped), so they are all in flight together
// and nothing waits on one before the next is issued. Needs n > h.
__device__ __forceinline__ uint4 load_part(const std::uint16_t* elements, std::uint32_t j,
                                           std::uint32_t h, std::uint32_t n) {
  std::uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const std::uint32_t i = 8 * j + m;
    const bool inside = i >= h && i < n;
    const std::uint32_t x = __ldg(elements + (inside ? i : h));
    w[m / 2] |= (inside ? x : 0u) << (16 * (m % 2));
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// One launch's jobs, their blocks one after another along x: the first
// blocks[0] copy job 0, the next blocks[1] job 1. A job's blocks form a
// blocks_x x blocks_y grid of their own (x along its lines, y across them).
struct RepackLaunch {
  RepackJob job[kMaxRepackJobs];
  unsigned lane_bits[kMaxRepackJobs] = {};  // log2 of the lanes that share a line
  unsigned blocks_x[kMaxRepackJobs] = {};   // the job's blocks along a line
  unsigned blocks_y[kMaxRepackJobs] = {};   // ... and across its lines
};
// The kernel tells the jobs apart by one comparison.
static_assert(kMaxRepackJobs == 2, "repack_kernel selects between two jobs");

// Groups of 2^lane_bits lanes, one line each: the job's block (x, y)
// copies output chunks x * lanes * kUnroll .. of lines y * lines_per_block
// .., then blocks_y * lines_per_block lines further on (any number of
// lines). Narrow lines take narrow groups (lanes * kUnroll is just enough
// for the line), so a warp is not mostly idle on them.
__global__ void __launch_bounds__(kThreads) repack_kernel(const __grid_constant__ RepackLaunch l) {
  ptx::griddep_wait();  // a dependent launch: the kernel before it is done
  ptx::griddep_launch_dependents();
  // A uniform select, so the job's fields are registers, not indexed
  // parameter loads.
  const bool second = blockIdx.x >= l.blocks_x[0] * l.blocks_y[0];
  const RepackJob job = second ? l.job[1] : l.job[0];
  const unsigned lane_bits = second ? l.lane_bits[1] : l.lane_bits[0];
  const unsigned blocks_x = second ? l.blocks_x[1] : l.blocks_x[0];
  const unsigned blocks_y = second ? l.blocks_y[1] : l.blocks_y[0];
  const unsigned block = blockIdx.x - (second ? l.blocks_x[0] * l.blocks_y[0] : 0u);
  const unsigned block_x = block % blocks_x;
  const unsigned block_y = block / blocks_x;
  const unsigned lanes = 1u << lane_bits;
  const unsigned k = threadIdx.x & (lanes - 1);  // this lane's place in its group
  const unsigned group = threadIdx.x >> lane_bits;
  const std::int64_t lines_per_block = kThreads >> lane_bits;
  const auto chunks = static_cast<std::uint32_t>(job.ld_dst / 8);
  const std::uint32_t first = block_x * lanes * kUnroll + k;  // this lane's first chunk
  const std::int64_t lines = job.outer * job.entries;
  // A 32-bit division when the line numbers allow it (a 64-bit one is a
  // long subroutine), none without a batch.
  const bool narrow = lines <= std::int64_t{UINT32_MAX};
  for (std::int64_t line0 = std::int64_t{block_y} * lines_per_block; line0 < lines;
       line0 += std::int64_t{blocks_y} * lines_per_block) {
    // Every lane runs to the end (the shuffles need the whole warp): a group
    // past the last line loads nothing and stores nothing.
    const bool live = line0 + group < lines;
    const std::int64_t line = live ? line0 + group : lines - 1;
    std::int64_t entry = 0;
    if (job.entries > 1) {
      entry = narrow ? static_cast<std::int64_t>(static_cast<std::uint32_t>(line) /
                                                 static_cast<std::uint32_t>(job.outer))
                     : line / job.outer;
    }
    const std::int64_t outer = line - entry * job.outer;
    const auto* in =
        static_cast<const std::uint16_t*>(job.src) + entry * job.stride + outer * job.ld;
    auto* out = reinterpret_cast<uint4*>(static_cast<std::uint16_t*>(job.dst) +
                                         entry * job.stride_dst + outer * job.ld_dst);
    const auto address = reinterpret_cast<std::uintptr_t>(in);
    const auto* base = reinterpret_cast<const uint4*>(address & ~std::uintptr_t{15});
    const auto h = static_cast<std::uint32_t>(address & 15) / 2;
    // Elements from the aligned base to the line's end; 0 loads nothing.
    const std::uint32_t n = live && job.inner > 0 ? static_cast<std::uint32_t>(job.inner) + h : 0;

    // v[u] is aligned chunk first + u * lanes; v[kUnroll] only the group's
    // first lane needs (the chunk after the group's last one this pass).
    // The chunks wholly inside the line first, one 16-byte load each, all in
    // flight before anything else.
    uint4 v[kUnroll + 1];
#pragma unroll
    for (int u = 0; u <= kUnroll; ++u) {
      const std::uint32_t e = 8 * (first + u * lanes);
      const bool whole = (u < kUnroll || k == 0) && e >= h && e + 8 <= n;
      v[u] = whole ? __ldg(base + first + u * lanes) : make_uint4(0, 0, 0, 0);
    }
    // Then the line's partial chunks, at most two: chunk 0 unless the line
    // starts on 16 bytes and has 8 elements, and chunk (n - 1) / 8 when that
    // is another and the line does not end on 16 bytes. Their loads overlap
    // the ones above.
    const bool part_first = first == 0 && n > 0 && (h != 0 || n < 8);
    const std::uint32_t last = n > 0 ? (n - 1) / 8 : 0;
    const bool part_last = last > 0 && n % 8 != 0 && last >= first && (last - first) % lanes == 0 &&
                           (last - first) / lanes <= kUnroll;
    if (part_first || part_last) {
      const auto* elements = reinterpret_cast<const std::uint16_t*>(base);
      const uint4 head = load_part(elements, 0, h, n);
      const uint4 tail = load_part(elements, last, h, n);
      const std::uint32_t at = (last - first) / lanes;
      if (part_first) v[0] = head;
#pragma unroll
      for (int u = 0; u <= kUnroll; ++u) {
        if (part_last && at == static_cast<std::uint32_t>(u)) v[u] = tail;
      }
    }

#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      // Chunk t + 1: lane k + 1's v[u], or for the last lane the first
      // lane's v[u + 1] (the first lane hands that one out instead, as
      // nobody reads its v[u]).
      const uint4 next = shuffle(k == 0 ? v[u + 1] : v[u], (k + 1) & (lanes - 1), lanes);
      const std::uint32_t t = first + u * lanes;
      if (live && t < chunks) out[t] = shift_chunk(v[u], next, h);
    }
  }
}

}  // namespace

Status launch_repack(std::span<const RepackJob> jobs, cudaStream_t stream) {
  if (jobs.size() > static_cast<std::size_t>(kMaxRepackJobs)) {
    return {StatusCode::kInvalidValue, "prod repack: " + std::to_string(jobs.size()) +
                                           " jobs in one launch (at most " +
                                           std::to_string(kMaxRepackJobs) + ")"};
  }
  RepackLaunch l;
  unsigned count = 0;
  std::int64_t blocks = 0;
  for (const RepackJob& job : jobs) {
    const std::int64_t lines = job.outer * job.entries;
    if (lines <= 0 || job.ld_dst <= 0) continue;  // nothing to copy
    if (job.ld_dst % 8 != 0) {
      return {StatusCode::kInvalidValue, "prod repack: ld_dst " + std::to_string(job.ld_dst) +
                                             " is not a multiple of 8 (16-byte lines)"};
    }
    if (job.ld_dst > kMaxLine || job.inner > job.ld_dst) {
      return {StatusCode::kNotSupported, "prod repack: lines of " + std::to_string(job.inner) +
                                             " elements into ld_dst " + std::to_string(job.ld_dst) +
                                             " (needs inner <= ld_dst <= 2^31)"};
    }
    // The narrowest group whose lanes * kUnroll chunks cover a line, at most
    // a warp; wider lines take several blocks along x.
    const std::int64_t chunks = job.ld_dst / 8;
    unsigned lane_bits = 0;
    while (lane_bits < 5 && (std::int64_t{kUnroll} << lane_bits) < chunks) ++lane_bits;
    const std::int64_t span = std::int64_t{kUnroll} << lane_bits;
    const std::int64_t lines_per_block = kThreads >> lane_bits;
    const std::int64_t blocks_x = (chunks + span - 1) / span;
    // Lines past blocks_y * lines_per_block are taken in further passes.
    const std::int64_t blocks_y =
        std::min((lines + lines_per_block - 1) / lines_per_block, kMaxBlocksY);
    l.job[count] = job;
    l.lane_bits[count] = lane_bits;
    l.blocks_x[count] = static_cast<unsigned>(blocks_x);
    l.blocks_y[count] = static_cast<unsigned>(blocks_y);
    blocks += blocks_x * blocks_y;
    ++count;
  }
  if (count == 0) return Status::success();
  // (Unreachable with real allocations: only jobs of 32-lane groups have
  // more than one block along a line, and past 2^31 - 1 blocks they would
  // write terabytes.)
  if (blocks > kMaxBlocks) {
    return {StatusCode::kNotSupported,
            "prod repack: " + std::to_string(blocks) + " blocks (at most 2^31 - 1)"};
  }
  return launch_dependent_kernel(&repack_kernel, "prod repack", dim3(static_cast<unsigned>(blocks)),
                                 kThreads, 0, 1, stream, l);
}

}  // namespace tcgemm::kernels::prod
