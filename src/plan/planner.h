// The tile-feasibility planner: for a device spec and a tile configuration,
// the registers, shared memory, threads and resident blocks a GEMM block
// needs, and whether the requested number of blocks fits on one SM (MP).
//
// The register figures are what the operand and accumulator fragments occupy
// in the register file, counted the way the hardware stores them: a 32-bit
// register per fp32 accumulator element, two fp16/bf16 elements per 32-bit
// register, a warp's fragment spread over its lanes (per thread = per warp /
// warp size), and each warp's count rounded to the allocation unit. They are
// a lower bound: addresses, indices and loop counters come on top (the
// `overhead_regs` estimate), and only the compiler knows those.
//
// The shared-memory figure is exact for a kernel that declares what the
// config describes (A and B slabs per stage, optionally a C staging area in a
// union with them, mbarriers), and tests/host/test_plan.cpp checks it against
// ptxas and against the Hopper ladder's SharedStorage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/device_spec.h"

namespace tcgemm::plan {

// One GEMM block, described the way the article's tables describe it: an MMA
// (WMMA fragment) shape, a grid of MMAs per warp, a grid of warps per block.
// Block tile: BM = mma_m * warp_mmas_m * warps_m, BN likewise, BK = bk.
struct TileConfig {
  int mma_m = 16;  // MMA (fragment) shape
  int mma_n = 16;
  int mma_k = 16;
  int warp_mmas_m = 4;    // MMAs per warp along M and N (the article's
  int warp_mmas_n = 2;    // WARP_TILE_M x WARP_TILE_N); MMA per warp = product
  int warps_m = 2;        // warps per block along M and N, each holding
  int warps_n = 4;        // accumulators
  int extra_warps = 0;    // warps holding no accumulators (e.g. a TMA producer)
  int blocks_per_sm = 1;  // resident blocks requested per SM (MP)

  // Shared memory. The A slab is bk rows of (BM + pad_a) elements (column-
  // major A, the article's a[BK][BM + OFFSET]); the B slab is BN rows of
  // (bk + pad_b) elements (column-major B, b[BN][BK]).
  int stages = 1;  // K slabs resident at once (2 = double buffering)
  int bk = 16;     // K extent of one slab (the article's BATCH * MMA_K)
  int pad_a = 0;   // elements per A row, against bank conflicts
  int pad_b = 0;
  int ab_bytes = 2;            // A and B element size (fp16, bf16)
  int acc_bytes = 4;           // accumulator element size (fp32)
  int c_bytes = 4;             // C staging element size (the article stages floats)
  int c_stage_tiles = 1;       // MMA tiles each warp stages through shared memory
                               // at once in the epilogue (0: no staging)
  int pad_c = 0;               // elements per staged C column (mma_n columns of
                               // mma_m + pad_c)
  bool c_union = true;         // C staging shares storage with the A/B slabs
  int barriers_per_stage = 0;  // 8-byte mbarriers per stage (full + empty = 2)
  int smem_align = 0;          // align the storage to this many bytes, allocating as
                               // many again as slack (dynamic shared memory is only
                               // 16-byte aligned); 0 = no alignment

  // Registers.
  int a_frags = 1;          // A fragments a warp holds at once
  int b_frags = -1;         // B fragments a warp holds at once; -1 = warp_mmas_n
  int fragment_copies = 1;  // copies of each A/B element across the warp's
                            // lanes (2 for nvcuda::wmma fp16 16x16x16, whose
                            // fragments hold 16 halves per lane)
  int overhead_regs = 0;    // per-thread estimate for addresses etc.

  int mmas_per_warp() const { return warp_mmas_m * warp_mmas_n; }
  int mma_warps() const { return warps_m * warps_n; }
  int warps() const { return mma_warps() + extra_warps; }
  int bm() const { return mma_m * warp_mmas_m * warps_m; }
  int bn() const { return mma_n * warp_mmas_n * warps_n; }
  int live_b_frags() const { return b_frags < 0 ? warp_mmas_n : b_frags; }
};

// A config with nonpositive sizes etc.: the message, or nullopt if valid.
std::optional<std::string> validate(const TileConfig& config);

// The warp grid (warps_m x warps_n = warps) that makes the block tile most
// nearly square for the config's warp tile: least BM + BN (least A + B
// shared memory), then least |BM - BN|, then larger BM.
void arrange_warps(TileConfig& config, int warps);

enum class Limit {
  kThreadsPerBlock,
  kThreadsPerSm,
  kBlocksPerSm,
  kRegsPerThread,
  kRegsPerBlock,
  kRegsPerSm,
  kSmemPerBlock,
  kSmemPerSm,
};

struct LimitCheck {
  Limit limit;
  std::string name;   // e.g. "registers per SM"
  std::int64_t need;  // what the config needs (for blocks_per_sm blocks where
  std::int64_t cap;   // the limit is per SM) and the device's limit
  bool ok;
  std::string note;  // why, when need <= cap alone does not tell
};

struct Plan {
  // Shape.
  int warps_per_block = 0;
  int threads_per_block = 0;
  int bm = 0, bn = 0, bk = 0;

  // Registers per thread, fragments only (each rounded up to whole registers).
  int acc_regs = 0;
  int a_regs = 0;
  int b_regs = 0;
  int fragment_regs = 0;            // acc + a + b
  int regs_per_thread = 0;          // fragment_regs + overhead_regs
  int regs_per_warp = 0;            // allocated: rounded up to the allocation unit
  std::int64_t regs_per_block = 0;  // regs_per_warp * warps
  int max_regs_per_thread = 0;      // what this block size allows

  // Shared memory, bytes.
  std::int64_t smem_a = 0;  // all stages of A
  std::int64_t smem_b = 0;  // all stages of B
  std::int64_t smem_c = 0;  // C staging
  std::int64_t smem_barriers = 0;
  std::int64_t smem_block = 0;  // what the kernel declares (or allocates dynamically)
  std::int64_t smem_alloc = 0;  // what the SM sets aside per block

  // Residency.
  int threads_per_sm = 0;     // threads_per_block * blocks_per_sm
  int max_blocks_per_sm = 0;  // the most blocks every limit allows
  std::vector<LimitCheck> checks;
  bool fits = false;
  std::string reason;  // the failed limits, "" when it fits
};

// Assumes validate(config) passed.
Plan plan(const DeviceSpec& spec, const TileConfig& config);

}  // namespace tcgemm::plan
