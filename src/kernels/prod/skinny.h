// The production family's small-M path: C = A * B when M (or N) is a few
// rows and the other operand, the weights, must simply be streamed at the
// device's memory rate (GEMV and the decode shapes of an LLM).
//
// No TMA, no clusters, no mbarriers: each warp streams 16 rows of the large
// operand and the few rows of the small one into mma.sync fragments
// (m16n8k16), through its own ring of load steps in shared memory with up
// to 8 rows of the small operand (cp.async, each lane reading back only its
// own 16 bytes), in batches of load steps held in registers with 9 to 16.
// Up to 8 rows of the small operand are the MMA's N and the large operand's
// 16 rows its M; 9 to 16 rows of the small operand are the MMA's M and the
// large operand's rows its N, 8 per MMA. A thread's 16-byte load holds 8
// consecutive k of one row; the MMA sees them as the k its fragment layout
// expects, which is harmless because the large and the small operand are
// loaded with the same k permutation. A block covers 16 rows per row group
// of the large operand; its warps are row groups x K slices, and the K
// slices of a row add their partial sums in shared memory, in slice order
// (deterministic), before the epilogue applies alpha and beta and writes C
// element by element (any layout, any alignment). The warps of one K slice
// read the same rows of the small operand, so more row groups per block
// mean fewer reads of it from L2.
//
// Both operands must be K-contiguous (A row-major, B column-major: the
// x @ W^T of every linear layer) with 16-byte-aligned rows: K, lda, ldb and
// the batch strides multiples of 8 elements, A and B 16-byte aligned (the
// registry entry's constraints, src/registry.cpp). This header is
// plain C++: the shape arithmetic is unit-tested without a GPU
// (tests/host/test_prod_skinny.cpp); the kernel is skinny.cu.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <string>

#include "kernels/prod/problem.h"

namespace tcgemm::prod {

inline constexpr int kSkinnyRows = 16;      // rows of the large operand per warp
inline constexpr int kSkinnyMaxCols = 16;   // rows of the small operand per block at most
inline constexpr int kSkinnyChunk = 32;     // K per load step of a warp: 4 lanes x 8 elements
inline constexpr int kSkinnyMaxWarps = 16;  // warps per block (row groups x K slices)

// How a launch of the small-M path covers a problem.
struct SkinnyShape {
  bool small_is_a = true;       // the small operand is A (M <= N), else B
  std::int64_t small = 0;       // its rows: M, or N
  std::int64_t large = 0;       // the large operand's rows: N, or M
  int cols = 8;                 // rows of the small operand per block: 8 or 16
  std::int64_t passes = 1;      // blocks along the small operand: ceil(small / cols)
  int row_groups = 1;           // 16-row groups of the large operand per block
  std::int64_t row_blocks = 0;  // blocks along the large operand: ceil(large / (16 row_groups))
  int k_slices = 1;             // K slices per block
  int warps = 1;                // row_groups x k_slices
  std::int64_t k_per_warp = 0;  // K slice of one warp, a multiple of kSkinnyChunk
  std::int64_t blocks = 0;      // row_blocks x passes x batch_count
};

// The launch shape on a device of `sm_count` SMs: the small operand is the
// smaller of M and N; one row group for up to 4 rows of it, for more one or
// two, whichever leaves more warps streaming (with 8 rows, of two that
// leave as many, the one with fewer warps on the busiest SM); then as many
// K slices per block as keep every block resident at once, with a margin,
// so that no partial second wave of blocks runs with too few loads in
// flight (many waves where even one slice per block cannot all be
// resident).
SkinnyShape skinny_shape(const GemmArgs& args, int sm_count);

// "small-M path (mma.sync, per-warp streaming): small operand A (M=16), 16 of its
// rows x 32 rows of the other per block, 128 blocks of 2 row groups x 4 K slices of 1024"
std::string to_string(const SkinnyShape& shape);

}  // namespace tcgemm::prod

namespace tcgemm::kernels::prod {

// Raises the shared-memory limit of the kernel instance that `shape` runs
// for `args`' dtypes in the current device's context (a host call, before
// anything is enqueued: GemmPlan::create and the one-shot call make it);
// launch_skinny needs it first for 8-row shapes (their rings pass 48 KiB).
// For those, kNotSupported for inputs that are not 16-bit and
// kNotSupported/kCudaError from the runtime; 16-row shapes need nothing and
// always succeed.
Status prepare_skinny(const GemmArgs& args, const tcgemm::prod::SkinnyShape& shape);

// Enqueues the small-M path for `args` with `shape` (skinny_shape of the
// same problem, prepared by prepare_skinny) on args.stream; no allocation,
// synchronization or device query, so a CUDA graph can capture it. kInvalidValue, nothing enqueued,
// unless M, N, K >= 1, A is row-major and B column-major, K, lda, ldb (and
// with a batch the strides of A and B) are multiples of 8 and A and B are
// 16-byte aligned. A problem of more than 16 rows in both M and N runs in
// passes of 16 (correct, but each pass streams the large operand again).
// At most `max_blocks` blocks are launched, each looping over the rest
// (the tests lower it to run the loop).
inline constexpr std::int64_t kSkinnyMaxGrid = std::int64_t{1} << 30;

// The most blocks the path launches on `device`: one per SM under an SM
// budget (the blocks loop over the rest), else kSkinnyMaxGrid.
inline std::int64_t skinny_max_blocks(const tcgemm::prod::DeviceModel& device) {
  return device.budget ? device.sm_count : kSkinnyMaxGrid;
}
Status launch_skinny(const GemmArgs& args, const tcgemm::prod::SkinnyShape& shape,
                     std::int64_t max_blocks = kSkinnyMaxGrid);

}  // namespace tcgemm::kernels::prod
