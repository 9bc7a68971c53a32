// The production kernel family's configuration, as data.
//
// One kernel template (kernel.cuh) serves every problem; a TileConfig fixes
// its shape (tile, ring depth, warpgroups, cluster, epilogue staging) and the
// table below lists the instantiated shapes. Each shape is instantiated for
// every operand major-ness, epilogue and dtype pair (instances_*.cu), so a
// problem maps to a kernel by data alone:
//
//   GemmArgs --canonicalize--> C column-major (C^T = B^T A^T when C is row-major)
//            --operands-->     A K- or M-major, B K- or N-major, each fed by
//                              TMA directly or from an aligned repack
//                              (problem.cpp, launch.cpp)
//            --select-->       a TileConfig of the table (problem.cpp)
//
// Plain C++ (no CUDA): the planner, the dispatcher's host tests and the bench
// read it too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tcgemm::prod {

// How an operand is laid out along K in shared memory, as wgmma sees it.
// K-major: K contiguous (A row-major, B column-major); MN-major: M (for A) or
// N (for B) contiguous, wgmma's transposed operand.
enum class Major : std::uint8_t { kK = 0, kMN = 1 };

// The tile scheduler. Data-parallel: persistent clusters walk whole tiles of
// every batch entry, a Hilbert curve inside each entry. A K split is a
// run-time choice on top of it (problem.h's Choice), not a config, and so
// is a stream-K last round (problem.h's stream_k_tail: an unsplit launch
// whose last round is partial spreads that round's k-tiles over every
// cluster where its schedule says so).
enum class Scheduler : std::uint8_t { kDataParallel = 0 };

// One kernel shape. A structural literal type: it is the kernel template's
// non-type parameter.
struct TileConfig {
  int bm = 128;                // rows of C per CTA: 64 per consumer warpgroup
  int bn = 256;                // columns of C per CTA: wgmma's N
  int bk = 64;                 // K per ring slot: 64 two-byte elements = one 128-byte swizzle row
  int stages = 4;              // slots in the A/B ring
  int consumers = 2;           // consumer warpgroups (each 64 x BN); the producer is one more
  int cluster_m = 2;           // CTAs per cluster, stacked along M; B is multicast across them
  int c_cols = 128;            // columns of C per TMA store (the shared C buffer's width)
  int ctas_per_sm = 1;         // CTAs resident per SM (__launch_bounds__' minimum blocks)
  bool deferred_store = true;  // part of tile t's C leaves under tile t + 1's mainloop
  Scheduler scheduler = Scheduler::kDataParallel;

  constexpr bool operator==(const TileConfig&) const = default;
};

// A row of the table: the registry name, the shape, and when the dispatcher
// prefers it (problem.cpp).
struct ConfigEntry {
  std::string_view name;
  TileConfig tile;
  std::string_view description;
  // The tensor cores' rate this shape sustains on whole tiles, in percent of
  // the 128 x 256 shape's: the dispatcher's estimate weighs padded tile work
  // by it (problem.cpp). Set by hand with the estimate's other constants;
  // `tcgemm-tune --report --rates` prints the rate each row measured in a
  // tuned table beside it (docs/tuning.md: the H200's measured rates ranked
  // no better when put in their place).
  int throughput_pct = 100;
  // Whether the heuristic's estimate models this shape. A row it does not
  // is timed by tcgemm-tune like every other and runs where the tuned table
  // names it, but the heuristic (prod::select) never picks it.
  bool estimated = true;
};

// The instantiated shapes. Adding a row here adds a kernel instance set, a
// registry entry ("prod-" + name) and a candidate for the dispatcher.
inline constexpr std::array kConfigs = {
    // Steps 14's design: 128 x 256 tiles, two consumers, clusters of 2 with B
    // multicast, C by TMA in two halves, the second half deferred.
    ConfigEntry{"prod-128x256",
                TileConfig{.bm = 128,
                           .bn = 256,
                           .bk = 64,
                           .stages = 4,
                           .consumers = 2,
                           .cluster_m = 2,
                           .c_cols = 128,
                           .deferred_store = true},
                "production: 128x256x64 tile, 4 stages, 2 consumers, cluster 2x1 with B multicast, "
                "deferred TMA-store epilogue",
                100},
    // Small problems (tiny batched GEMMs, thin edges): 64 x 64 tiles, one
    // consumer, no cluster, three CTAs per SM so that each SM has three
    // tiles' loads, wgmmas and stores in flight.
    ConfigEntry{"prod-64x64",
                TileConfig{.bm = 64,
                           .bn = 64,
                           .bk = 64,
                           .stages = 4,
                           .consumers = 1,
                           .cluster_m = 1,
                           .c_cols = 64,
                           .ctas_per_sm = 3,
                           .deferred_store = false},
                "production: 64x64x64 tile, 4 stages, 1 consumer, no cluster, 3 CTAs per SM, "
                "TMA-store epilogue",
                // One warpgroup issuing m64n64 wgmmas keeps the tensor cores
                // under half busy.
                40},
    // Mid-size problems (one to four waves of 128 x 256 tiles): twice the
    // tiles, so the last wave leaves fewer SMs idle; clusters of 2 with B
    // multicast, a deeper ring.
    ConfigEntry{"prod-128x128",
                TileConfig{.bm = 128,
                           .bn = 128,
                           .bk = 64,
                           .stages = 6,
                           .consumers = 2,
                           .cluster_m = 2,
                           .c_cols = 64,
                           .deferred_store = true},
                "production: 128x128x64 tile, 6 stages, 2 consumers, cluster 2x1 with B multicast, "
                "deferred TMA-store epilogue",
                // 4096^3 (512 pairs against 256, both last rounds 97%
                // full), same run: 0.1857 ms against the 128 x 256 row's
                // 0.1564 (H200, 2026-12-03-rounds-probe).
                85},
    // Small M (C column-major, M <= 64: the kernel's M is the caller's): one
    // consumer's 64 rows against 256 columns, B (the weights) streamed
    // through five stages, usually with a K split to fill the device.
    ConfigEntry{"prod-64x256",
                TileConfig{.bm = 64,
                           .bn = 256,
                           .bk = 64,
                           .stages = 5,
                           .consumers = 1,
                           .cluster_m = 1,
                           .c_cols = 128,
                           .deferred_store = false},
                "production: 64x256x64 tile, 5 stages, 1 consumer, no cluster, TMA-store epilogue "
                "(small M)",
                50},
    // Small N after the swap (C row-major, M <= 64: the caller's M is the
    // kernel's N): two consumers' 128 rows of A (the weights) against 64
    // columns, eight stages deep.
    ConfigEntry{"prod-128x64",
                TileConfig{.bm = 128,
                           .bn = 64,
                           .bk = 64,
                           .stages = 8,
                           .consumers = 2,
                           .cluster_m = 1,
                           .c_cols = 64,
                           .deferred_store = false},
                "production: 128x64x64 tile, 8 stages, 2 consumers, no cluster, TMA-store epilogue "
                "(small N)",
                60},
    // Wave quantization between the 128 x 256 and 128 x 128 rows: 3072^3
    // is 288 tiles of 128 x 256 (2.2 waves of 132 SMs, the third a fifth
    // full) but 384 of 128 x 192 (2.9 waves). Clusters of 2 with B
    // multicast (a K-major B in halves of 96 rows, an N-major one's three
    // 64-column chunks two and one): 5% faster than without at 4096^3, 8%
    // at 512 x 4096 x 14336, 0.5% at 3072^3 (H200, docs/production.md).
    ConfigEntry{"prod-128x192",
                TileConfig{.bm = 128,
                           .bn = 192,
                           .bk = 64,
                           .stages = 5,
                           .consumers = 2,
                           .cluster_m = 2,
                           .c_cols = 64,
                           .deferred_store = true},
                "production: 128x192x64 tile, 5 stages, 2 consumers, cluster 2x1 with B multicast, "
                "deferred TMA-store epilogue",
                // The 128 x 128 row's first estimate (that row has since
                // measured 85); not measured on its own.
                90},
    // Small M streamed at the SM's fill rate: prod-64x64's tile, one CTA per
    // SM with a ring 13 stages deep (208 KiB of loads in flight). Each k-tile
    // brings 16 KiB for 64 x 64 x 64 products, and a 4-stage ring
    // (prod-64x64) keeps too little in flight when a launch has about one
    // CTA per SM: 128 x 4096 x 4096 unsplit ran at half the ~48 bytes per
    // clock an SM's TMA loads reach on the H200 (tcgemm-split-probe,
    // docs/production.md). The heuristic does not model ring depth, and the
    // row loses where a launch has more than a wave of it (128 x 14336 x
    // 4096: 0.0567 against 0.0371 ms for prod-128x64): it runs where the
    // tuned table measured it fastest, not estimated.
    ConfigEntry{"prod-64x64-deep",
                TileConfig{.bm = 64,
                           .bn = 64,
                           .bk = 64,
                           .stages = 13,
                           .consumers = 1,
                           .cluster_m = 1,
                           .c_cols = 64,
                           .deferred_store = false},
                "production: 64x64x64 tile, 13 stages, 1 consumer, no cluster, 1 CTA per SM, "
                "TMA-store epilogue (small M: a deep ring)",
                40,
                /*estimated=*/false},
    // Three consumers' 192 rows against 192 columns (cuBLAS's tile at
    // 3072^3 on the H200): 256 tiles of 3072^3 are 1.9 rounds of 132 SMs,
    // where 128 x 192 tiles are 2.9. 64 x 192 accumulators per consumer in
    // 152 registers (setmaxnreg); clusters of 2 with B multicast, as
    // cuBLAS's kernel there (0.8% faster at 3072^3 than without); 4 stages
    // fill the shared memory. On the H200 it ties prod-128x192 at 3072^3,
    // loses to prod-128x256 on the squares from 2048 to 8192 and the llm
    // shapes of M = 512 to 4096, and timed 0.89-0.96x of prod-128x256 on
    // most problems with a 16384 side and K >= 8192 (the table of
    // 2026-12-05, docs/production.md). Estimated at 90: the heuristic then
    // takes it where its tiles make one round and narrower ones two (768 x
    // 6144 x 4096: 128 tiles against 144 of 128 x 256), which the stored
    // heldout sets timed ahead of the pick it replaces on 13 of 14 such
    // problems; on the stored tables and heldout sets every rate from 90 to
    // 95 moves the same picks (docs/tuning.md). The largest problems it wins
    // on the estimate does not see.
    ConfigEntry{"prod-192x192",
                TileConfig{.bm = 192,
                           .bn = 192,
                           .bk = 64,
                           .stages = 4,
                           .consumers = 3,
                           .cluster_m = 2,
                           .c_cols = 64,
                           .deferred_store = false},
                "production: 192x192x64 tile, 4 stages, 3 consumers, cluster 2x1 with B "
                "multicast, TMA-store epilogue",
                90},
    // Between the 128 x 128 and 128 x 64 rows, in DeepGEMM's manner of
    // choosing BN to fill the SMs: 256 x 6144 x 4096 is 96 tiles of 128 x
    // 128 on 132 SMs but 128 of 128 x 96. Clusters of 2 with B multicast in
    // halves of 48 rows. 96 columns are not whole 64-column chunks, so an
    // MN-major B is not taken (takes_b below): K-major B only.
    ConfigEntry{"prod-128x96",
                TileConfig{.bm = 128,
                           .bn = 96,
                           .bk = 64,
                           .stages = 7,
                           .consumers = 2,
                           .cluster_m = 2,
                           .c_cols = 48,
                           .deferred_store = true},
                "production: 128x96x64 tile, 7 stages, 2 consumers, cluster 2x1 with B multicast, "
                "deferred TMA-store epilogue (K-major B only)",
                // Set below the 128 x 128 row's 85: a consumer's k16 step
                // reads A's 2 KiB for three quarters of 128 x 128's products.
                80},
};

inline constexpr int kConfigCount = static_cast<int>(kConfigs.size());

// Derived sizes, shared by the kernel, the planner and the tests.
inline constexpr int kWarpgroupThreads = 128;
inline constexpr int kWgmmaM = 64;
inline constexpr int kWgmmaK = 16;
inline constexpr int kChunk = 64;  // elements in one 128-byte swizzle row (16-bit)
inline constexpr int kCRows = 64;  // rows of one consumer's C buffer

constexpr int threads(const TileConfig& t) { return (1 + t.consumers) * kWarpgroupThreads; }

// The wgmma widths (N of m64nNk16) the family instantiates (ptx/wgmma.cuh
// wraps each): BN is one of them.
inline constexpr std::array<int, 5> kWgmmaWidths = {64, 96, 128, 192, 256};

// Whether a config takes a B of major-ness `b`: a K-major B in any BN (TMA
// loads its BN rows of 64 K-elements), an MN-major one only in whole 64-column
// chunks (the 128-byte swizzle rows wgmma's MN-major descriptor steps over).
// The instance table leaves the other slots empty; candidates() and the
// registry's constraints keep such problems off them.
constexpr bool takes_b(const TileConfig& t, Major b) {
  return b == Major::kK || t.bn % kChunk == 0;
}

// A row-major output's TMA store (a flipped choice's, where TMA can address
// C): one consumer's kCRows x c_cols part leaves its C buffer in boxes of 64
// columns, each row one 128-byte line swizzled as TMA's SWIZZLE_128B reads it,
// where c_cols is whole 64-column chunks; otherwise (prod-128x96's 48) in one
// unswizzled box of c_cols columns. The kernel stages and the host encodes
// the map by these two.
constexpr bool row_major_c_swizzled(const TileConfig& t) { return t.c_cols % kChunk == 0; }
constexpr int row_major_c_box_cols(const TileConfig& t) {
  return row_major_c_swizzled(t) ? kChunk : t.c_cols;
}

// Dynamic shared memory the kernel asks for (SharedStorage in kernel.cuh, plus
// 1 KiB to align it to the swizzle period), for 16-bit inputs and outputs of
// `out_bytes` (C buffers are allocated only for 16-bit outputs).
constexpr std::size_t smem_bytes(const TileConfig& t, int out_bytes) {
  const std::size_t ab = static_cast<std::size_t>(t.stages) * (t.bm + t.bn) * t.bk * 2;
  const std::size_t c =
      out_bytes == 2 ? static_cast<std::size_t>(t.consumers) * kCRows * t.c_cols * 2 : 1024;
  // The ring's two barriers and work item a stage; a consumer's C
  // hand-over (job and two barriers: the copy warps, kernel.cuh).
  const std::size_t barriers_and_work = static_cast<std::size_t>(t.stages) * (8 + 8 + 16) +
                                        static_cast<std::size_t>(t.consumers) * (16 + 8 + 8);
  const std::size_t storage = (ab + c + barriers_and_work + 1023) / 1024 * 1024;
  return storage + 1024;
}

// What a TileConfig must satisfy for the kernel template to be correct;
// "" when it does. Checked by the host tests for every table row and by the
// planner (plan/prod_plan.h); the kernel static_asserts the same rules.
inline std::string check(const TileConfig& t) {
  if (t.consumers < 1 || t.consumers > 3) return "consumers must be 1, 2 or 3";
  if (t.bm != kWgmmaM * t.consumers) return "BM must be 64 per consumer warpgroup";
  if (t.bk != kChunk) return "BK must be 64 (one 128-byte swizzle row of 16-bit elements)";
  bool wrapped = false;
  for (const int n : kWgmmaWidths) wrapped = wrapped || t.bn == n;
  if (!wrapped) return "BN must be a wgmma width the family wraps: 64, 96, 128, 192 or 256";
  if (t.cluster_m < 1 || t.cluster_m > 2) return "cluster_m must be 1 or 2";
  if (t.bn / t.cluster_m % 8 != 0) {
    return "each CTA's share of a K-major B (BN / cluster_m rows) must be whole 8-row swizzle "
           "atoms";
  }
  if (t.stages < 2 || t.stages > 16) return "stages must be in [2, 16]";
  if (t.c_cols < 16 || t.bn % t.c_cols != 0 || t.c_cols % 16 != 0) {
    return "c_cols must divide BN and be a multiple of 16 (stmatrix stores pairs of 8-column "
           "chunks)";
  }
  if (t.deferred_store && (t.bn / t.c_cols < 2 || t.consumers != 2)) {
    return "the deferred store needs two consumers and at least two C parts per slice";
  }
  if (t.ctas_per_sm < 1 || (t.consumers >= 2 && t.ctas_per_sm != 1)) {
    return "ctas_per_sm must be 1 with two or three consumers (setmaxnreg budgets the whole SM)";
  }
  return {};
}

}  // namespace tcgemm::prod
