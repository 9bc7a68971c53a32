// The small-M path's host arithmetic (skinny.h): how a launch covers a
// problem. Plain C++.
#include "kernels/prod/skinny.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace tcgemm::prod {
namespace {

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Warps resident per SM (skinny.cu: with 8 rows of the small operand two
// blocks of 16 warps, 64 registers a thread and 6.5 KiB of shared memory a
// warp, so one-warp blocks fit 30 to an SM, not 32; with 16 about 116
// registers, one block) and blocks resident per SM at most (sm_90).
constexpr std::int64_t warps_per_sm(int cols) { return cols == 8 ? 32 : 16; }
constexpr std::int64_t kMaxBlocksPerSm = 32;

// The share of the resident block slots a one-wave launch may fill: blocks
// are not spread perfectly evenly, and a few left over for a second wave
// cost as much as the whole first one.
constexpr double kResidentMargin = 0.9;

// The most K slices (a power of two, up to a full block) with which every
// block of `s` is resident at once; the most there are when none is.
int resident_slices(const SkinnyShape& s, int sm_count) {
  const int max_slices = kSkinnyMaxWarps / s.row_groups;
  const double usable_sms = kResidentMargin * std::max(1, sm_count);
  for (int k = max_slices; k >= 1; k /= 2) {
    const std::int64_t per_sm =
        std::min(kMaxBlocksPerSm, warps_per_sm(s.cols) / (std::int64_t{k} * s.row_groups));
    if (static_cast<double>(s.blocks) <= usable_sms * static_cast<double>(per_sm)) {
      return k;
    }
  }
  return max_slices;
}

}  // namespace

SkinnyShape skinny_shape(const GemmArgs& args, int sm_count) {
  SkinnyShape s;
  s.small_is_a = args.m <= args.n;
  s.small = s.small_is_a ? args.m : args.n;
  s.large = s.small_is_a ? args.n : args.m;
  s.cols = s.small <= 8 ? 8 : kSkinnyMaxCols;
  s.passes = ceil_div(s.small, s.cols);
  // Row groups: as many as the small operand's size calls for (its L2 reads
  // per row of the large one fall with them), fewer where that leaves fewer
  // warps to stream the large operand (counted up to what is resident).
  const std::int64_t chunks = std::max<std::int64_t>(1, ceil_div(args.k, kSkinnyChunk));
  const std::int64_t sms = std::max(1, sm_count);
  const std::int64_t resident_warps = sms * warps_per_sm(s.cols);
  std::int64_t best_warps = -1;
  std::int64_t best_busiest = 0;
  for (int groups = s.small <= 4 ? 1 : 2; groups >= 1; groups /= 2) {
    SkinnyShape t = s;
    t.row_groups = groups;
    t.row_blocks = ceil_div(s.large, std::int64_t{kSkinnyRows} * groups);
    t.blocks = t.row_blocks * s.passes * args.batch_count;
    const auto slices = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(resident_slices(t, sm_count), chunks)));
    t.k_per_warp = ceil_div(chunks, slices) * kSkinnyChunk;
    t.k_slices = static_cast<int>(std::max<std::int64_t>(1, ceil_div(args.k, t.k_per_warp)));
    t.warps = groups * t.k_slices;
    const std::int64_t streaming = std::min(resident_warps, t.blocks * t.warps);
    // With 8 rows (two blocks of up to 16 warps per SM), of two shapes with
    // as many warps streaming, the one whose busiest SM holds fewer (one
    // wave: the blocks spread over the SMs, one more on some): 160 blocks of
    // 16 warps put 32 warps on 28 SMs and 16 on the rest, 320 blocks of 8 at
    // most 24 on any. On the H100 this took 0.89-1.00 of the time of the
    // first shape found on the six M = 8 weights of the heldout set, in two
    // runs (bench/results/h100/2026-12-07-s26/).
    const std::int64_t busiest = ceil_div(t.blocks, sms) * t.warps;
    if (streaming > best_warps ||
        (s.cols == 8 && streaming == best_warps && busiest < best_busiest)) {
      best_warps = streaming;
      best_busiest = busiest;
      s = t;
    }
  }
  return s;
}

std::string to_string(const SkinnyShape& s) {
  return std::string("small-M path (mma.sync, per-warp streaming): small operand ") +
         (s.small_is_a ? "A (M=" : "B (N=") + std::to_string(s.small) + "), " +
         std::to_string(s.cols) + " of its rows x " + std::to_string(kSkinnyRows * s.row_groups) +
         " rows of the other per block, " + std::to_string(s.blocks) + " blocks of " +
         std::to_string(s.row_groups) + " row groups x " + std::to_string(s.k_slices) +
         " K slices of " + std::to_string(s.k_per_warp);
}

}  // namespace tcgemm::prod
