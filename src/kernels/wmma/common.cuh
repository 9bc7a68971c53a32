// Pieces every WMMA ladder step shares, written once: the tile configuration,
// the shared-memory union, the copies of A and B tiles into shared memory
// (scalar, 16-byte vector, cp.async), one 16-deep slice of warp-level WMMA,
// the epilogues, and the launcher. Each step's file keeps its main loop (the
// copies, the barriers and their order) in full, since that is what the steps
// change.
//
// The problem is the S4000 article's: every matrix column-major ("NN").
//   A  M x K, element (i, k) at a[i + k * lda]: M is contiguous
//   B  K x N, element (k, j) at b[k + j * ldb]: K is contiguous
//   C  M x N, element (i, j) at c[i + j * ldc]
// Shared memory keeps each operand's global order, which is also the order
// the col_major WMMA fragments read:
//   A tile  BK rows of BM M-contiguous elements  a_s[kk * kLdA + i]
//   B tile  BN rows of BK K-contiguous elements  b_s[j * kLdB + kk]
// so a 16x16 fragment of A starts at a_s + ks * 16 * kLdA + i0 with ldm = kLdA,
// and one of B at b_s + j0 * kLdB + ks * 16 with ldm = kLdB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/numeric.cuh"
#include "kernels/wmma/portability.h"
#include "sched/tile_order.h"

namespace tcgemm::kernels::wmma {

namespace port = ::tcgemm::wmma_port;

// One WMMA fragment is 16 x 16 x 16 (the article's 32 x 32 x 16 MUSA fragment
// is 2 x 2 of these).
inline constexpr int kFrag = 16;
inline constexpr int kFragElements = kFrag * kFrag;
// 16-bit elements in one 16-byte copy.
inline constexpr int kVector = 8;
// WMMA pointers are 256-bit aligned; ldm is a multiple of 16 bytes.
inline constexpr int kWmmaAlignBytes = 32;

template <typename TIn>
using FragA = port::fragment<port::matrix_a, kFrag, kFrag, kFrag, TIn, port::col_major>;
template <typename TIn>
using FragB = port::fragment<port::matrix_b, kFrag, kFrag, kFrag, TIn, port::col_major>;
using FragC = port::fragment<port::accumulator, kFrag, kFrag, kFrag, float>;

// A step's tile shape. The CTA computes BM x BN of C, walking K BK at a time;
// its kWarpsM x kWarpsN warps each own a WM x WN block of C, held as
// kFragsM x kFragsN fp32 accumulator fragments. kPad elements pad every
// shared row of A and B (bank conflicts, step 2), kPadC floats every column
// of the per-warp C staging buffer. kStages buffers of A and B (step 4: 2).
template <int BM_, int BN_, int BK_, int kWarpsM_, int kWarpsN_, int kPad_, int kPadC_,
          int kStages_>
struct Config {
  static constexpr int BM = BM_;
  static constexpr int BN = BN_;
  static constexpr int BK = BK_;
  static constexpr int kWarpsM = kWarpsM_;
  static constexpr int kWarpsN = kWarpsN_;
  static constexpr int kPad = kPad_;
  static constexpr int kPadC = kPadC_;
  static constexpr int kStages = kStages_;

  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = kWarps * port::kWarpSize;
  static constexpr int WM = BM / kWarpsM;
  static constexpr int WN = BN / kWarpsN;
  static constexpr int kFragsM = WM / kFrag;
  static constexpr int kFragsN = WN / kFrag;
  static constexpr int kLdA = BM + kPad;      // shared A row: BM M-contiguous elements
  static constexpr int kLdB = BK + kPad;      // shared B row: BK K-contiguous elements
  static constexpr int kLdC = kFrag + kPadC;  // staging column: 16 floats

  static_assert(WM % kFrag == 0 && WN % kFrag == 0 && BK % kFrag == 0);
  static_assert(BM % kVector == 0 && BK % kVector == 0);
  // WMMA: ldm a multiple of 8 16-bit elements or 4 floats (16 bytes).
  static_assert(kPad % 8 == 0 && kPadC % 4 == 0);
};

// The article's union: the A and B buffers of the main loop and the fp32
// staging of C in the epilogue are never live at once, so they share bytes.
// Every WMMA pointer into it is 32-byte aligned: rows of A and B are
// multiples of 16 bytes long and fragments start at multiples of 16 rows.
template <typename TIn, class Cfg>
union SharedStorage {
  struct {
    TIn a[Cfg::kStages][Cfg::BK * Cfg::kLdA];
    TIn b[Cfg::kStages][Cfg::BN * Cfg::kLdB];
  } ab;
  float c[Cfg::kWarps][kFrag * Cfg::kLdC];
};

// ---- where a CTA and a warp work ------------------------------------------------

// 32-bit: the registry keeps M and N below 2^31, and the fewer registers the
// main loop keeps live the better (steps 7-9 run at 128 per thread).
struct Tile {
  int row0 = 0;  // first row of C (and of A)
  int col0 = 0;  // first column of C (and of B)
};

// The CTA's tile: linear index blockIdx.x in grouped order (group_m == 1 is
// the hardware's default order, one tile-row at a time).
template <class Cfg>
__device__ __forceinline__ Tile cta_tile(std::int64_t tiles_m, std::int64_t tiles_n,
                                         std::int64_t group_m) {
  const sched::TileCoord t = sched::grouped_tile(blockIdx.x, tiles_m, tiles_n, group_m);
  return {static_cast<int>(t.m * Cfg::BM), static_cast<int>(t.n * Cfg::BN)};
}

struct WarpPos {
  int warp = 0;  // warp index in the CTA
  int lane = 0;
  int m0 = 0;  // first row of the warp's block inside the CTA tile
  int n0 = 0;  // first column
};

template <class Cfg>
__device__ __forceinline__ WarpPos warp_pos() {
  WarpPos p;
  p.warp = static_cast<int>(threadIdx.x) / port::kWarpSize;
  p.lane = static_cast<int>(threadIdx.x) % port::kWarpSize;
  p.m0 = (p.warp / Cfg::kWarpsN) * Cfg::WM;
  p.n0 = (p.warp % Cfg::kWarpsN) * Cfg::WN;
  return p;
}

// ---- the copies of one A tile (BK x BM) and one B tile (BN x BK) -----------------

// Step 0: one element per load. Consecutive threads take consecutive M of A
// (coalesced) and consecutive K of B (16 or BK elements per column).
template <class Cfg, typename TIn>
__device__ __forceinline__ void copy_tiles_scalar(TIn* a_s, TIn* b_s, const TIn* a,
                                                  std::int64_t lda, const TIn* b, std::int64_t ldb,
                                                  Tile tile, std::int64_t k0) {
  for (int e = static_cast<int>(threadIdx.x); e < Cfg::BM * Cfg::BK; e += Cfg::kThreads) {
    const int i = e % Cfg::BM;
    const int kk = e / Cfg::BM;
    a_s[kk * Cfg::kLdA + i] = a[(tile.row0 + i) + (k0 + kk) * lda];
  }
  for (int e = static_cast<int>(threadIdx.x); e < Cfg::BN * Cfg::BK; e += Cfg::kThreads) {
    const int kk = e % Cfg::BK;
    const int j = e / Cfg::BK;
    b_s[j * Cfg::kLdB + kk] = b[(k0 + kk) + (tile.col0 + j) * ldb];
  }
}

// Eight consecutive 16-bit elements: one 16-byte access.
template <typename T>
struct alignas(16) Pack16 {
  T x[16 / sizeof(T)];
};

// Vector copies: each thread moves kVectorsA (kVectorsB) runs of 8 elements.
// Vector v of thread t is run index r = t + v * kThreads: for A, run r covers
// M elements (r % (BM / 8)) * 8 .. + 7 of K row r / (BM / 8); for B, K
// elements (r % (BK / 8)) * 8 .. + 7 of column r / (BK / 8).
template <class Cfg>
struct CopyShape {
  static constexpr int kRunsA = Cfg::BM / kVector;  // runs per K row of A
  static constexpr int kRunsB = Cfg::BK / kVector;  // runs per column of B
  static constexpr int kVectorsA = Cfg::BM * Cfg::BK / kVector / Cfg::kThreads;
  static constexpr int kVectorsB = Cfg::BN * Cfg::BK / kVector / Cfg::kThreads;
  static_assert(kVectorsA * Cfg::kThreads * kVector == Cfg::BM * Cfg::BK);
  static_assert(kVectorsB * Cfg::kThreads * kVector == Cfg::BN * Cfg::BK);
};

// Steps 1-3: 16-byte loads into registers, then 16-byte stores to shared
// memory (all loads first, so they are in flight together).
template <class Cfg, typename TIn>
__device__ __forceinline__ void copy_a_vector(TIn* a_s, const TIn* a, std::int64_t lda, Tile tile,
                                              std::int64_t k0) {
  using S = CopyShape<Cfg>;
  Pack16<TIn> staged[S::kVectorsA];
#pragma unroll
  for (int v = 0; v < S::kVectorsA; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    const std::int64_t i = tile.row0 + (r % S::kRunsA) * kVector;
    staged[v] = *reinterpret_cast<const Pack16<TIn>*>(a + i + (k0 + r / S::kRunsA) * lda);
  }
#pragma unroll
  for (int v = 0; v < S::kVectorsA; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    *reinterpret_cast<Pack16<TIn>*>(a_s + (r / S::kRunsA) * Cfg::kLdA + (r % S::kRunsA) * kVector) =
        staged[v];
  }
}

template <class Cfg, typename TIn>
__device__ __forceinline__ void copy_b_vector(TIn* b_s, const TIn* b, std::int64_t ldb, Tile tile,
                                              std::int64_t k0) {
  using S = CopyShape<Cfg>;
  Pack16<TIn> staged[S::kVectorsB];
#pragma unroll
  for (int v = 0; v < S::kVectorsB; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    const std::int64_t j = tile.col0 + r / S::kRunsB;
    staged[v] =
        *reinterpret_cast<const Pack16<TIn>*>(b + (k0 + (r % S::kRunsB) * kVector) + j * ldb);
  }
#pragma unroll
  for (int v = 0; v < S::kVectorsB; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    *reinterpret_cast<Pack16<TIn>*>(b_s + (r / S::kRunsB) * Cfg::kLdB + (r % S::kRunsB) * kVector) =
        staged[v];
  }
}

// Steps 4-6: the same runs by cp.async, straight from global to shared
// memory. The caller commits and waits.
template <class Cfg, typename TIn>
__device__ __forceinline__ void copy_a_async(TIn* a_s, const TIn* a, std::int64_t lda, Tile tile,
                                             std::int64_t k0) {
  using S = CopyShape<Cfg>;
#pragma unroll
  for (int v = 0; v < S::kVectorsA; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    const std::int64_t i = tile.row0 + (r % S::kRunsA) * kVector;
    port::copy_async_16(a_s + (r / S::kRunsA) * Cfg::kLdA + (r % S::kRunsA) * kVector,
                        a + i + (k0 + r / S::kRunsA) * lda);
  }
}

template <class Cfg, typename TIn>
__device__ __forceinline__ void copy_b_async(TIn* b_s, const TIn* b, std::int64_t ldb, Tile tile,
                                             std::int64_t k0) {
  using S = CopyShape<Cfg>;
#pragma unroll
  for (int v = 0; v < S::kVectorsB; ++v) {
    const int r = static_cast<int>(threadIdx.x) + v * Cfg::kThreads;
    const std::int64_t j = tile.col0 + r / S::kRunsB;
    port::copy_async_16(b_s + (r / S::kRunsB) * Cfg::kLdB + (r % S::kRunsB) * kVector,
                        b + (k0 + (r % S::kRunsB) * kVector) + j * ldb);
  }
}

// Steps 7-9: the cp.async copies of steps 5-6 with each thread's sources and
// destinations computed once. Vector v of a thread is v whole K-row steps
// (A) or column steps (B) past its vector 0, and a batch is BK columns of A
// (BK * lda elements) or BK elements of B further on, so the loop only adds:
// no 64-bit index multiply per copy (what the article's MUSA attribute
// mtgpu_tiny_offset lets its compiler assume).
template <class Cfg, typename TIn>
struct AsyncCopier {
  using S = CopyShape<Cfg>;
  static constexpr int kRowsPerVectorA = Cfg::kThreads / S::kRunsA;  // K rows of A
  static constexpr int kColsPerVectorB = Cfg::kThreads / S::kRunsB;  // columns of B
  static_assert(Cfg::kThreads % S::kRunsA == 0 && Cfg::kThreads % S::kRunsB == 0);

  const TIn* a_src;
  const TIn* b_src;
  std::int64_t a_vector_step;  // kRowsPerVectorA * lda; a batch is BK / kRowsPerVectorA of them
  std::int64_t b_vector_step;  // kColsPerVectorB * ldb
  int a_dst;                   // element offsets into the shared tiles
  int b_dst;
  static_assert(Cfg::BK % kRowsPerVectorA == 0);

  __device__ __forceinline__ AsyncCopier(const TIn* a, std::int64_t lda, const TIn* b,
                                         std::int64_t ldb, Tile tile) {
    const int t = static_cast<int>(threadIdx.x);
    a_src = a + tile.row0 + (t % S::kRunsA) * kVector + (t / S::kRunsA) * lda;
    b_src = b + (t % S::kRunsB) * kVector + (tile.col0 + t / S::kRunsB) * ldb;
    a_vector_step = kRowsPerVectorA * lda;
    b_vector_step = kColsPerVectorB * ldb;
    a_dst = (t / S::kRunsA) * Cfg::kLdA + (t % S::kRunsA) * kVector;
    b_dst = (t / S::kRunsB) * Cfg::kLdB + (t % S::kRunsB) * kVector;
  }

  __device__ __forceinline__ void copy_a(TIn* a_s) const {
#pragma unroll
    for (int v = 0; v < S::kVectorsA; ++v) {
      port::copy_async_16(a_s + a_dst + v * kRowsPerVectorA * Cfg::kLdA, a_src + v * a_vector_step);
    }
  }

  __device__ __forceinline__ void copy_b(TIn* b_s) const {
#pragma unroll
    for (int v = 0; v < S::kVectorsB; ++v) {
      port::copy_async_16(b_s + b_dst + v * kColsPerVectorB * Cfg::kLdB, b_src + v * b_vector_step);
    }
  }

  // On to the next BK-deep batch.
  __device__ __forceinline__ void advance() {
    a_src += (Cfg::BK / kRowsPerVectorA) * a_vector_step;
    b_src += Cfg::BK;
  }

  // Steps 10-11: the whole batch, A then B, and on to the next.
  __device__ __forceinline__ void copy_tile(TIn* a_s, TIn* b_s) {
    copy_a(a_s);
    copy_b(b_s);
    advance();
  }
};

// Steps 10-11 keep their stages in dynamic shared memory, whose base is only
// guaranteed 16-byte aligned; WMMA pointers need 32. The kernel rounds the
// base up inside kDynamicSmemAlign bytes of slack:
//   auto& smem = *reinterpret_cast<Storage*>(smem_raw + dynamic_smem_padding(smem_raw));
// The pointer arithmetic stays on the extern __shared__ array in the kernel
// itself, so the compiler still knows the buffers are shared memory and
// addresses them with 32-bit shared-window offsets. (A helper returning the
// aligned pointer, even force-inlined, cost step 11 four registers and 7% of
// its speed on the H200: 0.496x against 0.533x cuBLAS in the same run.)
inline constexpr std::size_t kDynamicSmemAlign = 128;
template <class Storage>
inline constexpr std::size_t kDynamicSmemBytes = sizeof(Storage) + kDynamicSmemAlign;

__device__ __forceinline__ unsigned dynamic_smem_padding(const unsigned char* raw) {
  constexpr unsigned kAlign = kDynamicSmemAlign;
  const unsigned misalignment = static_cast<unsigned>(__cvta_generic_to_shared(raw)) % kAlign;
  return (kAlign - misalignment) % kAlign;
}

// ---- the math ------------------------------------------------------------------------

template <class Cfg>
using Accumulators = FragC[Cfg::kFragsM][Cfg::kFragsN];

template <class Cfg>
__device__ __forceinline__ void zero_accumulators(Accumulators<Cfg>& acc) {
#pragma unroll
  for (int fi = 0; fi < Cfg::kFragsM; ++fi) {
#pragma unroll
    for (int fj = 0; fj < Cfg::kFragsN; ++fj) port::fill_fragment(acc[fi][fj], 0.0f);
  }
}

// The warp's fragments at depth ks * 16 of the shared tiles: its kFragsN B
// fragments (a 16 x WN slice), and its A fragment fi (rows fi * 16 .. + 15 of
// its WM x 16 slice). With nvcc 13.0 an fp16 fragment load is one ldmatrix
// (LDSM, transposed for A); a bf16 one is eight generic 32-bit loads (LD.E),
// so bf16 runs slower and needs more registers.
template <class Cfg, typename TIn>
__device__ __forceinline__ void load_b_fragments(FragB<TIn> (&fb)[Cfg::kFragsN], const TIn* b_s,
                                                 const WarpPos& w, int ks) {
#pragma unroll
  for (int fj = 0; fj < Cfg::kFragsN; ++fj) {
    port::load_matrix_sync(fb[fj], b_s + (w.n0 + fj * kFrag) * Cfg::kLdB + ks * kFrag, Cfg::kLdB);
  }
}

template <class Cfg, typename TIn>
__device__ __forceinline__ void load_a_fragment(FragA<TIn>& fa, const TIn* a_s, const WarpPos& w,
                                                int ks, int fi) {
  port::load_matrix_sync(fa, a_s + ks * kFrag * Cfg::kLdA + w.m0 + fi * kFrag, Cfg::kLdA);
}

// acc += the warp's WM x 16 slice of A times the 16 x WN slice of B at depth
// ks * 16 of the shared tiles. The B fragments are loaded once and the A
// fragments one at a time, so each shared element is read once per slice
// with 8 + 8 * kFragsN registers of fragments live (the order the article's
// register estimate assumes).
template <class Cfg, typename TIn>
__device__ __forceinline__ void mma_slice(Accumulators<Cfg>& acc, const TIn* a_s, const TIn* b_s,
                                          const WarpPos& w, int ks) {
  FragB<TIn> fb[Cfg::kFragsN];
  load_b_fragments<Cfg>(fb, b_s, w, ks);
#pragma unroll
  for (int fi = 0; fi < Cfg::kFragsM; ++fi) {
    FragA<TIn> fa;
    load_a_fragment<Cfg>(fa, a_s, w, ks, fi);
#pragma unroll
    for (int fj = 0; fj < Cfg::kFragsN; ++fj) {
      port::mma_sync(acc[fi][fj], fa, fb[fj], acc[fi][fj]);
    }
  }
}

// ---- the epilogues: C = alpha * acc + beta * C (C read only when beta != 0) --------

struct Epilogue {
  std::int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

template <typename TOut>
__device__ __forceinline__ TOut scale_out(float acc, const TOut* out, const Epilogue& ep) {
  float value = ep.alpha * acc;
  if (ep.beta != 0.0f) value += ep.beta * to_float(*out);
  return from_float<TOut>(value);
}

// Steps 0-7: each fragment goes through the warp's fp32 staging buffer in
// shared memory (store_matrix_sync), and the warp's lanes convert it and
// write it to C, column by column. kVectorized (step 1 on): each lane moves 8
// consecutive elements of a column with 16-byte accesses (ldc a multiple of
// 8, C 16-byte aligned); otherwise one element at a time.
// The caller has made sure no warp still reads A or B from the union.
template <class Cfg, bool kVectorized, typename TOut>
__device__ __forceinline__ void store_staged(const Accumulators<Cfg>& acc, float* stage, TOut* c,
                                             const Epilogue& ep, Tile tile, const WarpPos& w) {
#pragma unroll
  for (int fi = 0; fi < Cfg::kFragsM; ++fi) {
#pragma unroll
    for (int fj = 0; fj < Cfg::kFragsN; ++fj) {
      port::store_matrix_sync(stage, acc[fi][fj], Cfg::kLdC, port::mem_col_major);
      port::sync_warp();
      TOut* block = c + (tile.col0 + w.n0 + fj * kFrag) * ep.ldc + tile.row0 + w.m0 + fi * kFrag;
      if constexpr (!kVectorized) {
        for (int e = w.lane; e < kFragElements; e += port::kWarpSize) {
          const int row = e % kFrag;
          const int col = e / kFrag;
          TOut* out = block + col * ep.ldc + row;
          *out = scale_out(stage[col * Cfg::kLdC + row], out, ep);
        }
      } else {
        constexpr int kPerPack = 16 / static_cast<int>(sizeof(TOut));
        constexpr int kPacks = kVector / kPerPack;
#pragma unroll
        for (int e = w.lane * kVector; e < kFragElements; e += port::kWarpSize * kVector) {
          const int row = e % kFrag;
          const int col = e / kFrag;
          // 16-byte aligned: columns are 64 or 80 bytes apart, row is 0 or 8.
          const float4* src4 = reinterpret_cast<const float4*>(stage + col * Cfg::kLdC + row);
          const float4 lo = src4[0];
          const float4 hi = src4[1];
          const float values[kVector] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
          TOut* out = block + col * ep.ldc + row;
#pragma unroll
          for (int p = 0; p < kPacks; ++p) {
            Pack16<TOut> old{};
            if (ep.beta != 0.0f) old = *reinterpret_cast<const Pack16<TOut>*>(out + p * kPerPack);
            Pack16<TOut> packed;
#pragma unroll
            for (int x = 0; x < kPerPack; ++x) {
              float value = ep.alpha * values[p * kPerPack + x];
              if (ep.beta != 0.0f) value += ep.beta * to_float(old.x[x]);
              packed.x[x] = from_float<TOut>(value);
            }
            *reinterpret_cast<Pack16<TOut>*>(out + p * kPerPack) = packed;
          }
        }
      }
      // The next fragment's store_matrix_sync overwrites the staging buffer.
      port::sync_warp();
    }
  }
}

// Step 8, the article's third regret: every lane writes its own accumulator
// elements to C straight from registers, without the shared-memory round
// trip. The article could not, because the fragment layout is unspecified;
// it is on CUDA too (nvcuda::wmma documents no element-to-position mapping),
// so the kernel asks the fragment itself, the article's own idea ("build a
// matrix and print it"), at run time: load_matrix_sync of the 16 x 16 matrix
// whose element (r, c) holds r + 16 c into an accumulator fragment puts, in
// each lane's x[t], the position of its element t. mma_sync results use the
// same fragment type, hence the same mapping. Supported API only, any output
// type, any ldc and element-aligned C.
// `index_s` holds that matrix (fill_position_matrix, made visible by a barrier
// before the epilogue).
template <class Cfg>
__device__ __forceinline__ void fill_position_matrix(float* index_s) {
  for (int e = static_cast<int>(threadIdx.x); e < kFragElements; e += Cfg::kThreads) {
    index_s[e] = static_cast<float>(e);
  }
}

template <class Cfg, typename TOut>
__device__ __forceinline__ void store_direct(const Accumulators<Cfg>& acc, const float* index_s,
                                             TOut* c, const Epilogue& ep, Tile tile,
                                             const WarpPos& w) {
  FragC positions;
  port::load_matrix_sync(positions, index_s, kFrag, port::mem_col_major);
#pragma unroll
  for (int fi = 0; fi < Cfg::kFragsM; ++fi) {
#pragma unroll
    for (int fj = 0; fj < Cfg::kFragsN; ++fj) {
      TOut* block = c + (tile.col0 + w.n0 + fj * kFrag) * ep.ldc + tile.row0 + w.m0 + fi * kFrag;
#pragma unroll
      for (int t = 0; t < FragC::num_elements; ++t) {
        // This lane's element t is at row p % 16, column p / 16 of the fragment.
        const int p = static_cast<int>(positions.x[t]);
        TOut* out = block + (p / kFrag) * ep.ldc + p % kFrag;
        *out = scale_out(acc[fi][fj].x[t], out, ep);
      }
    }
  }
}

// ---- launching ---------------------------------------------------------------------

// Every ladder kernel takes the same arguments.
template <typename TIn, typename TOut>
using LadderKernel = void (*)(const TIn*, std::int64_t, const TIn*, std::int64_t, TOut*, Epilogue,
                              std::int64_t, std::int64_t, std::int64_t);

// Launches one CTA per BM x BN tile (the registry ensures M, N and K are
// multiples of the tile and the layouts are NN). `smem_bytes` of dynamic
// shared memory: 0 for the steps whose buffers are static (at most 48 KiB).
template <class Cfg, typename TIn, typename TOut>
Status launch_tiles(LadderKernel<TIn, TOut> kernel, std::string_view name, const GemmArgs& args,
                    std::size_t smem_bytes = 0) {
  const std::int64_t tiles_m = args.m / Cfg::BM;
  const std::int64_t tiles_n = args.n / Cfg::BN;
  constexpr std::int64_t kMaxGridX = (std::int64_t{1} << 31) - 1;
  if (tiles_m * tiles_n > kMaxGridX) {
    return {StatusCode::kNotSupported,
            std::string(name) + ": more output tiles than one grid holds"};
  }
  if (smem_bytes > 0) {
    const Status status =
        allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem_bytes, name);
    if (!status.ok()) return status;
  }
  if (print_config_enabled()) {
    // What the occupancy calculator makes of the kernel's registers and shared
    // memory: the number the step headers' "CTAs per SM" claims rest on.
    int resident = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Cfg::kThreads,
                                                      smem_bytes) == cudaSuccess) {
      std::fprintf(stderr, "tcgemm: %.*s resident CTAs per SM: %d\n", static_cast<int>(name.size()),
                   name.data(), resident);
    }
  }
  return launch_kernel(
      kernel, name, dim3(static_cast<unsigned>(tiles_m * tiles_n)), Cfg::kThreads, smem_bytes,
      /*cluster_x=*/1, args.stream, static_cast<const TIn*>(args.a.ptr), args.a.ld,
      static_cast<const TIn*>(args.b.ptr), args.b.ld, static_cast<TOut*>(args.c.ptr),
      Epilogue{args.c.ld, args.alpha, args.beta}, args.k, tiles_m, tiles_n);
}

// Calls launch.template operator()<TIn, TOut>() for the problem's dtypes
// (inputs are bf16 or fp16: the registry constraints ensure it).
template <typename Launch>
Status visit_types(const GemmArgs& args, Launch&& launch) {
  return visit_dtype(args.a.dtype, [&](auto in_tag) {
    return visit_dtype(args.c.dtype, [&](auto out_tag) {
      using TIn = typename decltype(in_tag)::type;
      using TOut = typename decltype(out_tag)::type;
      if constexpr (std::is_same_v<TIn, float>) {
        return Status{StatusCode::kNotSupported, "WMMA kernels take bf16 or fp16 inputs"};
      } else {
        return launch.template operator()<TIn, TOut>();
      }
    });
  });
}

}  // namespace tcgemm::kernels::wmma
