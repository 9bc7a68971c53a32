// The production GEMM kernel: one template for every storage order, shape,
// alignment and batch, its shape taken from a row of the config table
// (config.h). Grown from Hopper ladder step 14 (k14_deferred_store.cu):
//
//   producer  one thread of warpgroup 0 walks the tiles (persistent
//             clusters; batch entries one after another, a Hilbert curve
//             inside each) and feeds a ring of `stages` slots with TMA:
//             A as one K-major box or BM / 64 M-major boxes, B as one K-major
//             box or BN / 64 N-major boxes per tile, each CTA of a cluster
//             loading its share and multicasting it; in clusters of 2,
//             each tile's coordinates ride with its first k-tile (st.async,
//             completed on the slot's full barrier); without a cluster the
//             consumers walk the order too.
//   consumers warpgroups 1..consumers each own 64 rows of the tile:
//             wgmma m64nBNk16 with each operand K- or MN-major (the
//             instruction's transpose bits; descriptors in ptx/wgmma.cuh).
//   epilogue  C column-major (the host turns a row-major C into C^T =
//             B^T A^T): 16-bit C that TMA can address, M a multiple of 8, is
//             staged with stmatrix and stored by TMA, part of it deferred
//             under the next tile's mainloop; otherwise (C that TMA cannot
//             address, or M % 8 != 0, where a TMA store would write up to 7
//             rows past M: docs/hopper-notes.md) 16-bit C is staged the same
//             way and written from shared memory in 16-byte chunks of its
//             columns, realigned where a column starts off 16 bytes (in the
//             deferred-store rows by warps 1.. of warpgroup 0, the copy
//             warps, all but a CTA's last tile), and fp32 C goes from
//             registers to global memory, masked. A flipped
//             choice (the other orientation: C^T for a column-major C, C for
//             a row-major one) writes its output row-major: staged with
//             (untransposed) stmatrix and stored by TMA where TMA can address
//             it and N is a multiple of 8, from registers otherwise.
//             Each way of storing C is its own instance (CStore).
//
// Shape, K, alignment and batch are all runtime data: out-of-bounds boxes
// load as zeros, so any M, N, K >= 1 runs on the same path.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/hopper/common.cuh"
#include "kernels/hopper/tma_store_kernel.cuh"
#include "kernels/prod/config.h"
#include "kernels/prod/params.h"
#include "kernels/prod/problem.h"
#include "kernels/prod/realign.cuh"
#include "ptx/cluster.cuh"
#include "ptx/common.cuh"
#include "ptx/global_sync.cuh"
#include "ptx/griddep.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sched/hilbert.h"
#include "sched/stream_k.h"
#include "sched/tile_order.h"

namespace tcgemm::kernels::prod {

using tcgemm::prod::kChunk;
using tcgemm::prod::kConfigs;
using tcgemm::prod::kCRows;
using tcgemm::prod::TileConfig;

// Table row kConfig as the compile-time names the kernel (and the ladder's C
// staging helpers it shares, hopper::tma_store) read.
template <int kConfig>
struct Shape {
  static constexpr TileConfig kTile = kConfigs[kConfig].tile;
  static constexpr int BM = kTile.bm;
  static constexpr int BN = kTile.bn;
  static constexpr int BK = kTile.bk;
  static constexpr int kStages = kTile.stages;
  static constexpr int kConsumers = kTile.consumers;
  static constexpr int kClusterM = kTile.cluster_m;
  static constexpr int kCCols = kTile.c_cols;
  static constexpr int kCParts = BN / kCCols;
  static constexpr bool kDeferredStore = kTile.deferred_store;
  static constexpr int kFirstDeferredPart = 1;
  static constexpr int kDeferredSpacing = 2;
  static constexpr int kWarpgroupThreads = tcgemm::prod::kWarpgroupThreads;
  static constexpr int kThreads = tcgemm::prod::threads(kTile);
  static constexpr int kCtasPerSm = kTile.ctas_per_sm;
  static constexpr int kWgmmaK = tcgemm::prod::kWgmmaK;
  static constexpr std::uint32_t kStageBytes = (BM + BN) * BK * 2;
  // MN-major operands arrive as 64-element (128-byte) chunks of BK rows.
  static constexpr std::uint32_t kChunkBytes = kChunk * BK * 2;
  // Rows of a K-major B each CTA of a cluster loads and multicasts (whole
  // 8-row swizzle atoms); an N-major B's BN / 64 chunks (BN a multiple of
  // 64: tcgemm::prod::takes_b) are shared out as evenly as they go (192
  // columns: two and one), CTA r taking chunks [b_chunk(r), b_chunk(r + 1)).
  static constexpr int kBRowsPerCta = BN / kClusterM;
  static constexpr int kBChunks = BN / kChunk;
  static constexpr int b_chunk(int rank) { return (rank * kBChunks + kClusterM - 1) / kClusterM; }
  // st.async (the producer's hand-over of each tile's coordinates) needs a
  // cluster of at least 2 CTAs (compute-sanitizer on the H200: "Cluster needs
  // to have at least 2 blocks"); without one the consumers walk the tile
  // order themselves, as ladder steps 6-13 do.
  static constexpr bool kHandOff = kClusterM > 1;
  // Two or three consumers trade registers with the producer as in the
  // ladder (128 x 40 + 256 x 232 = 384 x 168, the launch allocation; 128 x
  // 40 + 384 x 152 <= 512 x 128); one consumer keeps the compiler's
  // allocation (setmaxnreg.inc past it would hang). The instances with copy
  // warps split 56 / 224 instead (kernel()).
  static constexpr bool kSetmaxnreg = kConsumers >= 2;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = kConsumers == 2 ? 232 : 152;
  static_assert(!kSetmaxnreg ||
                (kCtasPerSm == 1 &&
                 hopper::setmaxnreg_fits(kConsumers, kProducerRegs, kConsumerRegs)));
  static_assert(BM == 64 * kConsumers && BK == kChunk && BN % 16 == 0 && BN <= 256);
  static_assert(kBRowsPerCta % 8 == 0 && kBRowsPerCta <= 256, "a TMA box is <= 256 lines");
  static_assert(BN % kCCols == 0 && kCCols % 16 == 0);
  static_assert(!kDeferredStore || (kCParts > kFirstDeferredPart && kConsumers == 2));
};

// A work item as the producer hands it over with the tile's first k-tile
// (one st.async of 16 bytes).
struct alignas(16) WorkItem {
  std::int32_t row;
  std::int32_t col;
  std::int32_t batch;
  std::int32_t split;  // the K split piece, -1 for all of K
};

// Work unit `unit` (Params' order) and which of its K split pieces a
// persistent CTA's work index `w` is: the first whole_units indices are
// whole units, each later unit takes k_splits consecutive indices.
struct Piece {
  std::int64_t unit;
  std::int32_t split;  // -1: all of K
};

__device__ __forceinline__ Piece piece_of(const Params& p, std::int64_t w) {
  if (p.k_splits == 1 || w < p.whole_units) return {w, -1};
  const std::int64_t d = w - p.whole_units;
  const std::int64_t unit = d / p.k_splits;
  return {p.whole_units + unit, static_cast<std::int32_t>(d - unit * p.k_splits)};
}

// Work indices there are: whole units, then k_splits pieces of every other.
__host__ __device__ __forceinline__ std::int64_t pieces(const Params& p, std::int64_t units) {
  return p.k_splits == 1 ? units : p.whole_units + (units - p.whole_units) * p.k_splits;
}

// The k-tiles [begin, end) of piece `split` (-1: every k-tile).
struct KRange {
  int begin;
  int end;
  __device__ __forceinline__ int count() const { return end - begin; }
};

__device__ __forceinline__ KRange k_range_of(const Params& p, std::int32_t split) {
  if (split < 0) return {0, p.k_tiles};
  const int begin = split * p.k_tiles_per_split;
  return {begin, min(p.k_tiles, begin + p.k_tiles_per_split)};
}

// The stream-K tail's schedule (Params::sk_*) over `clusters` workers.
__device__ __forceinline__ sched::StreamKSchedule stream_k_schedule(const Params& p,
                                                                   std::int64_t units,
                                                                   std::int64_t clusters) {
  sched::StreamKSchedule s;
  s.units = units;
  s.workers = clusters;
  s.dp_units = p.sk_dp_units;
  s.sk_iters = p.sk_iters;
  s.k_tiles = p.k_tiles;
  return s;
}

// One work item of a cluster: a unit (or split-K piece), its k-tiles, and
// its part in a stream-K fixup (sched::StreamKItem::peers; 0 outside one).
struct Item {
  Piece piece;
  KRange k;
  std::int32_t peers;
};

// The tile of work unit u (batch entries one after another, tile pairs of a
// cluster along a Hilbert curve inside each entry) for cluster rank `rank`.
template <typename S>
__device__ __forceinline__ WorkItem work_of(Piece piece, std::int64_t units,
                                            std::int64_t units_per_batch, std::int64_t pairs_m,
                                            std::int64_t tiles_n, std::uint32_t rank) {
  const std::int64_t u = piece.unit;
  // (A 64-bit division is a ~100-instruction call: only batches pay it.)
  const std::int64_t batch = units_per_batch == units ? 0 : u / units_per_batch;
  const sched::TileCoord unit =
      sched::HilbertOrder::tile(u - batch * units_per_batch, pairs_m, tiles_n);
  return {static_cast<std::int32_t>(sched::cluster_member_tile(unit, rank, S::kClusterM).m * S::BM),
          static_cast<std::int32_t>(unit.n * S::BN), static_cast<std::int32_t>(batch), piece.split};
}

// A staged part of C handed from a consumer to its copy warp (copy_warp):
// where the part goes (C's batch entry, the part's first row and column).
struct alignas(16) CPartJob {
  // nullptr: the consumer is done, no part follows. (C itself is never null
  // here: validate() and a plan's run refuse a null C.)
  void* c;
  std::int32_t row0;
  std::int32_t col0;
};

template <typename TIn, typename TOut, int kConfig>
struct alignas(1024) SharedStorage {
  using S = Shape<kConfig>;
  static constexpr bool kCBuffer = sizeof(TOut) == 2;
  TIn a[S::kStages][S::BM * S::BK];
  TIn b[S::kStages][S::BN * S::BK];
  // One C buffer per consumer, 64 rows x kCCols columns (16-bit C only).
  std::conditional_t<kCBuffer, TOut[S::kConsumers][kCRows * S::kCCols], std::uint8_t[1024]> c;
  std::uint64_t full[S::kStages];
  std::uint64_t empty[S::kStages];
  WorkItem work[S::kStages];
  // Each consumer's C buffer passed to its copy warp and back (copy_warp).
  CPartJob c_job[S::kConsumers];
  std::uint64_t c_full[S::kConsumers];
  std::uint64_t c_empty[S::kConsumers];
};

// --- epilogue: TMA stores of C's parts ------------------------------------
// The ladder's store helpers (hopper::tma_store::store_c_buffer, store_slice,
// store_packed_part) with a batch coordinate (a batched C's map is 3-D) and a
// row-major form (kRow: CStore::kTmaRowMajor, a flipped choice's output). The
// ladder is frozen; its column-major staging helpers (stage_c_part_stmatrix,
// pack_slice, acquire_c_buffer) are shared as they are.

// A row-major part in a consumer's C buffer (kCRows x kCCols): boxes of
// row_major_c_box_cols columns one after another, each row-major; swizzled
// boxes (64 columns) hold each row as one 128-byte line whose 16-byte chunks
// are XORed with row % 8, the pattern TMA's SWIZZLE_128B reads.
template <typename S>
struct RowMajorCBuffer {
  static constexpr bool kSwizzled = tcgemm::prod::row_major_c_swizzled(S::kTile);
  static constexpr int kBoxCols = tcgemm::prod::row_major_c_box_cols(S::kTile);
  static constexpr int kBoxes = S::kCCols / kBoxCols;
  static_assert(S::kCCols % kBoxCols == 0 && kBoxCols % 8 == 0);
  // Element index of part element (row, col), col a multiple of 8 (the
  // start of a 16-byte chunk).
  static __device__ __forceinline__ int index(int row, int col) {
    const int box = col / kBoxCols;
    const int c = col % kBoxCols;
    const int chunk = kSwizzled ? (c / 8) ^ (row % 8) : c / 8;
    return (box * kCRows + row) * kBoxCols + chunk * 8;
  }
};

// One TMA store per box of the consumer's C buffer, its top-left element at
// C(row0, col0) (column-major: one box of kCRows x kCCols).
template <typename S, bool kRow, typename TOut>
__device__ __forceinline__ void store_c_buffer(const TOut* c_tile, const CUtensorMap* map_c,
                                               std::int32_t row0, std::int32_t col0,
                                               std::int32_t batch, int barrier, bool leader) {
  ptx::fence_proxy_async_shared();
  ptx::named_barrier_sync(barrier, S::kWarpgroupThreads);
  if (leader) {
    const auto store = [&](const TOut* box, std::int32_t inner, std::int32_t outer) {
      // batch < 0: C is one matrix, its map 2-D.
      if (batch >= 0) {
        ptx::tma_store_3d(map_c, box, inner, outer, batch);
      } else {
        ptx::tma_store_2d(map_c, box, inner, outer);
      }
    };
    if constexpr (kRow) {
      using Buffer = RowMajorCBuffer<S>;
#pragma unroll
      for (int b = 0; b < Buffer::kBoxes; ++b) {
        store(c_tile + b * kCRows * Buffer::kBoxCols, col0 + b * Buffer::kBoxCols, row0);
      }
    } else {
      store(c_tile, row0, col0);
    }
    ptx::tma_store_commit();
  }
}

// Entry i of a consumer's slice as the 16-bit pair stmatrix stores (chunk
// i / 2's two columns of row lane / 4 + 8 (i % 2) of the warp's 16 rows),
// alpha and beta applied, beta reading a row-major C (the column-major form
// is inside hopper::tma_store::pack_slice and stage_c_part_stmatrix).
template <typename TOut, typename S>
__device__ __forceinline__ std::uint32_t row_major_pair(const float (&acc)[S::BN / 2], int i,
                                                        const hopper::EpilogueParams& ep,
                                                        std::int32_t row0, std::int32_t col0) {
  float lo = acc[2 * i];
  float hi = acc[2 * i + 1];
  if (ep.alpha != 1.0f) {
    lo *= ep.alpha;
    hi *= ep.alpha;
  }
  if (ep.beta != 0.0f) {
    const int lane = threadIdx.x % 32;
    const int warp_row = ((threadIdx.x % S::kWarpgroupThreads) / 32) * 16;
    const TOut* c = static_cast<const TOut*>(ep.c);
    const std::int64_t r = std::int64_t{row0} + warp_row + (i % 2) * 8 + lane / 4;
    const std::int64_t col = std::int64_t{col0} + (i / 2) * 8 + 2 * (lane % 4);
    if (r < ep.m && col < ep.n) lo += ep.beta * to_float(c[r * ep.ldc + col]);
    if (r < ep.m && col + 1 < ep.n) hi += ep.beta * to_float(c[r * ep.ldc + col + 1]);
  }
  return hopper::tma_store::pack_pair<TOut>(lo, hi);
}

// Entries [kBegin, BN / 4) of a consumer's slice into `packed` (the deferred
// store's registers), row_major_pair's way.
template <typename TOut, typename S, int kBegin>
__device__ __forceinline__ void pack_slice_row_major(const float (&acc)[S::BN / 2],
                                                     std::uint32_t (&packed)[S::BN / 4],
                                                     const hopper::EpilogueParams& ep,
                                                     std::int32_t row0, std::int32_t col0) {
#pragma unroll
  for (int i = kBegin; i < S::BN / 4; ++i)
    packed[i] = row_major_pair<TOut, S>(acc, i, ep, row0, col0);
}

// The address this lane gives stmatrix for matrix lane / 8 of chunks (jj,
// jj + 1) of a part in the consumer's C buffer: row-major (kRow), or
// transposed into column-major lines. Matrix b is chunk jj + b / 2, rows
// 8 (b % 2) on of the warp's 16.
template <typename S, bool kRow, typename TOut>
__device__ __forceinline__ TOut* stmatrix_address(TOut* c_tile, int jj) {
  const int lane = threadIdx.x % 32;
  const int warp_row = ((threadIdx.x % S::kWarpgroupThreads) / 32) * 16;
  const int block = lane / 8;
  if constexpr (kRow) {
    return c_tile +
           RowMajorCBuffer<S>::index(warp_row + (block % 2) * 8 + lane % 8, (jj + block / 2) * 8);
  } else {
    return c_tile + hopper::tma_store::swizzled_c_index(warp_row + (block % 2) * 8,
                                                        (jj + block / 2) * 8 + lane % 8);
  }
}

// Stages part kPart of a consumer's slice straight from the accumulators,
// row-major, four pairs at a time (the column-major form is
// hopper::tma_store::stage_c_part_stmatrix). Packing the whole part first
// and staging it with stage_packed_part spilled prod-64x64's 80 registers.
template <typename TOut, typename S, int kPart>
__device__ __forceinline__ void stage_part_row_major(const float (&acc)[S::BN / 2], TOut* c_tile,
                                                     const hopper::EpilogueParams& ep,
                                                     std::int32_t row0, std::int32_t col0) {
  constexpr int kChunks = S::kCCols / 8;
#pragma unroll
  for (int jj = 0; jj < kChunks; jj += 2) {
    constexpr int kBase = 2 * kPart * kChunks;
    std::uint32_t regs[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      regs[u] = row_major_pair<TOut, S>(acc, kBase + 2 * jj + u, ep, row0, col0);
    }
    ptx::stmatrix_x4(stmatrix_address<S, true>(c_tile, jj), regs[0], regs[1], regs[2], regs[3]);
  }
}

// Writes part kPart of a packed slice into the consumer's C buffer with
// stmatrix: transposed into column-major lines, or row-major (kRow).
template <typename TOut, typename S, int kPart, bool kRow>
__device__ __forceinline__ void stage_packed_part(const std::uint32_t (&packed)[S::BN / 4],
                                                  TOut* c_tile) {
  constexpr int kChunks = S::kCCols / 8;
  constexpr int kBase = 2 * kPart * kChunks;
#pragma unroll
  for (int jj = 0; jj < kChunks; jj += 2) {
    TOut* const address = stmatrix_address<S, kRow>(c_tile, jj);
    if constexpr (kRow) {
      ptx::stmatrix_x4(address, packed[kBase + 2 * jj], packed[kBase + 2 * jj + 1],
                       packed[kBase + 2 * jj + 2], packed[kBase + 2 * jj + 3]);
    } else {
      ptx::stmatrix_x4_trans(address, packed[kBase + 2 * jj], packed[kBase + 2 * jj + 1],
                             packed[kBase + 2 * jj + 2], packed[kBase + 2 * jj + 3]);
    }
  }
}

// Stages and stores parts [kPart, kEnd) of a consumer's 64 x BN slice.
template <typename TOut, typename S, int kPart, int kEnd, bool kRow = false>
__device__ __forceinline__ void store_slice(const float (&acc)[S::BN / 2], TOut* c_tile,
                                            const CUtensorMap* map_c,
                                            const hopper::EpilogueParams& ep, std::int32_t row0,
                                            std::int32_t col0, std::int32_t batch, int barrier,
                                            bool leader) {
  if constexpr (kPart < kEnd) {
    const std::int32_t part_col0 = col0 + kPart * S::kCCols;
    hopper::tma_store::acquire_c_buffer<S>(barrier, leader);
    if constexpr (kRow) {
      stage_part_row_major<TOut, S, kPart>(acc, c_tile, ep, row0, col0);
    } else {
      hopper::tma_store::stage_c_part_stmatrix<TOut, S, kPart>(acc, c_tile, ep, row0, part_col0);
    }
    store_c_buffer<S, kRow>(c_tile, map_c, row0, part_col0, batch, barrier, leader);
    store_slice<TOut, S, kPart + 1, kEnd, kRow>(acc, c_tile, map_c, ep, row0, col0, batch, barrier,
                                                leader);
  }
}

// Stores part `part` (runtime) of a slice packed by pack_slice (hopper::
// tma_store's, or pack_slice_row_major with kRow); `packed` is indexed with
// constants only, so it stays in registers.
template <typename TOut, typename S, int kPart, bool kRow = false>
__device__ __forceinline__ void store_packed_part(int part,
                                                  const std::uint32_t (&packed)[S::BN / 4],
                                                  TOut* c_tile, const CUtensorMap* map_c,
                                                  std::int32_t row0, std::int32_t col0,
                                                  std::int32_t batch, int barrier, bool leader) {
  if (part == kPart) {
    hopper::tma_store::acquire_c_buffer<S>(barrier, leader);
    stage_packed_part<TOut, S, kPart, kRow>(packed, c_tile);
    store_c_buffer<S, kRow>(c_tile, map_c, row0, col0 + kPart * S::kCCols, batch, barrier, leader);
  } else if constexpr (kPart + 1 < S::kCParts) {
    store_packed_part<TOut, S, kPart + 1, kRow>(part, packed, c_tile, map_c, row0, col0, batch,
                                                barrier, leader);
  }
}

// --- epilogue: registers to a row-major C -------------------------------------

// Two consecutive elements of C in one load or store.
template <typename T>
struct PairOf;
template <>
struct PairOf<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ type make(float x, float y) {
    return __floats2bfloat162_rn(x, y);
  }
  static __device__ __forceinline__ float2 unpack(type v) { return __bfloat1622float2(v); }
};
template <>
struct PairOf<__half> {
  using type = __half2;
  static __device__ __forceinline__ type make(float x, float y) { return __floats2half2_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(type v) { return __half22float2(v); }
};
template <>
struct PairOf<float> {
  using type = float2;
  static __device__ __forceinline__ type make(float x, float y) { return make_float2(x, y); }
  static __device__ __forceinline__ float2 unpack(type v) { return v; }
};

// One consumer's 64 x kN accumulators, top-left element C(row0, col0), to a
// row-major C (CStore::kRowMajor): element (r, c) at r * ldc + c, masked at
// the M and N edges. A thread holds columns c and c + 1 of rows r and r + 8
// (ptx/wgmma.cuh): each pair leaves in one store where C's base and an even
// ldc keep it aligned (c is even), element by element otherwise.
template <typename TOut, int kN>
__device__ __forceinline__ void store_accumulators_row_major(const float (&acc)[kN / 2],
                                                             const hopper::EpilogueParams& p,
                                                             std::int64_t row0, std::int64_t col0) {
  using Pair = PairOf<TOut>;
  const int lane = threadIdx.x % 32;
  const std::int64_t row =
      row0 + (threadIdx.x % tcgemm::prod::kWarpgroupThreads) / 32 * 16 + lane / 4;
  const std::int64_t col = col0 + 2 * (lane % 4);
  const bool paired =
      p.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % sizeof(typename Pair::type) == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t r = row + 8 * h;
    if (r >= p.m) continue;
    TOut* const out_row = static_cast<TOut*>(p.c) + r * p.ldc + col;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
      TOut* const out = out_row + 8 * j;
      const std::int64_t c = col + 8 * j;
      float x = p.alpha * acc[4 * j + 2 * h];
      float y = p.alpha * acc[4 * j + 2 * h + 1];
      if (paired && c + 1 < p.n) {
        auto* const pair = reinterpret_cast<typename Pair::type*>(out);
        if (p.beta != 0.0f) {
          const float2 old = Pair::unpack(*pair);
          x += p.beta * old.x;
          y += p.beta * old.y;
        }
        *pair = Pair::make(x, y);
      } else {
        if (c < p.n) {
          if (p.beta != 0.0f) x += p.beta * to_float(out[0]);
          out[0] = from_float<TOut>(x);
        }
        if (c + 1 < p.n) {
          if (p.beta != 0.0f) y += p.beta * to_float(out[1]);
          out[1] = from_float<TOut>(y);
        }
      }
    }
  }
}

// --- epilogue: registers to a column-major C through shared memory ------------
// A 16-bit column-major C that TMA cannot store (a leading dimension or base
// off 16 bytes, M % 8 != 0) leaves the tile as the TMA store's does, staged
// part by part in the consumer's C buffer with stmatrix (alpha and beta
// applied), and then goes from shared memory to C in whole 16-byte chunks of
// a column, realigned in registers where the column does not start on 16
// bytes. Stored from the accumulators instead, each warp-wide store wrote 2
// bytes a lane in four 16-byte pieces: 524,288 store instructions at
// 4092 x 4096 x 4096 on prod-128x256, the tensor pipe 79% busy against 94%
// with the TMA store and 208 us against 182 (ncu, H200,
// bench/results/h200/ncu/2026-12-02-ncu-*.txt).

// Copies a staged part (64 rows x kCCols columns of the swizzled C buffer)
// to C at row0, part_col0: kThreads threads, this one number `t`.
//
// Column x of a part is 64 rows, eight 16-byte chunks in the buffer; 8 lanes
// take a column, lane k its chunk k (rows 8k .. 8k + 7). Where the column's
// first element sits h elements past a 16-byte boundary, the aligned chunk
// that holds rows 8k - h .. 8k - h + 7 (k = 1..7) is the end of chunk k - 1
// and the start of chunk k, one 16-byte store; the 8 rows left over (0 .. 7 -
// h and 64 - h .. 63) go out one element per lane. Both chunks and the
// leftover element are read from shared memory, kBatch columns' loads
// before their stores. (Taken from the neighbouring lanes by shuffles
// instead, 4096^3 with ldc 4097 ran 1.2% slower and 4092 x 4096 x 1024
// 1.7%: docs/production-log.md, "The staged epilogue's copy".)
template <typename S, int kThreads, int kBatch>
__device__ __forceinline__ void copy_part_out(const std::uint16_t* c_tile,
                                              const hopper::EpilogueParams& p, std::int64_t row0,
                                              std::int64_t part_col0, unsigned t) {
  static_assert(tcgemm::prod::kCRows == 64);
  constexpr int step = kThreads / 8;
  static_assert(kThreads % 8 == 0 && S::kCCols % (kBatch * step) == 0);
  using hopper::tma_store::swizzled_c_index;
  const auto k = static_cast<int>(t % 8);
  const int rows = static_cast<int>(std::clamp<std::int64_t>(p.m - row0, 0, 64));
#pragma unroll 1
  for (int x0 = static_cast<int>(t / 8); x0 < S::kCCols; x0 += kBatch * step) {
    std::uint16_t* column[kBatch];
    int h[kBatch];
    uint4 chunk[kBatch];
    uint4 before[kBatch];
    std::uint16_t leftover[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int x = x0 + b * step;
      column[b] = static_cast<std::uint16_t*>(p.c) + (part_col0 + x) * p.ldc + row0;
      h[b] = static_cast<int>(reinterpret_cast<std::uintptr_t>(column[b]) % 16 / 2);
      chunk[b] = ptx::ld_shared_v4(c_tile + swizzled_c_index(8 * k, x));
      before[b] = ptx::ld_shared_v4(c_tile + swizzled_c_index(8 * ((k + 7) % 8), x));
      leftover[b] = ptx::ld_shared_u16(c_tile + swizzled_c_index(k < 8 - h[b] ? k : 56 + k, x));
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int x = x0 + b * step;
      if (part_col0 + x < p.n) {
        if (rows < 64) {
          // An edge tile's last rows: element by element.
          const int end = std::min(8 * k + 8, rows);
#pragma unroll 1
          for (int r = 8 * k; r < end; ++r) column[b][r] = c_tile[swizzled_c_index(r, x)];
        } else if (h[b] == 0) {
          ptx::st_global_v4(column[b] + 8 * k, chunk[b]);
        } else {
          if (k > 0) {
            ptx::st_global_v4(column[b] + 8 * k - h[b],
                              shift_chunk(before[b], chunk[b], static_cast<std::uint32_t>(8 - h[b])));
          }
          column[b][k < 8 - h[b] ? k : 56 + k] = leftover[b];
        }
      }
    }
  }
}

// Stages part kPart of a consumer's slice and copies it to C, at most
// kMaxUnroll columns a pass.
template <typename TOut, typename S, int kPart, int kMaxUnroll = 2>
__device__ __forceinline__ void store_part_staged(const float (&acc)[S::BN / 2], TOut* c_tile,
                                                  const hopper::EpilogueParams& p,
                                                  std::int64_t row0, std::int64_t col0,
                                                  int barrier) {
  static_assert(sizeof(TOut) == 2);
  constexpr int kThreads = S::kWarpgroupThreads;
  const std::int64_t part_col0 = col0 + kPart * S::kCCols;
  // Every thread is done reading the buffer's previous part.
  ptx::named_barrier_sync(barrier, kThreads);
  hopper::tma_store::stage_c_part_stmatrix<TOut, S, kPart>(acc, c_tile, p, row0, part_col0);
  ptx::named_barrier_sync(barrier, kThreads);
  // (Two columns a pass where registers allow, and where they divide the
  // part's columns: the 64 x 64 row's 80 registers and three consumers'
  // 152 spill.)
  constexpr int kUnroll = kMaxUnroll >= 2 && S::kCtasPerSm == 1 && S::kConsumers <= 2 &&
                                  S::kCCols % (2 * kThreads / 8) == 0
                              ? 2
                              : 1;
  copy_part_out<S, kThreads, kUnroll>(reinterpret_cast<const std::uint16_t*>(c_tile), p, row0,
                                      part_col0, static_cast<unsigned>(threadIdx.x % kThreads));
}

// Every part of a consumer's slice, staged and stored in turn.
template <typename TOut, typename S, int kPart = 0, int kMaxUnroll = 2>
__device__ __forceinline__ void store_slice_staged(const float (&acc)[S::BN / 2], TOut* c_tile,
                                                   const hopper::EpilogueParams& p,
                                                   std::int64_t row0, std::int64_t col0,
                                                   int barrier) {
  store_part_staged<TOut, S, kPart, kMaxUnroll>(acc, c_tile, p, row0, col0, barrier);
  if constexpr (kPart + 1 < S::kCParts) {
    store_slice_staged<TOut, S, kPart + 1, kMaxUnroll>(acc, c_tile, p, row0, col0, barrier);
  }
}

// --- epilogue: the copy warps' deferred store -----------------------------------

// A 16-bit column-major C that TMA cannot address (ldc, base or batch stride
// off 16 bytes) in a deferred-store row: what TMA's bulk store does for the
// other instances, the producer warpgroup's idle warps do. Warp 1 + c copies
// consumer c's staged parts out of its C buffer (copy_part_out), so that the
// consumer stages a part and goes on, and its tile's later parts leave
// under the next tile's mainloop, as a deferred TMA store's do. The buffer passes
// between them through two mbarriers: c_full (the consumer's 128 threads
// arrive once the part and its CPartJob are in) and c_empty (the warp's 32
// lanes arrive once they have read it). The n-th hand-over (n = 0, 1, ..)
// waits on c_empty's parity (n & 1) ^ 1 (a fresh barrier's previous phase
// counts as complete) and the warp's n-th copy on c_full's parity n & 1.
// A job with c == nullptr ends the warp's loop. A CTA's last tile, with no
// mainloop after it, is copied by its consumers (a warp copies a part far
// slower than 128 threads). H100, 4096^3 with ldc = 4097: 0.1959 -> 0.1885
// ms against 0.1778 with C stored by TMA (bench/results/h100/2026-12-07-s27).
// The first form (each part due 8 k-tiles into the next tile, 40 registers,
// the last tile through the warps too) ran 3-35% slower on 9 of 10 such
// problems: the consumers waited on the warps.
struct CopyHandOff {
  std::uint64_t* full;
  std::uint64_t* empty;
  CPartJob* job;
  std::uint32_t count = 0;  // hand-overs so far

  // Blocks until the copy warp has read the buffer's previous part.
  __device__ __forceinline__ void acquire() const {
    ptx::mbarrier_wait_parity(empty, (count & 1) ^ 1);
  }
  // The staged part (or the end, c == nullptr) to the copy warp; every
  // thread of the consumer calls it after its stmatrix stores.
  __device__ __forceinline__ void release(void* c, std::int32_t row0, std::int32_t col0,
                                          bool leader) {
    if (leader) *job = CPartJob{c, row0, col0};
    ptx::mbarrier_arrive(full);
    ++count;
  }
};

// Consumer side: stages part kPart of its slice from the accumulators
// (alpha, beta applied) and hands it over.
template <typename TOut, typename S, int kPart>
__device__ __forceinline__ void hand_off_part(const float (&acc)[S::BN / 2], TOut* c_tile,
                                              const hopper::EpilogueParams& ep, std::int32_t row0,
                                              std::int32_t col0, CopyHandOff& h, bool leader) {
  const std::int32_t part_col0 = col0 + kPart * S::kCCols;
  h.acquire();
  hopper::tma_store::stage_c_part_stmatrix<TOut, S, kPart>(acc, c_tile, ep, row0, part_col0);
  h.release(ep.c, row0, part_col0, leader);
}

// ... and part `part` (runtime) of a slice packed by pack_slice.
template <typename TOut, typename S, int kPart>
__device__ __forceinline__ void hand_off_packed_part(int part,
                                                     const std::uint32_t (&packed)[S::BN / 4],
                                                     TOut* c_tile, void* c, std::int32_t row0,
                                                     std::int32_t col0, CopyHandOff& h,
                                                     bool leader) {
  if (part == kPart) {
    h.acquire();
    stage_packed_part<TOut, S, kPart, false>(packed, c_tile);
    h.release(c, row0, col0 + kPart * S::kCCols, leader);
  } else if constexpr (kPart + 1 < S::kCParts) {
    hand_off_packed_part<TOut, S, kPart + 1>(part, packed, c_tile, c, row0, col0, h, leader);
  }
}

// Copy warp side: its consumer's parts, in the order they come, until the
// end job.
template <typename TOut, typename S>
__device__ __forceinline__ void copy_warp(const TOut* c_tile, std::uint64_t* full,
                                          std::uint64_t* empty, const CPartJob* job,
                                          const Params& p) {
  const auto lane = static_cast<unsigned>(threadIdx.x % 32);
  for (std::uint32_t n = 0;; ++n) {
    // A whole mainloop may pass between parts: sleep, not spin.
    ptx::mbarrier_wait_parity_sleep(full, n & 1);
    const CPartJob j = *job;
    if (j.c == nullptr) return;
    copy_part_out<S, 32, 1>(reinterpret_cast<const std::uint16_t*>(c_tile),
                            hopper::EpilogueParams{j.c, p.ldc, p.m, p.n, 1.0f, 0.0f}, j.row0,
                            j.col0, lane);
    ptx::mbarrier_arrive(empty);
  }
}

// --- split units: the fixup ----------------------------------------------------

// The stream-K ladder step's scratch starts past the split flags (a
// workspace serves both in turn).
static_assert(tcgemm::prod::kReservedWorkspaceBytes <= hopper::tma_store::kStreamKPartialsOffset);

// A unit's K range done by several pieces, its sum stored once: the pieces of
// a stream-K tail's split unit (Params::sk_*; sched/stream_k.h) and the K
// split pieces of a tile reduced in place (Params::k_splits with
// Params::split_flags). Each consumer slice of a piece has one BM/consumers
// x BN fp32 slot in Params::partials and one flag in Params::split_flags
// (zero between launches), both indexed by its slice number.
// Stream-K: slice (worker x kClusterM + rank) x kConsumers + consumer, a slot
//   per CTA of the grid; K split: slice (tile slot x k_splits + split) x
//   kConsumers + consumer, a slot per piece of every split tile.
// peers == kPartial: this piece is not the unit's head; it writes its
//   partial sums to its slot, in the accumulators' fragment order (BN / 8
//   coalesced 16-byte stores a thread), and raises its flag (release).
//   Returns true: C is the head's to store.
// peers > 0: the head; its peers' slices are slice + q x peer_step, q = 1 ..
//   peers. It waits for their flags (acquire), lowers them for the next
//   launch and adds their partial sums into its own accumulators in that
//   order (the same bits every run). Returns false: the caller stores C
//   through the instance's own epilogue.
// The waits assume what a persistent grid has: every CTA of the launch
// resident at once (the grid is no larger than the clusters the device
// holds). Then every wait ends. Stream-K's head ends its cluster's share
// and waits on workers of higher number (clusters of lower id, launched
// first) whose pieces begin theirs. A K split's head is its tile's last
// split, the highest work index of the tile's pieces, and waits only on
// lower ones; every worker walks its work indices in increasing order, so a
// chain of waits runs down the indices to a piece that waits on nothing.
// (A launch that shares the device with another kernel holding SMs until it
// ends is the case this does not cover; docs/production.md, "K splits". A
// version that bounded the head's wait and let whichever piece counted last
// sum the tile cost 8-13% on unsplit 128 x 128 and 64 x 256 launches it
// never ran in, H200.)
// The head adds the other pieces' sums through its SM: a split keeps this
// in place only while those are few (tcgemm::prod::reduces_in_place).
template <typename S>
__device__ __forceinline__ bool split_unit_fixup(float (&acc)[S::BN / 2], const Params& p,
                                                 std::int32_t peers, std::int64_t slice,
                                                 std::int64_t peer_step, int barrier, bool leader) {
  constexpr int kThreads = S::kWarpgroupThreads;
  constexpr int kChunks = S::BN / 8;  // float4s per thread
  constexpr int kBatch = kChunks % 8 == 0 ? 8 : 4;
  static_assert(kChunks % kBatch == 0);
  const int t = static_cast<int>(threadIdx.x % kThreads);
  const auto slot = [&](std::int64_t q) {
    return reinterpret_cast<float4*>(p.partials) + (slice + q * peer_step) * (kChunks * kThreads) +
           t;
  };
  const auto flag = [&](std::int64_t q) { return p.split_flags + slice + q * peer_step; };
  if (peers == sched::StreamKItem::kPartial) {
    float4* const mine = slot(0);
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      __stcg(mine + j * kThreads,
             make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    }
    // Release: every thread's partials before the leader's flag.
    ptx::fence_acq_rel_gpu();
    ptx::named_barrier_sync(barrier, kThreads);
    if (leader) ptx::st_release_gpu(flag(0), 1u);
    return true;
  }
  if (leader) {
    for (std::int32_t q = 1; q <= peers; ++q) {
      ptx::wait_flag_nonzero(flag(q));
      ptx::st_relaxed_gpu(flag(q), 0u);
    }
  }
  // The leader's acquires pass to the warpgroup; the partials are read
  // through L2.
  ptx::named_barrier_sync(barrier, kThreads);
  // kBatch chunks at a time, each peer's in turn (the same order for every
  // element). (Peers outermost, the unrolled adds to all of acc inside a
  // runtime loop, spilled the 64 x 256 row's one consumer.)
#pragma unroll
  for (int j0 = 0; j0 < kChunks; j0 += kBatch) {
    for (std::int32_t q = 1; q <= peers; ++q) {
      const float4* const theirs = slot(q) + j0 * kThreads;
      float4 v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) v[u] = __ldcg(theirs + u * kThreads);
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        acc[4 * (j0 + u)] += v[u].x;
        acc[4 * (j0 + u) + 1] += v[u].y;
        acc[4 * (j0 + u) + 2] += v[u].z;
        acc[4 * (j0 + u) + 3] += v[u].w;
      }
    }
  }
  return false;
}

// --- the kernel ---------------------------------------------------------------

// kStore: C goes out through TMA stores (CStore::kTma, kTmaRowMajor: 16-bit
// C that TMA addresses, its contiguous dimension a multiple of 8), or without
// them, column- or row-major (store_slice_staged, the register stores).
// Instances rather than a runtime branch: the register-to-global path is ~5k
// instructions of unrolled, masked stores, and compiled into the TMA-store
// kernel it cost about 4% at 4096^3 though it never ran (H200;
// docs/production.md).
template <int kConfig, Major kMajorA, Major kMajorB, typename TIn, typename TOut, CStore kStore>
__global__ void __launch_bounds__(Shape<kConfig>::kThreads, Shape<kConfig>::kCtasPerSm)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_c, const __grid_constant__ Params p) {
  using S = Shape<kConfig>;
  constexpr bool kTmaRow = kStore == CStore::kTmaRowMajor;
  constexpr bool kTmaStore = kStore == CStore::kTma || kTmaRow;
  constexpr bool kRowMajorC = kStore == CStore::kRowMajor;
  // A 16-bit column-major C without TMA, in a deferred-store row: the copy
  // warps store it (copy_warp).
  constexpr bool kCopyWarps =
      kStore == CStore::kColMajor && sizeof(TOut) == 2 && S::kDeferredStore && S::kSetmaxnreg;
  constexpr bool kDeferred = S::kDeferredStore && (kTmaStore || kCopyWarps);
  // The copy warps' loop needs more than the producer's 40 registers (at 40
  // prod-128x128's spill): 56, the consumers giving up 8 each.
  constexpr int kProducerRegs = kCopyWarps ? 56 : S::kProducerRegs;
  constexpr int kConsumerRegs = kCopyWarps ? 224 : S::kConsumerRegs;
  static_assert(!S::kSetmaxnreg ||
                hopper::setmaxnreg_fits(S::kConsumers, kProducerRegs, kConsumerRegs));
  constexpr bool kMnA = kMajorA == Major::kMN;
  constexpr bool kMnB = kMajorB == Major::kMN;
  static_assert(tcgemm::prod::takes_b(S::kTile, kMajorB),
                "an MN-major B needs whole 64-column chunks");
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn, TOut, kConfig>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  const int warpgroup = threadIdx.x / S::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    // The tensor maps are launch parameters (nothing the kernel before this
    // one writes): into the TMA unit's descriptor cache now, not on the
    // first load's path.
    ptx::tma_prefetch_descriptor(&map_a);
    ptx::tma_prefetch_descriptor(&map_b);
    if constexpr (kTmaStore) ptx::tma_prefetch_descriptor(&map_c);
    for (int s = 0; s < S::kStages; ++s) {
      ptx::mbarrier_init(&smem.full[s], 1);
      ptx::mbarrier_init(&smem.empty[s], S::kConsumers * S::kClusterM);
    }
    if constexpr (kCopyWarps) {
      for (int c = 0; c < S::kConsumers; ++c) {
        ptx::mbarrier_init(&smem.c_full[c], S::kWarpgroupThreads);
        ptx::mbarrier_init(&smem.c_empty[c], 32);
      }
    }
    ptx::fence_mbarrier_init();
  }
  // A peer's TMA multicast and consumers use our barriers: inits visible
  // cluster-wide first. Each side waits for the barrier in its own branch,
  // so that the producer can find its first work item meanwhile.
  if constexpr (S::kClusterM > 1) {
    __syncwarp();
    ptx::cluster_arrive();
  } else {
    __syncthreads();
  }
  // The schedule's divisions, while the barrier's round trip is in flight.
  const std::int64_t pairs_m = sched::ceil_div(p.tiles_m, S::kClusterM);
  const std::int64_t units_per_batch = pairs_m * p.tiles_n;
  const std::int64_t units = units_per_batch * p.batch_count;
  const std::int64_t work_count = pieces(p, units);
  const std::int64_t cluster_id = blockIdx.x / S::kClusterM;
  const std::int64_t clusters = gridDim.x / S::kClusterM;
  const std::uint32_t rank = S::kClusterM > 1 ? ptx::cluster_ctarank() : 0;
  // A stream-K tail (Params::sk_*): rows of one CTA per SM only (the fixup
  // needs registers the 64 x 64 row's 80 do not have). Its workers are
  // numbered from the last cluster down (split_unit_fixup).
  constexpr bool kStreamK = S::kCtasPerSm == 1;
  const bool stream_k = kStreamK && p.sk_iters > 0;
  const auto worker = static_cast<int>(stream_k ? clusters - 1 - cluster_id : cluster_id);
  const sched::StreamKSchedule sk = stream_k_schedule(p, units, clusters);
  // This cluster's items: whole units (or K split pieces) worker, worker +
  // clusters, ..., then its stream-K pieces. (32-bit counts, as in ladder
  // step 14: the deferred store leaves no register to spare.)
  const int whole_items = static_cast<int>(
      stream_k ? sk.dp_items(worker)
               : (worker < work_count ? sched::ceil_div(work_count - worker, clusters) : 0));
  const int items = whole_items + (stream_k ? static_cast<int>(sk.sk_items(worker)) : 0);
  const auto item_of = [&](int i) -> Item {
    if (i < whole_items) {
      const Piece piece = piece_of(p, worker + std::int64_t{i} * clusters);
      return {piece, k_range_of(p, piece.split), 0};
    }
    const sched::StreamKItem s = sk.sk_item(worker, i - whole_items);
    return {{s.unit, -1}, {s.k_begin, s.k_end}, s.peers};
  };

  // The end of each branch's prologue: the cluster barrier's wait, then,
  // launched as a dependent (launch_dependent_kernel), the wait for the
  // kernel before this one. Everything before it may run under that
  // kernel's tail; nothing after it touches global memory before that kernel
  // is done. The next kernel may be scheduled from then on, onto SMs as this
  // grid's CTAs leave them.
  const auto end_prologue = [] {
    if constexpr (S::kClusterM > 1) {
      __syncwarp();
      ptx::cluster_wait();
    }
    ptx::griddep_wait();
    ptx::griddep_launch_dependents();
  };

  if (warpgroup == 0) {
    if constexpr (S::kSetmaxnreg) ptx::setmaxnreg_dec<kProducerRegs>();
    // The producer thread's first item, found while the cluster barrier's
    // round trip and griddepcontrol.wait are in flight: its divisions and
    // Hilbert walk are a serial chain on one thread, on the way to the
    // first TMA. (Only in the TMA-store instances: in prod-192x192's
    // 16-bit staged column-major ones ptxas then puts 8 bytes on the stack.)
    constexpr bool kEarlyFirstItem = kTmaStore;
    Item first_item{};
    WorkItem first_work{};
    if (kEarlyFirstItem && threadIdx.x == 0 && items > 0) {
      first_item = item_of(0);
      first_work = work_of<S>(first_item.piece, units, units_per_batch, pairs_m, p.tiles_n, rank);
    }
    end_prologue();
    if (threadIdx.x == 0) {
      hopper::RingPosition<S::kStages> ring;
      constexpr std::uint16_t kAllCtas = (1u << S::kClusterM) - 1;
      Item item = first_item;
      WorkItem work = first_work;
      for (int i = 0; i < items; ++i) {
        if (i > 0 || !kEarlyFirstItem) {
          item = item_of(i);
          work = work_of<S>(item.piece, units, units_per_batch, pairs_m, p.tiles_n, rank);
        }
        const std::int32_t row = work.row;
        const std::int32_t col = work.col;
        const std::int32_t batch = work.batch;
        const KRange k_range = item.k;

        for (int kt = k_range.begin; kt < k_range.end; ++kt, ring.advance()) {
          // A fresh barrier's "previous" phase counts as complete: the first
          // pass waits on parity 1 and returns at once.
          ptx::mbarrier_wait_parity_sleep(&smem.empty[ring.slot], ring.phase ^ 1);
          std::uint64_t* full = &smem.full[ring.slot];
          if (S::kHandOff && kt == k_range.begin) {
            ptx::mbarrier_arrive_expect_tx(full, S::kStageBytes + sizeof(WorkItem));
            ptx::st_async_16(&smem.work[ring.slot], static_cast<std::uint32_t>(row),
                             static_cast<std::uint32_t>(col), static_cast<std::uint32_t>(batch),
                             static_cast<std::uint32_t>(work.split), full);
          } else {
            ptx::mbarrier_arrive_expect_tx(full, S::kStageBytes);
          }
          const std::int32_t k0 = kt * S::BK;
          // A batched operand's map is 3-D, a shared one's 2-D.
          const auto load_a = [&](TIn* dst, std::int32_t inner, std::int32_t outer) {
            if (p.a_batched != 0) {
              ptx::tma_load_3d(dst, &map_a, full, inner, outer, batch);
            } else {
              ptx::tma_load_2d(dst, &map_a, full, inner, outer);
            }
          };
          // This CTA's share of B, multicast to every CTA of the cluster.
          const auto load_b = [&](TIn* dst, std::int32_t inner, std::int32_t outer) {
            if constexpr (S::kClusterM > 1) {
              if (p.b_batched != 0) {
                ptx::tma_load_3d_multicast(dst, &map_b, full, inner, outer, batch, kAllCtas);
              } else {
                ptx::tma_load_2d_multicast(dst, &map_b, full, inner, outer, kAllCtas);
              }
            } else if (p.b_batched != 0) {
              ptx::tma_load_3d(dst, &map_b, full, inner, outer, batch);
            } else {
              ptx::tma_load_2d(dst, &map_b, full, inner, outer);
            }
          };
          TIn* a = smem.a[ring.slot];
          if constexpr (kMnA) {
#pragma unroll
            for (int c = 0; c < S::BM / kChunk; ++c) {
              load_a(a + c * kChunk * S::BK, row + c * kChunk, k0);
            }
          } else {
            load_a(a, k0, row);
          }
          TIn* b = smem.b[ring.slot];
          if constexpr (kMnB) {
#pragma unroll
            for (int chunk = 0; chunk < S::kBChunks; ++chunk) {
              if (chunk >= S::b_chunk(static_cast<int>(rank)) &&
                  chunk < S::b_chunk(static_cast<int>(rank) + 1)) {
                load_b(b + chunk * kChunk * S::BK, col + chunk * kChunk, k0);
              }
            }
          } else {
            load_b(b + rank * S::kBRowsPerCta * S::BK, k0,
                   col + static_cast<std::int32_t>(rank) * S::kBRowsPerCta);
          }
        }
      }
    }
    if constexpr (kCopyWarps) {
      const int warp = static_cast<int>(threadIdx.x / 32);
      if (warp >= 1 && warp <= S::kConsumers) {
        copy_warp<TOut, S>(smem.c[warp - 1], &smem.c_full[warp - 1], &smem.c_empty[warp - 1],
                           &smem.c_job[warp - 1], p);
      }
    }
  } else {
    if constexpr (S::kSetmaxnreg) ptx::setmaxnreg_inc<kConsumerRegs>();
    end_prologue();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % S::kWarpgroupThreads == 0;
    const int c_barrier = 1 + consumer;  // this warpgroup's named barrier
    hopper::RingPosition<S::kStages> ring;
    float acc[S::BN / 2];
    // kDeferredStore: the previous tile's packed slice, where it goes, and
    // its next part to store (kCParts: none pending).
    [[maybe_unused]] std::uint32_t pending[S::kDeferredStore ? S::BN / 4 : 1];
    [[maybe_unused]] std::int32_t pending_row0 = 0;
    [[maybe_unused]] std::int32_t pending_col0 = 0;
    [[maybe_unused]] std::int32_t pending_batch = 0;
    [[maybe_unused]] int pending_part = S::kCParts;
    // kCopyWarps: the hand-over (pending_batch is then C's batch entry).
    [[maybe_unused]] CopyHandOff hand_off{&smem.c_full[consumer], &smem.c_empty[consumer],
                                          &smem.c_job[consumer]};
    [[maybe_unused]] auto store_pending_part = [&] {
      if constexpr (S::kDeferredStore && kTmaStore) {
        store_packed_part<TOut, S, S::kFirstDeferredPart, kTmaRow>(
            pending_part++, pending, smem.c[consumer], &map_c, pending_row0, pending_col0,
            pending_batch, c_barrier, leader);
      } else if constexpr (kCopyWarps) {
        // (The entry's address found again rather than kept: registers.)
        void* const c = static_cast<TOut*>(p.c) + std::int64_t{pending_batch} * p.stride_c;
        hand_off_packed_part<TOut, S, S::kFirstDeferredPart>(
            pending_part++, pending, smem.c[consumer], c, pending_row0, pending_col0, hand_off,
            leader);
      }
    };
    // Releases a slot in every CTA of the cluster: each CTA's producer
    // writes part of it.
    const auto release = [&](int slot) {
      if (leader) {
        ptx::mbarrier_arrive(&smem.empty[slot]);
#pragma unroll
        for (int peer = 1; peer < S::kClusterM; ++peer) {
          ptx::mbarrier_arrive_cluster(&smem.empty[slot], (rank + peer) % S::kClusterM);
        }
      }
    };

    for (int i = 0; i < items; ++i) {
      const Item item = item_of(i);
      WorkItem work{};
      if constexpr (!S::kHandOff) {
        work = work_of<S>(item.piece, units, units_per_batch, pairs_m, p.tiles_n, rank);
      }
      int previous_slot = -1;
      // The tile's k-tiles: all of them, its K split's share or its
      // stream-K piece's.
      const int k_count = item.k.count();
      for (int kt = 0; kt < k_count; ++kt, ring.advance()) {
        ptx::mbarrier_wait_parity_sleep(&smem.full[ring.slot], ring.phase);
        if (S::kHandOff && kt == 0) {
          // The work item travels with the tile's first k-tile. The proxy
          // fence orders this read before the producer's next st.async into
          // the slot, the barrier after the k-tile's wgmmas every warp's read
          // before the slot's release.
          work = smem.work[ring.slot];
          ptx::fence_proxy_async_shared();
        }
        ptx::wgmma_fence();
        const TIn* a_tile = smem.a[ring.slot] + consumer * tcgemm::prod::kWgmmaM * S::BK;
        const TIn* b_tile = smem.b[ring.slot];
        // The slot's descriptors once; each k16 step adds a constant to the
        // start address (16 elements along a K-major row, 16 rows of an
        // MN-major chunk).
        const std::uint64_t slot_a =
            kMnA ? ptx::make_smem_desc_mn_major_sw128(a_tile, S::kChunkBytes)
                 : ptx::make_smem_desc_k_major_sw128(a_tile);
        const std::uint64_t slot_b =
            kMnB ? ptx::make_smem_desc_mn_major_sw128(b_tile, S::kChunkBytes)
                 : ptx::make_smem_desc_k_major_sw128(b_tile);
        constexpr std::uint32_t kStepA = (kMnA ? S::kWgmmaK * kChunk : S::kWgmmaK) * sizeof(TIn);
        constexpr std::uint32_t kStepB = (kMnB ? S::kWgmmaK * kChunk : S::kWgmmaK) * sizeof(TIn);
#pragma unroll
        for (int kk = 0; kk < S::BK / S::kWgmmaK; ++kk) {
          const std::uint64_t desc_a = ptx::smem_desc_step(slot_a, kk * kStepA);
          const std::uint64_t desc_b = ptx::smem_desc_step(slot_b, kk * kStepB);
          // D = A * B on the tile's first k-step: no zeroing needed.
          ptx::wgmma_m64k16_major<S::BN, TIn, kMnA, kMnB>(acc, desc_a, desc_b,
                                                          (kt > 0 || kk > 0) ? 1u : 0u);
        }
        ptx::wgmma_commit_group();
        if (S::kHandOff && kt == 0) ptx::named_barrier_sync(c_barrier, S::kWarpgroupThreads);
        if constexpr (kDeferred) {
          // A part of the previous tile's C under this k-tile's wgmmas: by
          // TMA every kDeferredSpacing k-tiles; to a copy warp, which takes
          // far longer over a part, spread over the whole mainloop (part p
          // once p / kCParts of it is issued).
          const bool due =
              kTmaStore ? kt == (pending_part - S::kFirstDeferredPart + 1) * S::kDeferredSpacing
                        : kt * S::kCParts >= pending_part * k_count;
          if (pending_part < S::kCParts && due) {
            store_pending_part();
          }
        }
        // One group stays in flight; the one before it has finished reading
        // its slot, which goes back to the producers.
        ptx::wgmma_wait_group<1>();
        if (previous_slot >= 0) release(previous_slot);
        previous_slot = ring.slot;
      }
      ptx::wgmma_wait_group<0>();
      release(previous_slot);
      ptx::fence_registers(acc);

      const std::int32_t row0 = work.row + consumer * tcgemm::prod::kWgmmaM;
      const std::int32_t col0 = work.col;
      // The entry of C this piece stores: its batch entry, or, when a second
      // kernel reduces the split, its dense fp32 slice.
      const bool to_slices = p.k_splits > 1 && p.split_flags == nullptr;
      const std::int64_t c_entry =
          to_slices ? std::int64_t{work.batch} * p.k_splits + work.split : work.batch;
      // The TMA store's batch coordinate, -1 for a 2-D map (store_c_buffer).
      const std::int32_t c_batch = p.c_batched != 0 ? static_cast<std::int32_t>(c_entry) : -1;
      if constexpr (kDeferred) {
        while (pending_part < S::kCParts) store_pending_part();
      }
      const auto store_tile = [&](const hopper::EpilogueParams& ep) {
        if constexpr (kTmaStore) {
          if constexpr (S::kDeferredStore) {
            store_slice<TOut, S, 0, S::kFirstDeferredPart, kTmaRow>(
                acc, smem.c[consumer], &map_c, ep, row0, col0, c_batch, c_barrier, leader);
            if constexpr (kTmaRow) {
              pack_slice_row_major<TOut, S, S::kFirstDeferredPart * S::kCCols / 4>(acc, pending, ep,
                                                                                   row0, col0);
            } else {
              hopper::tma_store::pack_slice<TOut, S, S::kFirstDeferredPart>(acc, pending, ep, row0,
                                                                            col0);
            }
            pending_row0 = row0;
            pending_col0 = col0;
            pending_batch = c_batch;
            pending_part = S::kFirstDeferredPart;
          } else {
            store_slice<TOut, S, 0, S::kCParts, kTmaRow>(acc, smem.c[consumer], &map_c, ep, row0,
                                                         col0, c_batch, c_barrier, leader);
          }
        } else if constexpr (kCopyWarps) {
          if (i + 1 < items) {
            hand_off_part<TOut, S, 0>(acc, smem.c[consumer], ep, row0, col0, hand_off, leader);
            static_assert(S::kFirstDeferredPart == 1);
            hopper::tma_store::pack_slice<TOut, S, S::kFirstDeferredPart>(acc, pending, ep, row0,
                                                                          col0);
            pending_batch = static_cast<std::int32_t>(c_entry);
            pending_row0 = row0;
            pending_col0 = col0;
            pending_part = S::kFirstDeferredPart;
          } else {
            // The last tile has no mainloop after it to hide the copy
            // under: the warpgroup's 128 threads copy it at once, once the
            // copy warp is done with the buffer (a column a pass: two
            // spill in the 224 registers left to the consumers).
            hand_off.acquire();
            store_slice_staged<TOut, S, 0, 1>(acc, smem.c[consumer], ep, row0, col0, c_barrier);
          }
        } else if constexpr (kRowMajorC) {
          store_accumulators_row_major<TOut, S::BN>(acc, ep, row0, col0);
        } else if constexpr (sizeof(TOut) == 2) {
          store_slice_staged<TOut, S>(acc, smem.c[consumer], ep, row0, col0, c_barrier);
        } else {
          hopper::store_accumulators<TOut, S::BN, true>(acc, ep, row0, col0);
        }
      };
      // A piece of a split unit (a stream-K piece, or a K split reduced in
      // place) that is not the unit's head leaves its partial sums to the
      // head, which adds them before it stores C. (Rows of one CTA per SM
      // only: the 64 x 64 row's register budget of 80 has no room for the
      // sum; its splits reduce in a second kernel.)
      if constexpr (kStreamK) {
        std::int32_t peers = 0;
        std::int64_t slice = 0;
        std::int64_t peer_step = 0;
        if (p.k_splits > 1) {
          if (work.split >= 0 && p.split_flags != nullptr) {
            // The split unit's ordinal in 32 bits: prepare() keeps an
            // in-place split's pieces (split units x k_splits) under 2^31 (a
            // 64-bit division here spills the consumers).
            const auto split_piece =
                static_cast<std::uint32_t>(worker + std::int64_t{i} * clusters - p.whole_units);
            const std::int64_t tile_slot =
                std::int64_t{split_piece / static_cast<std::uint32_t>(p.k_splits)} * S::kClusterM +
                rank;
            // The last split is the head; its peers are the splits before
            // it, nearest first.
            const bool head = work.split == p.k_splits - 1;
            peers = head ? p.k_splits - 1 : sched::StreamKItem::kPartial;
            slice = (tile_slot * p.k_splits + work.split) * S::kConsumers + consumer;
            peer_step = -S::kConsumers;
          }
        } else if (i >= whole_items) {
          // (Found again rather than kept through the mainloop: registers.)
          peers = item_of(i).peers;
          slice = (std::int64_t{worker} * S::kClusterM + rank) * S::kConsumers + consumer;
          peer_step = S::kClusterM * S::kConsumers;
        }
        if (peers != 0 && split_unit_fixup<S>(acc, p, peers, slice, peer_step, c_barrier, leader)) {
          continue;
        }
      }
      void* const c = static_cast<TOut*>(p.c) + c_entry * p.stride_c;
      // C = A * B, the common case, with alpha and beta as constants: the
      // epilogue then has no scaling and no reads of C at all. Passed at run
      // time, alpha and beta sit in per-thread registers, and the compiler
      // predicates (does not branch around) the address arithmetic of the
      // beta reads: that cost 4% at 4096^3 (H200, docs/production.md).
      if (p.alpha == 1.0f && p.beta == 0.0f) {
        store_tile(hopper::EpilogueParams{c, p.ldc, p.m, p.n, 1.0f, 0.0f});
      } else {
        store_tile(hopper::EpilogueParams{c, p.ldc, p.m, p.n, p.alpha, p.beta});
      }
    }
    if constexpr (kDeferred) {
      while (pending_part < S::kCParts) store_pending_part();
    }
    // The copy warp's last job: none.
    if constexpr (kCopyWarps) {
      hand_off.acquire();
      hand_off.release(nullptr, 0, 0, leader);
    }
    // Shared memory must outlive the last store's reads.
    if constexpr (kTmaStore) {
      if (leader) ptx::tma_store_wait_all<0>();
    }
  }
  // A peer may still arrive on our empty barriers: stay until it is done.
  __syncwarp();
  if constexpr (S::kClusterM > 1) ptx::cluster_sync();
}

// --- host side of one instance -------------------------------------------------

// Raises the instance's shared-memory limit (the runtime call that also binds
// the context cuTensorMapEncodeTiled needs on a fresh host thread:
// docs/hopper-notes.md) and sizes the persistent grid: the fewest clusters
// that need no more rounds of tiles than the resident maximum, so every
// cluster gets the same number of tiles, or one less (a tail split, or a
// stream-K tail where Launch::stream_k allows one and its schedule pays:
// every resident cluster, and the whole units it runs before the split
// ones). Runs before anything is enqueued.
template <int kConfig, Major kMajorA, Major kMajorB, typename TIn, typename TOut, CStore kStore>
Status prepare_instance(Launch& l) {
  using S = Shape<kConfig>;
  auto* k = &kernel<kConfig, kMajorA, kMajorB, TIn, TOut, kStore>;
  constexpr std::size_t kSmem = tcgemm::prod::smem_bytes(S::kTile, sizeof(TOut));
  static_assert(sizeof(SharedStorage<TIn, TOut, kConfig>) + 1024 == kSmem,
                "config.h's smem_bytes must describe SharedStorage");
  Status status = allow_dynamic_smem(reinterpret_cast<const void*>(k), kSmem, l.name);
  if (!status.ok()) return status;
  int resident = 0;
  if constexpr (S::kClusterM > 1) {
    status = max_active_clusters(k, kSmem, S::kThreads, S::kClusterM, &resident);
    if (!status.ok()) return status;
    // An SM budget (GemmArgs::sm_count): its CTAs in whole clusters (a
    // budget under one cluster still gets one).
    if (l.sm_limit > 0) {
      resident = std::max(1, std::min(resident, l.sm_limit * S::kCtasPerSm / S::kClusterM));
    }
  } else {
    int per_sm = 0;
    int sms = 0;
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, S::kThreads, kSmem);
    if (err == cudaSuccess) status = hopper::multiprocessor_count(&sms);
    if (err != cudaSuccess || !status.ok() || per_sm < 1) {
      cudaGetLastError();
      return {StatusCode::kCudaError, std::string(l.name) + ": occupancy query failed"};
    }
    // Under an SM budget, one CTA per SM: the block scheduler spreads a
    // grid over every SM before it stacks CTAs on one.
    resident = tcgemm::prod::budget_binds(l.sm_limit, sms) ? l.sm_limit : per_sm * sms;
  }
  Params& p = l.params;
  const std::int64_t units = sched::ceil_div(p.tiles_m, S::kClusterM) * p.tiles_n * p.batch_count;
  const std::int64_t clusters_resident = resident;  // clusters (CTAs without one)
  std::int64_t clusters = 0;
  p.sk_dp_units = 0;
  p.sk_iters = 0;
  const sched::StreamKSchedule tail =
      l.stream_k && p.k_splits == 1 && !l.split_tail
          ? tcgemm::prod::stream_k_tail(kConfig, units, p.k_tiles, clusters_resident)
          : sched::StreamKSchedule{};
  if (tail.sk_iters > 0) {
    // Every resident cluster: the heads wait on other clusters.
    p.sk_dp_units = tail.dp_units;
    p.sk_iters = tail.sk_iters;
    clusters = tail.workers;
  } else if (l.split_tail) {
    // Whole waves of whole units, then the rest in pieces: the grid is every
    // resident cluster, so that the waves are the ones whole_units counts.
    p.whole_units = tcgemm::prod::whole_units(units, clusters_resident);
    clusters = std::min<std::int64_t>(clusters_resident, pieces(p, units));
  } else {
    const std::int64_t work = pieces(p, units);
    clusters = std::min<std::int64_t>(clusters_resident, work);
    clusters = sched::ceil_div(work, sched::ceil_div(work, clusters));
  }
  l.ctas = static_cast<unsigned>(clusters * S::kClusterM);
  return Status::success();
}

template <int kConfig, Major kMajorA, Major kMajorB, typename TIn, typename TOut, CStore kStore>
Status launch_instance(const Launch& l) {
  using S = Shape<kConfig>;
  auto* k = &kernel<kConfig, kMajorA, kMajorB, TIn, TOut, kStore>;
  constexpr std::size_t kSmem = tcgemm::prod::smem_bytes(S::kTile, sizeof(TOut));
  return launch_dependent_kernel(k, l.name, dim3(l.ctas), S::kThreads, kSmem, S::kClusterM,
                                 l.stream, l.map_a, l.map_b, l.map_c, l.params);
}

template <int kConfig, Major kMajorA, Major kMajorB, typename TIn, typename TOut, CStore kStore>
constexpr Instance instance() {
  return {&prepare_instance<kConfig, kMajorA, kMajorB, TIn, TOut, kStore>,
          &launch_instance<kConfig, kMajorA, kMajorB, TIn, TOut, kStore>};
}

// The instance table of one (input, output) dtype pair, in instance_index
// order: every table row, every A and B major-ness, every way of storing C
// (fp32 C has no TMA store: its kTma and kTmaRowMajor slots hold the
// register instances of the same layout), every major-ness of B the row
// takes.
template <typename TIn, typename TOut, int kConfig, CStore kStore>
void fill_instances(InstanceTable& table) {
  constexpr CStore kCompiled = sizeof(TOut) == 2                ? kStore
                               : kStore == CStore::kTma         ? CStore::kColMajor
                               : kStore == CStore::kTmaRowMajor ? CStore::kRowMajor
                                                                : kStore;
  table[instance_index(kConfig, Major::kK, Major::kK, kStore)] =
      instance<kConfig, Major::kK, Major::kK, TIn, TOut, kCompiled>();
  table[instance_index(kConfig, Major::kMN, Major::kK, kStore)] =
      instance<kConfig, Major::kMN, Major::kK, TIn, TOut, kCompiled>();
  // A row that takes no MN-major B leaves those slots empty (prepare()
  // refuses them before it looks one up).
  if constexpr (tcgemm::prod::takes_b(kConfigs[kConfig].tile, Major::kMN)) {
    table[instance_index(kConfig, Major::kK, Major::kMN, kStore)] =
        instance<kConfig, Major::kK, Major::kMN, TIn, TOut, kCompiled>();
    table[instance_index(kConfig, Major::kMN, Major::kMN, kStore)] =
        instance<kConfig, Major::kMN, Major::kMN, TIn, TOut, kCompiled>();
  }
}

template <typename TIn, typename TOut, std::size_t... kConfig>
InstanceTable make_instance_table(std::index_sequence<kConfig...>) {
  InstanceTable table{};
  (fill_instances<TIn, TOut, static_cast<int>(kConfig), CStore::kColMajor>(table), ...);
  (fill_instances<TIn, TOut, static_cast<int>(kConfig), CStore::kRowMajor>(table), ...);
  (fill_instances<TIn, TOut, static_cast<int>(kConfig), CStore::kTma>(table), ...);
  (fill_instances<TIn, TOut, static_cast<int>(kConfig), CStore::kTmaRowMajor>(table), ...);
  return table;
}

template <typename TIn, typename TOut>
const InstanceTable& instance_table() {
  static const InstanceTable table =
      make_instance_table<TIn, TOut>(std::make_index_sequence<tcgemm::prod::kConfigCount>{});
  return table;
}

}  // namespace tcgemm::kernels::prod
