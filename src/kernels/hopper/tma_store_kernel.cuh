// The kernel of Hopper ladder steps 10-15 (k10_tma_store.cu, k11_hilbert.cu,
// k12_four_stages.cu, k13_stmatrix.cu, k14_deferred_store.cu,
// k15_stream_k.cu): persistent
// clusters of 2 with B multicast, scale-d = 0, and C staged in swizzled shared
// memory and written by TMA stores. The steps differ in the order tile pairs
// are visited (Order: as in CUTLASS, a scheduler swap is one template
// argument) and in Cfg (ring depth, C columns per store, how C is staged, who
// walks the tile order, grid size, when C is stored, whether the last round
// is split along K); each step's file holds
// its header and its launcher.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/hopper/common.cuh"
#include "ptx/cluster.cuh"
#include "ptx/common.cuh"
#include "ptx/global_sync.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sched/hilbert.h"
#include "sched/stream_k.h"
#include "sched/tile_order.h"

namespace tcgemm::kernels::hopper::tma_store {

// The kernel's shape. kStages: slots in the A/B ring. kCCols: columns of C
// staged and stored per TMA store; a consumer's 64 x 256 slice goes out in
// 256 / kCCols stores through one kCCols-column shared buffer, so a smaller
// kCCols frees shared memory for the ring (steps 10-11: 3 stages, whole
// slices; step 12: 4 stages, half slices).
template <int kStagesT, int kCColsT, bool kStmatrixT = false, bool kProducerScheduleT = false,
          bool kBalancedGridT = false, bool kDeferredStoreT = false, bool kStreamKT = false>
struct TmaStoreConfig {
  static constexpr int BM = 128;
  static constexpr int BN = 256;
  static constexpr int BK = 64;  // 64 x 2 bytes = 128 bytes: one swizzle row
  static constexpr int kStages = kStagesT;
  static constexpr int kCCols = kCColsT;
  // Write the C buffer with stmatrix (four 8 x 8 blocks per instruction)
  // instead of one 2-byte store per element (step 13).
  static constexpr bool kStmatrix = kStmatrixT;
  // Step 14: the producer alone walks the tile order and hands each tile's
  // coordinates to the consumers with its first k-tile, so the consumers
  // never leave the tensor cores idle computing a Hilbert index between tiles.
  static constexpr bool kProducerSchedule = kProducerScheduleT;
  // Step 14: launch the fewest clusters that need no more rounds of tile
  // pairs than the resident maximum does, so every cluster gets the same
  // number of pairs, or one less.
  static constexpr bool kBalancedGrid = kBalancedGridT;
  // Step 14: part of the C slice of tile t is stored under tile t + 1's
  // first k-tiles (pack_slice and store_packed_part below).
  static constexpr bool kDeferredStore = kDeferredStoreT;
  static_assert(!kDeferredStore || kStmatrix, "the deferred store stages packed pairs");
  static constexpr int kCParts = BN / kCCols;  // TMA stores per consumer slice
  // With kDeferredStore, parts before kFirstDeferredPart go out at the end
  // of the tile (the buffer was read out long ago) and only the others wait
  // in packed registers, 32 per part (acc's 128 and the packed parts must fit
  // in kConsumerRegs); deferred part d goes out after the wgmmas of k-tile
  // (d - kFirstDeferredPart + 1) * kDeferredSpacing of the next tile are
  // issued, by when the store before it has been read out of the C buffer.
  static constexpr int kFirstDeferredPart = 1;
  static constexpr int kDeferredSpacing = 2;
  static_assert(!kDeferredStore || (kCParts > kFirstDeferredPart && kFirstDeferredPart > 0),
                "the deferred store needs a part stored at once and a part deferred");
  // Step 15: the tile pairs of the last, partial round are split along K
  // over all resident clusters (sched/stream_k.h); partial sums meet in the
  // GEMM workspace. Builds on step 14's producer-walked schedule.
  static constexpr bool kStreamK = kStreamKT;
  static_assert(!kStreamK || (kProducerSchedule && kDeferredStore),
                "stream-K hands its work items over like step 14");
  // What splitting the last round costs beyond its k-tiles, in k-tiles
  // (~1.05k cycles each): every CTA writes or reads a 128 KiB partial sum at
  // about the same moment, bound by L2 bandwidth; measured on the H200 at
  // ~11 us, 16 k-tiles at 4096^3 and 8192^3 (docs/ladder.md, step 15). The
  // schedule splits the last round only when it still saves more than this.
  static constexpr int kStreamKFixupKTiles = 16;
  // And what the stream-K kernel's bookkeeping costs on its whole rounds:
  // ~1.5% (1/64) against step 14's kernel on the same data-parallel work.
  static constexpr int kStreamKOverhead64ths = 1;
  // And a k-tile of a split pair costs 1.2x one of a whole round (6/5):
  // counted at 1.0x, the schedule split 4096 x 4096 x 14336 and 1024 x 8192 x
  // 28672 for a predicted saving of 1 and 4 k-tiles and they lost 9% and 16%
  // (H200, bench/results/h200/2026-11-30-llm-hopper-15-v9.csv). Presumably
  // because clusters on split pairs run at different k offsets, so concurrent
  // tiles stop sharing A and B panels in L2 as whole rounds do (not profiled).
  static constexpr int kStreamKSplitCost5ths = 6;
  static constexpr int kConsumers = 2;
  static constexpr int kWarpgroupThreads = 128;
  static constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;
  static constexpr int kWgmmaM = 64;
  static constexpr int kWgmmaK = 16;
  static constexpr int kClusterM = 2;  // CTAs per cluster, stacked along M
  // 128 x 40 + 256 x 232 = 64512 = 384 x 168, all the registers the CTA is
  // launched with (see setmaxnreg_fits).
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static_assert(setmaxnreg_fits(kConsumers, kProducerRegs, kConsumerRegs));
  static constexpr std::uint32_t kStageBytes = (BM + BN) * BK * 2;
  static_assert(BN % kCCols == 0 && kCCols % 8 == 0);
};

// One consumer's C buffer: 64 rows x kCCols columns, column-major, 128-byte
// lines (a column of 64 two-byte rows).
constexpr int kCRows = 64;

// Where a CTA's tile starts in C (32-bit, as TMA coordinates are).
struct TileOrigin {
  std::int32_t row;
  std::int32_t col;
};

// With kProducerSchedule, a work item as the producer hands it over: the
// tile's origin, its number of k-tiles, and (kStreamK) its fixup role,
// sched::StreamKItem::peers. 16 bytes: one st.async.
struct alignas(16) WorkOrigin {
  std::int32_t row;
  std::int32_t col;
  std::int32_t k_tiles;
  std::int32_t peers;
};

// Stream-K's schedule and its view of the GEMM workspace (kStreamK only):
// per (CTA, consumer), indexed by blockIdx.x * kConsumers + consumer, one
// flag and one 64 x BN fp32 partial sum, stored as BN / 8 float4 per
// thread, [float4 index][thread], so that a warp's access is 512 contiguous
// bytes. The flags come first, in a region of fixed size (the same bytes are
// flags whatever the grid, so a workspace reused by launches of different
// grid sizes never reads an old partial as a raised flag), then the
// partials.
struct StreamKParams {
  sched::StreamKSchedule schedule;
  std::uint32_t* flags = nullptr;
  float4* partials = nullptr;
};

constexpr std::size_t kStreamKFlagBytes = 4096;  // flags of up to 512 CTAs of 2 consumers
// Where the partial sums start: past every flag a kernel keeps zero in a
// workspace between calls (these, then the production family's split-K
// flags up to 266240 bytes: prod/problem.h's kReservedWorkspaceBytes, which
// prod/kernel.cuh checks against this), so that one workspace serves this
// step and the family in turn. (The partials once started at 4096, on the
// family's flags.)
constexpr std::size_t kStreamKPartialsOffset = 512 * 1024;

template <typename Cfg>
constexpr std::int64_t stream_k_max_ctas() {
  return static_cast<std::int64_t>(kStreamKFlagBytes / (Cfg::kConsumers * sizeof(std::uint32_t)));
}

template <typename Cfg>
constexpr std::size_t stream_k_workspace_bytes(std::int64_t ctas) {
  return kStreamKPartialsOffset +
         static_cast<std::size_t>(ctas) * Cfg::kConsumers * kCRows * Cfg::BN * sizeof(float);
}

template <typename TIn, typename TOut, typename Cfg>
struct alignas(1024) SharedStorage {
  TIn a[Cfg::kStages][Cfg::BM * Cfg::BK];
  TIn b[Cfg::kStages][Cfg::BN * Cfg::BK];
  TOut c[Cfg::kConsumers][kCRows * Cfg::kCCols];
  std::uint64_t full[Cfg::kStages];
  std::uint64_t empty[Cfg::kStages];
  // With kProducerSchedule: the work item whose first k-tile a slot holds,
  // stored by the producer with st.async, which completes 16 bytes of the
  // slot's full-barrier transaction as the TMA loads complete the rest.
  WorkOrigin origin[Cfg::kStages];
};

template <typename TIn, typename TOut, typename Cfg>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn, TOut, Cfg>) + 1024;

// Element index of C(row, col) in a 128-byte-swizzled column-major C slice:
// column `col` is one 128-byte line (64 two-byte rows); its 16-byte chunk
// (8 rows) number is XORed with col % 8, the pattern TMA's SWIZZLE_128B reads.
__device__ __forceinline__ int swizzled_c_index(int row, int col) {
  constexpr int kChunkRows = 8;
  return col * kCRows + (((row / kChunkRows) ^ (col % 8)) * kChunkRows) + row % kChunkRows;
}

// Writes columns [kPart * kCCols, (kPart + 1) * kCCols) of one consumer's
// 64 x BN accumulators into its shared C buffer as alpha * acc + beta * C (C
// read from global memory, masked, when beta != 0). col0 is the buffer's first
// column in C.
template <typename TOut, typename Cfg, int kPart>
__device__ __forceinline__ void stage_c_part(const float (&acc)[Cfg::BN / 2], TOut* c_tile,
                                             const EpilogueParams& p, std::int64_t row0,
                                             std::int64_t col0) {
  const int lane = threadIdx.x % 32;
  const int row = ((threadIdx.x % Cfg::kWarpgroupThreads) / 32) * 16 + lane / 4;
  const TOut* c = static_cast<const TOut*>(p.c);
  constexpr int kChunks = Cfg::kCCols / 8;  // 8-column wgmma fragment chunks
#pragma unroll
  for (int jj = 0; jj < kChunks; ++jj) {
    const int j = kPart * kChunks + jj;  // chunk within the consumer's slice
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int r = row + (v / 2) * 8;
      const int col = jj * 8 + 2 * (lane % 4) + v % 2;
      float value = p.alpha * acc[4 * j + v];
      if (p.beta != 0.0f && row0 + r < p.m && col0 + col < p.n) {
        value += p.beta * to_float(c[(col0 + col) * p.ldc + row0 + r]);
      }
      c_tile[swizzled_c_index(r, col)] = from_float<TOut>(value);
    }
  }
}

// Packs two fp32 values as the 16-bit pair stmatrix stores (low half first).
template <typename TOut>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  std::uint32_t bits;
  if constexpr (std::is_same_v<TOut, __nv_bfloat16>) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    std::memcpy(&bits, &pair, sizeof bits);
  } else {
    const __half2 pair = __floats2half2_rn(lo, hi);
    std::memcpy(&bits, &pair, sizeof bits);
  }
  return bits;
}

// stage_c_part with stmatrix: each instruction stores two 8-column chunks of
// the warp's 16 rows (four 8 x 8 blocks: chunk jj top and bottom, chunk jj + 1
// top and bottom), transposed so that each stored 16-byte row is 8
// consecutive rows of one column of the column-major buffer. 8 lanes address
// one block's 8 columns, which the swizzle puts in 8 distinct 16-byte bank
// groups: conflict-free.
template <typename TOut, typename Cfg, int kPart>
__device__ __forceinline__ void stage_c_part_stmatrix(const float (&acc)[Cfg::BN / 2], TOut* c_tile,
                                                      const EpilogueParams& p, std::int64_t row0,
                                                      std::int64_t col0) {
  const int lane = threadIdx.x % 32;
  const int warp_row = ((threadIdx.x % Cfg::kWarpgroupThreads) / 32) * 16;
  const TOut* c = static_cast<const TOut*>(p.c);
  constexpr int kChunks = Cfg::kCCols / 8;
  // The block this lane addresses, and which of its columns.
  const int block = lane / 8;
  const int block_col = lane % 8;
#pragma unroll
  for (int jj = 0; jj < kChunks; jj += 2) {
    std::uint32_t regs[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = kPart * kChunks + jj + i / 2;  // chunk within the slice
      const int half = i % 2;                      // rows 0-7 or 8-15 of the warp
      float lo = acc[4 * j + 2 * half];
      float hi = acc[4 * j + 2 * half + 1];
      if (p.alpha != 1.0f) {
        lo *= p.alpha;
        hi *= p.alpha;
      }
      if (p.beta != 0.0f) {
        const std::int64_t r = row0 + warp_row + half * 8 + lane / 4;
        const std::int64_t col = col0 + (jj + i / 2) * 8 + 2 * (lane % 4);
        if (r < p.m && col < p.n) lo += p.beta * to_float(c[col * p.ldc + r]);
        if (r < p.m && col + 1 < p.n) hi += p.beta * to_float(c[(col + 1) * p.ldc + r]);
      }
      regs[i] = pack_pair<TOut>(lo, hi);
    }
    const int col = (jj + block / 2) * 8 + block_col;
    const int row = warp_row + (block % 2) * 8;
    ptx::stmatrix_x4_trans(c_tile + swizzled_c_index(row, col), regs[0], regs[1], regs[2], regs[3]);
  }
}

// Stores one consumer's 64 x BN slice as BN / kCCols TMA stores through its
// kCCols-column buffer. Before the buffer is rewritten, its issuing thread
// (the leader) waits until the previous store has read it, and a warpgroup
// barrier passes that on; the writers fence their generic-proxy writes to
// the async proxy before the barrier that precedes the store.
template <typename Cfg>
__device__ __forceinline__ void acquire_c_buffer(int barrier, bool leader) {
  if (leader) ptx::tma_store_wait_read<0>();
  ptx::named_barrier_sync(barrier, Cfg::kWarpgroupThreads);
}
template <typename Cfg, typename TOut>
__device__ __forceinline__ void store_c_buffer(const TOut* c_tile, const CUtensorMap* map_c,
                                               std::int64_t row0, std::int64_t col0, int barrier,
                                               bool leader) {
  ptx::fence_proxy_async_shared();
  ptx::named_barrier_sync(barrier, Cfg::kWarpgroupThreads);
  if (leader) {
    ptx::tma_store_2d(map_c, c_tile, static_cast<std::int32_t>(row0),
                      static_cast<std::int32_t>(col0));
    ptx::tma_store_commit();
  }
}

template <typename TOut, typename Cfg, int kPart = 0, int kEndPart = Cfg::BN / Cfg::kCCols>
__device__ __forceinline__ void store_slice(const float (&acc)[Cfg::BN / 2], TOut* c_tile,
                                            const CUtensorMap* map_c, const EpilogueParams& p,
                                            std::int64_t row0, std::int64_t col0, int barrier,
                                            bool leader) {
  const std::int64_t part_col0 = col0 + kPart * Cfg::kCCols;
  acquire_c_buffer<Cfg>(barrier, leader);
  if constexpr (Cfg::kStmatrix) {
    stage_c_part_stmatrix<TOut, Cfg, kPart>(acc, c_tile, p, row0, part_col0);
  } else {
    stage_c_part<TOut, Cfg, kPart>(acc, c_tile, p, row0, part_col0);
  }
  store_c_buffer<Cfg>(c_tile, map_c, row0, part_col0, barrier, leader);
  if constexpr (kPart + 1 < kEndPart) {
    store_slice<TOut, Cfg, kPart + 1, kEndPart>(acc, c_tile, map_c, p, row0, col0, barrier, leader);
  }
}

// Step 14's deferred epilogue: a finished tile's 64 x BN slice leaves the
// accumulators as packed 16-bit pairs (alpha and beta applied), and its TMA
// stores go out during the next tile's first k-tiles, under that tile's
// wgmmas (which overwrite acc, not packed). packed[2 * j + h] holds chunk j's
// two columns of row lane / 4 + 8 * h of the warp's 16 rows: stmatrix's
// operand order.
template <typename TOut, typename Cfg, int kFirstPart>
__device__ __forceinline__ void pack_slice(const float (&acc)[Cfg::BN / 2],
                                           std::uint32_t (&packed)[Cfg::BN / 4],
                                           const EpilogueParams& p, std::int64_t row0,
                                           std::int64_t col0) {
  const int lane = threadIdx.x % 32;
  const int warp_row = ((threadIdx.x % Cfg::kWarpgroupThreads) / 32) * 16;
  const TOut* c = static_cast<const TOut*>(p.c);
#pragma unroll
  for (int i = kFirstPart * Cfg::kCCols / 4; i < Cfg::BN / 4; ++i) {
    const int j = i / 2;     // 8-column chunk
    const int half = i % 2;  // rows 0-7 or 8-15 of the warp
    float lo = acc[2 * i];
    float hi = acc[2 * i + 1];
    if (p.alpha != 1.0f) {
      lo *= p.alpha;
      hi *= p.alpha;
    }
    if (p.beta != 0.0f) {
      const std::int64_t r = row0 + warp_row + half * 8 + lane / 4;
      const std::int64_t col = col0 + j * 8 + 2 * (lane % 4);
      if (r < p.m && col < p.n) lo += p.beta * to_float(c[col * p.ldc + r]);
      if (r < p.m && col + 1 < p.n) hi += p.beta * to_float(c[(col + 1) * p.ldc + r]);
    }
    packed[i] = pack_pair<TOut>(lo, hi);
  }
}

// Stores part kPart of a packed slice (columns [kPart * kCCols, (kPart + 1) *
// kCCols)) through the consumer's C buffer, with stmatrix as in
// stage_c_part_stmatrix.
template <typename TOut, typename Cfg, int kPart>
__device__ __forceinline__ void store_packed_part(const std::uint32_t (&packed)[Cfg::BN / 4],
                                                  TOut* c_tile, const CUtensorMap* map_c,
                                                  std::int64_t row0, std::int64_t col0, int barrier,
                                                  bool leader) {
  const int lane = threadIdx.x % 32;
  const int warp_row = ((threadIdx.x % Cfg::kWarpgroupThreads) / 32) * 16;
  constexpr int kChunks = Cfg::kCCols / 8;
  constexpr int kBase = 2 * kPart * kChunks;
  const int block = lane / 8;
  const int block_col = lane % 8;
  acquire_c_buffer<Cfg>(barrier, leader);
#pragma unroll
  for (int jj = 0; jj < kChunks; jj += 2) {
    const int col = (jj + block / 2) * 8 + block_col;
    const int row = warp_row + (block % 2) * 8;
    ptx::stmatrix_x4_trans(c_tile + swizzled_c_index(row, col), packed[kBase + 2 * jj],
                           packed[kBase + 2 * jj + 1], packed[kBase + 2 * jj + 2],
                           packed[kBase + 2 * jj + 3]);
  }
  store_c_buffer<Cfg>(c_tile, map_c, row0, col0 + kPart * Cfg::kCCols, barrier, leader);
}

// Stores part `part` (runtime) of a packed slice: packed is indexed with
// compile-time constants only, so it stays in registers.
template <typename TOut, typename Cfg, int kPart>
__device__ __forceinline__ void store_packed_part(int part,
                                                  const std::uint32_t (&packed)[Cfg::BN / 4],
                                                  TOut* c_tile, const CUtensorMap* map_c,
                                                  std::int64_t row0, std::int64_t col0, int barrier,
                                                  bool leader) {
  if (part == kPart) {
    store_packed_part<TOut, Cfg, kPart>(packed, c_tile, map_c, row0, col0, barrier, leader);
  } else if constexpr (kPart + 1 < Cfg::BN / Cfg::kCCols) {
    store_packed_part<TOut, Cfg, kPart + 1>(part, packed, c_tile, map_c, row0, col0, barrier,
                                            leader);
  }
}

// Stream-K numbers its workers from the last cluster down. A split tile's
// head waits for the workers after it, which are then clusters launched
// before it: the wait cannot hang even when fewer clusters fit at once than
// the occupancy query said (another kernel on the card), given that the
// hardware starts clusters in order.
__device__ __forceinline__ std::int64_t stream_k_worker(std::int64_t cluster_id,
                                                        std::int64_t clusters) {
  return clusters - 1 - cluster_id;
}

// Step 15's fixup. This thread's float4s of consumer `consumer`'s partial
// sum in CTA `cta`'s workspace slot.
template <typename Cfg>
__device__ __forceinline__ float4* partial_slice(const StreamKParams& sk, int cta, int consumer) {
  constexpr int kFloat4PerThread = Cfg::BN / 8;
  const std::size_t slice = static_cast<std::size_t>(cta) * Cfg::kConsumers + consumer;
  return sk.partials + slice * kFloat4PerThread * Cfg::kWarpgroupThreads +
         threadIdx.x % Cfg::kWarpgroupThreads;
}

// A later part of a split tile: its partial sum goes to this CTA's workspace
// slot (through L2), then the slot's flag is raised with release semantics
// once every thread's stores are ordered before it.
template <typename Cfg>
__device__ __forceinline__ void write_partial(const float (&acc)[Cfg::BN / 2],
                                              const StreamKParams& sk, int consumer, bool leader) {
  const int cta = static_cast<int>(blockIdx.x);
  float4* slice = partial_slice<Cfg>(sk, cta, consumer);
#pragma unroll
  for (int i = 0; i < Cfg::BN / 8; ++i) {
    __stcg(slice + i * Cfg::kWarpgroupThreads,
           make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
  }
  ptx::fence_acq_rel_gpu();
  ptx::named_barrier_sync(1 + consumer, Cfg::kWarpgroupThreads);
  if (leader) ptx::st_release_gpu(&sk.flags[cta * Cfg::kConsumers + consumer], 1);
}

// The head of a split tile adds the partial sum CTA `cta` wrote for it, once
// its flag is up, and lowers the flag again: every GEMM leaves the
// workspace's flags zero for the next.
template <typename Cfg>
__device__ __forceinline__ void add_partial(float (&acc)[Cfg::BN / 2], const StreamKParams& sk,
                                            int cta, int consumer, bool leader) {
  if (leader) {
    std::uint32_t* flag = &sk.flags[cta * Cfg::kConsumers + consumer];
    ptx::wait_flag_nonzero(flag);
    ptx::st_relaxed_gpu(flag, 0);
  }
  // Passes the leader's acquire on to the warpgroup.
  ptx::named_barrier_sync(1 + consumer, Cfg::kWarpgroupThreads);
  const float4* slice = partial_slice<Cfg>(sk, cta, consumer);
  // kBatch loads in flight at a time: all 32 at once would need 128 more
  // registers than the consumer has beside acc.
  constexpr int kBatch = 8;
#pragma unroll
  for (int i0 = 0; i0 < Cfg::BN / 8; i0 += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) v[i] = __ldcg(slice + (i0 + i) * Cfg::kWarpgroupThreads);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      acc[4 * (i0 + i)] += v[i].x;
      acc[4 * (i0 + i) + 1] += v[i].y;
      acc[4 * (i0 + i) + 2] += v[i].z;
      acc[4 * (i0 + i) + 3] += v[i].w;
    }
    ptx::fence_registers(acc);
  }
}

// Order: the tile-pair order (sched::GroupedOrder, sched::HilbertOrder).
template <typename TIn, typename TOut, typename Order, typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_c, EpilogueParams epilogue, std::int64_t tiles_m,
           std::int64_t tiles_n, int k_tiles, const __grid_constant__ StreamKParams stream_k) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn, TOut, Cfg>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  const std::int64_t pairs_m = sched::ceil_div(tiles_m, Cfg::kClusterM);
  const std::int64_t units = pairs_m * tiles_n;
  const std::int64_t cluster_id = blockIdx.x / Cfg::kClusterM;
  const std::int64_t clusters = gridDim.x / Cfg::kClusterM;
  const std::uint32_t rank = ptx::cluster_ctarank();

  const int warpgroup = threadIdx.x / Cfg::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      ptx::mbarrier_init(&smem.full[s], 1);
      ptx::mbarrier_init(&smem.empty[s], Cfg::kConsumers * Cfg::kClusterM);
    }
    ptx::fence_mbarrier_init();
  }
  // The peer's TMA and consumers use our barriers: inits visible cluster-wide first.
  ptx::cluster_sync();

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      ptx::tma_prefetch_descriptor(&map_a);
      ptx::tma_prefetch_descriptor(&map_b);
      RingPosition<Cfg::kStages> ring;
      constexpr std::uint16_t kAllCtas = (1u << Cfg::kClusterM) - 1;
      constexpr int kBHalfRows = Cfg::BN / Cfg::kClusterM;
      // Loads k-tiles [k_begin, k_end) of tile pair `pair`.
      auto load_pair = [&](const sched::TileCoord pair, int k_begin, int k_end, int peers) {
        const auto row_a = static_cast<std::int32_t>(
            sched::cluster_member_tile(pair, rank, Cfg::kClusterM).m * Cfg::BM);
        const auto row_b = static_cast<std::int32_t>(pair.n * Cfg::BN + rank * kBHalfRows);
        const auto col = static_cast<std::int32_t>(pair.n * Cfg::BN);
        for (int kt = k_begin; kt < k_end; ++kt, ring.advance()) {
          // A fresh barrier's "previous" phase counts as complete, so the
          // first pass (phase 0) waits on parity 1 and returns at once.
          ptx::mbarrier_wait_parity(&smem.empty[ring.slot], ring.phase ^ 1);
          if (Cfg::kProducerSchedule && kt == k_begin) {
            // The item travels with its first k-tile, through the async
            // proxy like the tile itself (a generic store, ordered by the
            // barrier's release and acquire all the same, is a race to
            // compute-sanitizer's racecheck, which does not follow mbarriers).
            ptx::mbarrier_arrive_expect_tx(&smem.full[ring.slot],
                                           Cfg::kStageBytes + sizeof(WorkOrigin));
            ptx::st_async_16(&smem.origin[ring.slot], static_cast<std::uint32_t>(row_a),
                             static_cast<std::uint32_t>(col),
                             static_cast<std::uint32_t>(k_end - k_begin),
                             static_cast<std::uint32_t>(peers), &smem.full[ring.slot]);
          } else {
            ptx::mbarrier_arrive_expect_tx(&smem.full[ring.slot], Cfg::kStageBytes);
          }
          ptx::tma_load_2d(smem.a[ring.slot], &map_a, &smem.full[ring.slot], kt * Cfg::BK, row_a);
          ptx::tma_load_2d_multicast(smem.b[ring.slot] + rank * kBHalfRows * Cfg::BK, &map_b,
                                     &smem.full[ring.slot], kt * Cfg::BK, row_b, kAllCtas);
        }
      };
      if constexpr (Cfg::kStreamK) {
        sched::StreamKCursor cursor(stream_k.schedule, stream_k_worker(cluster_id, clusters));
        sched::StreamKItem item;
        while (cursor.next(&item)) {
          load_pair(Order::tile(item.unit, pairs_m, tiles_n), item.k_begin, item.k_end, item.peers);
        }
        // The end: a slot that holds an item of no k-tiles.
        ptx::mbarrier_wait_parity(&smem.empty[ring.slot], ring.phase ^ 1);
        ptx::mbarrier_arrive_expect_tx(&smem.full[ring.slot], sizeof(WorkOrigin));
        ptx::st_async_16(&smem.origin[ring.slot], 0, 0, 0, 0, &smem.full[ring.slot]);
      } else {
        for (std::int64_t u = cluster_id; u < units; u += clusters) {
          load_pair(Order::tile(u, pairs_m, tiles_n), 0, k_tiles, 0);
        }
      }
    }
  } else {
    ptx::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % Cfg::kWarpgroupThreads == 0;
    RingPosition<Cfg::kStages> ring;
    float acc[Cfg::BN / 2];
    // kDeferredStore: the previous tile's packed slice, where it goes, and
    // its next part to store (kCParts: none pending).
    std::uint32_t pending[Cfg::BN / 4];
    // (32-bit, as TMA coordinates are: two registers fewer keep the
    // deferred store within kConsumerRegs.)
    std::int32_t pending_row0 = 0;
    std::int32_t pending_col0 = 0;
    int pending_part = Cfg::kCParts;
    auto store_pending_part = [&] {
      store_packed_part<TOut, Cfg, Cfg::kFirstDeferredPart>(pending_part++, pending,
                                                            smem.c[consumer], &map_c, pending_row0,
                                                            pending_col0, 1 + consumer, leader);
    };

    // Releases a slot in every CTA of the cluster: both producers write it.
    // The CTA's own barrier takes a local arrive, the peers' a remote one.
    auto release = [&](int slot) {
      if (leader) {
        ptx::mbarrier_arrive(&smem.empty[slot]);
#pragma unroll
        for (int peer = 1; peer < Cfg::kClusterM; ++peer) {
          ptx::mbarrier_arrive_cluster(&smem.empty[slot], (rank + peer) % Cfg::kClusterM);
        }
      }
    };

    // This cluster's units: cluster_id, cluster_id + clusters, ... (counted in
    // 32 bits: the deferred store has no register to spare).
    // (kStreamK: until the producer hands over an item of no k-tiles.)
    const int local_units =
        cluster_id < units ? static_cast<int>(sched::ceil_div(units - cluster_id, clusters)) : 0;
    // The item the producer handed over with the slot's k-tile. The barrier
    // after the item's first k-tile's wgmmas orders every warp's read before
    // the leader releases the slot; the proxy fence orders it before the
    // producer's next st.async (async proxy) into it.
    auto read_work = [&](int slot) {
      const WorkOrigin work = smem.origin[slot];
      ptx::fence_proxy_async_shared();
      return work;
    };
    for (int i = 0;; ++i) {
      TileOrigin origin;
      // kStreamK: the work item's k-tiles and fixup role (StreamKItem::peers).
      int item_k_tiles = k_tiles;
      std::int32_t peers = 0;
      if constexpr (Cfg::kStreamK) {
        // The item, read once before its mainloop.
        ptx::mbarrier_wait_parity(&smem.full[ring.slot], ring.phase);
        const WorkOrigin work = read_work(ring.slot);
        if (work.k_tiles == 0) break;
        origin = {work.row, work.col};
        item_k_tiles = work.k_tiles;
        peers = work.peers;
      } else if (i == local_units) {
        break;
      }
      if constexpr (!Cfg::kProducerSchedule) {
        const std::int64_t u = cluster_id + i * clusters;
        const sched::TileCoord tile =
            sched::cluster_member_tile(Order::tile(u, pairs_m, tiles_n), rank, Cfg::kClusterM);
        origin = {static_cast<std::int32_t>(tile.m * Cfg::BM),
                  static_cast<std::int32_t>(tile.n * Cfg::BN)};
      }
      int previous_slot = -1;
      for (int kt = 0; kt < item_k_tiles; ++kt, ring.advance()) {
        ptx::mbarrier_wait_parity(&smem.full[ring.slot], ring.phase);
        const bool read_origin = Cfg::kProducerSchedule && kt == 0;
        if constexpr (!Cfg::kStreamK) {
          if (read_origin) {
            const WorkOrigin work = read_work(ring.slot);
            origin = {work.row, work.col};
          }
        }
        ptx::wgmma_fence();
        const TIn* a_tile = smem.a[ring.slot] + consumer * Cfg::kWgmmaM * Cfg::BK;
#pragma unroll
        for (int kk = 0; kk < Cfg::BK / Cfg::kWgmmaK; ++kk) {
          ptx::wgmma_m64k16<Cfg::BN, TIn>(
              acc, ptx::make_smem_desc_k_major_sw128(a_tile + kk * Cfg::kWgmmaK),
              ptx::make_smem_desc_k_major_sw128(smem.b[ring.slot] + kk * Cfg::kWgmmaK),
              // D = A * B on the tile's first k-step: no zeroing needed.
              (kt > 0 || kk > 0) ? 1u : 0u);
        }
        ptx::wgmma_commit_group();
        if (read_origin) {
          ptx::named_barrier_sync(1 + consumer, Cfg::kWarpgroupThreads);
        }
        if constexpr (Cfg::kDeferredStore) {
          // A part of the previous tile's C every kDeferredSpacing k-tiles,
          // while this k-tile's wgmmas (and the other consumer's) keep the
          // tensor cores busy.
          if (pending_part < Cfg::kCParts &&
              kt == (pending_part - Cfg::kFirstDeferredPart + 1) * Cfg::kDeferredSpacing) {
            store_pending_part();
          }
        }
        // One group stays in flight; the one before it has finished reading
        // its slot, which goes back to the producer.
        ptx::wgmma_wait_group<1>();
        if (previous_slot >= 0) release(previous_slot);
        previous_slot = ring.slot;
      }
      ptx::wgmma_wait_group<0>();
      release(previous_slot);
      ptx::fence_registers(acc);

      const std::int64_t row0 = origin.row + consumer * Cfg::kWgmmaM;
      const std::int64_t col0 = origin.col;
      const int c_barrier = 1 + consumer;  // named barrier of this warpgroup
      if constexpr (Cfg::kDeferredStore) {
        // Parts still pending (K too short to store them under the
        // mainloop) go now; then this tile's first part, at once (its buffer
        // was read out long ago), and the rest is packed for later.
        while (pending_part < Cfg::kCParts) store_pending_part();
        if (Cfg::kStreamK && peers == sched::StreamKItem::kPartial) {
          write_partial<Cfg>(acc, stream_k, consumer, leader);
        } else {
          if constexpr (Cfg::kStreamK) {
            // The rest of the tile: the same rank's CTA in each of the next
            // `peers` workers, clusters cluster_id - 1, cluster_id - 2, ...
            // (stream_k_worker), in order (a fixed order: the sum is bitwise
            // repeatable).
            for (int peer = 1; peer <= peers; ++peer) {
              add_partial<Cfg>(acc, stream_k, static_cast<int>(blockIdx.x) - peer * Cfg::kClusterM,
                               consumer, leader);
            }
          }
          store_slice<TOut, Cfg, 0, Cfg::kFirstDeferredPart>(
              acc, smem.c[consumer], &map_c, epilogue, row0, col0, c_barrier, leader);
          pack_slice<TOut, Cfg, Cfg::kFirstDeferredPart>(acc, pending, epilogue, row0, col0);
          pending_row0 = static_cast<std::int32_t>(row0);
          pending_col0 = static_cast<std::int32_t>(col0);
          pending_part = Cfg::kFirstDeferredPart;
        }
      } else {
        store_slice<TOut, Cfg>(acc, smem.c[consumer], &map_c, epilogue, row0, col0, c_barrier,
                               leader);
      }
    }
    if constexpr (Cfg::kDeferredStore) {
      while (pending_part < Cfg::kCParts) store_pending_part();
    }
    // Shared memory must outlive the last store's reads.
    if (leader) ptx::tma_store_wait_all<0>();
  }
  // The peer may still arrive on our empty barriers: stay until it is done.
  // (The producer warp's lanes diverged around its one issuing thread.)
  __syncwarp();
  ptx::cluster_sync();
}

// Raises the kernel's shared-memory limit (which also binds the context the
// tensor-map encoder needs) and asks how many of its clusters fit on the
// device at once (stream-K relies on that many being resident together).
template <typename TIn, typename TOut, typename Order, typename Cfg>
Status prepare_kernel(std::string_view name, int* resident_clusters) {
  auto* kernel = &tma_store::kernel<TIn, TOut, Order, Cfg>;
  constexpr std::size_t kSmem = kSmemBytes<TIn, TOut, Cfg>;
  const Status status = allow_dynamic_smem(reinterpret_cast<const void*>(kernel), kSmem, name);
  if (!status.ok()) return status;
  return max_active_clusters(kernel, kSmem, Cfg::kThreads, Cfg::kClusterM, resident_clusters);
}

// A launcher for the same problem: step 15's fallback when its schedule
// splits nothing (step 14's, which is its kernel without the stream-K
// bookkeeping). Step 15 calls it rather than instantiating step 14's kernel
// a second time: the same __global__ template instance in two translation
// units is two modules behind one host stub, and a launch may then find the
// copy whose shared-memory limit was never raised (seen on the H200: invalid
// argument, when hopper-15 ran before anything had launched hopper-14).
using Launcher = Status (*)(const GemmArgs& args);

template <typename TIn, typename TOut, typename Order, typename Cfg>
Status launch_typed(const GemmArgs& args, std::string_view name, Launcher data_parallel) {
  const std::int64_t tiles_m = sched::ceil_div(args.m, Cfg::BM);
  const std::int64_t tiles_n = sched::ceil_div(args.n, Cfg::BN);
  const std::int64_t units = sched::ceil_div(tiles_m, Cfg::kClusterM) * tiles_n;
  if (units > Order::kMaxItems) {
    return {StatusCode::kNotSupported,
            std::string(name) + ": more tile pairs than its tile order can index"};
  }
  const auto k_tiles = static_cast<int>(sched::ceil_div(args.k, Cfg::BK));
  auto* kernel = &tma_store::kernel<TIn, TOut, Order, Cfg>;
  constexpr std::size_t kSmem = kSmemBytes<TIn, TOut, Cfg>;
  int resident_clusters = 0;
  Status status = prepare_kernel<TIn, TOut, Order, Cfg>(name, &resident_clusters);
  if (!status.ok()) return status;
  std::int64_t clusters = std::min<std::int64_t>(resident_clusters, units);
  if constexpr (Cfg::kBalancedGrid) {
    clusters = sched::ceil_div(units, sched::ceil_div(units, clusters));
  }
  StreamKParams stream_k;
  if constexpr (Cfg::kStreamK) {
    // Every cluster must be resident at once: a split tile's head waits for
    // partial sums from other clusters (stream_k_worker).
    stream_k.schedule =
        sched::make_stream_k_schedule(units, k_tiles, resident_clusters, Cfg::kStreamKFixupKTiles,
                                      Cfg::kStreamKOverhead64ths, Cfg::kStreamKSplitCost5ths);
    if (stream_k.schedule.sk_iters == 0) {
      if (data_parallel == nullptr) {
        return {StatusCode::kNotSupported, std::string(name) + ": no data-parallel fallback"};
      }
      return data_parallel(args);
    }
    clusters = stream_k.schedule.workers;
    const std::int64_t ctas = clusters * Cfg::kClusterM;
    if (ctas > stream_k_max_ctas<Cfg>()) {
      return {StatusCode::kNotSupported,
              std::string(name) + ": more CTAs than its workspace has flags for"};
    }
    const std::size_t needed = stream_k_workspace_bytes<Cfg>(ctas);
    if (args.workspace == nullptr || args.workspace_bytes < needed) {
      return {StatusCode::kNotSupported,
              std::string(name) + ": needs " + std::to_string(needed) +
                  " bytes of workspace (tcgemm::workspace_size); args.workspace_bytes is " +
                  std::to_string(args.workspace == nullptr ? 0 : args.workspace_bytes)};
    }
    auto* base = static_cast<std::uint8_t*>(args.workspace);
    stream_k.flags = reinterpret_cast<std::uint32_t*>(base);
    stream_k.partials = reinterpret_cast<float4*>(base + kStreamKPartialsOffset);
  }
  CUtensorMap map_a;
  CUtensorMap map_b;
  status = make_tn_tensor_maps(args, Cfg::BK, Cfg::BM, Cfg::BN / Cfg::kClusterM, &map_a, &map_b);
  if (!status.ok()) return status;
  // C column-major M x N: M contiguous; one box is 64 rows x kCCols columns.
  CUtensorMap map_c;
  status =
      encode_tensor_map({args.c.ptr, args.c.dtype, static_cast<std::uint64_t>(args.m),
                         static_cast<std::uint64_t>(args.n), static_cast<std::uint64_t>(args.c.ld),
                         kCRows, Cfg::kCCols, CU_TENSOR_MAP_SWIZZLE_128B},
                        &map_c);
  if (!status.ok()) return status;
  return launch_kernel(kernel, name, static_cast<unsigned>(clusters * Cfg::kClusterM),
                       Cfg::kThreads, kSmem, Cfg::kClusterM, args.stream, map_a, map_b, map_c,
                       epilogue_params(args), tiles_m, tiles_n, k_tiles, stream_k);
}

// The workspace a kStreamK step needs on the current device: a slot per CTA
// of the largest grid it launches (one CTA per SM at most). 0 when the
// device cannot be queried (the launch then reports the error).
template <typename Cfg>
std::size_t stream_k_workspace_size() {
  int sms = 0;
  if (!multiprocessor_count(&sms).ok()) return 0;
  return stream_k_workspace_bytes<Cfg>(sms);
}

// The launcher of steps 10-15, which differ in Order and Cfg (and step 15
// in its data-parallel fallback).
template <typename Order, typename Cfg>
Status launch(const GemmArgs& args, std::string_view name, Launcher data_parallel = nullptr) {
  return visit_tn_types(args, [&]<typename TIn, typename TOut>() {
    if constexpr (std::is_same_v<TOut, float>) {
      return Status{StatusCode::kNotSupported, std::string(name) + ": fp32 output"};
    } else {
      return launch_typed<TIn, TOut, Order, Cfg>(args, name, data_parallel);
    }
  });
}

}  // namespace tcgemm::kernels::hopper::tma_store
