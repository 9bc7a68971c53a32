// WMMA ladder, step 11 (beyond the article): 64 x 64 warp tiles, one CTA per
// SM, and every fragment loaded one 16-deep slice ahead of its MMAs.
//
// Technique: steps 7-10 give each warp 64 x 32 of C: per 16 of K it reads 4 A
// and 2 B fragments (6 ldmatrix) for 8 MMAs, which by the estimate in
// docs/wmma-ladder.md caps shared memory at about half the SM's tensor rate.
// A 64 x 64 warp tile reads 4 + 4 fragments for 16 MMAs: a third less
// shared-memory traffic per FLOP. Its 128 fp32 accumulators per thread do not
// fit step 10's 128-register cap, so the CTA grows to 128 x 256 (8 warps,
// 2 x 4) and runs alone on its SM (__launch_bounds__(256, 1): up to 255
// registers).
//   One CTA of 8 warps is 2 warps per scheduler, too few to hide an ldmatrix
// behind another warp's MMAs, so each warp hides its own: the fragments are
// double-buffered in registers, and slice ks + 1's are loaded before slice
// ks's MMAs are issued. The K tile's last slice, already in registers, has
// its MMAs issued before the tile's one barrier, and the next tile's first
// fragments are loaded right after it, so the barrier and those loads wait
// under that slice's 16 MMAs:
//   prologue  issue tiles 0 .. kStages - 1 (every stage, one group each),
//             wait for tile 0, __syncthreads, load slice 0's fragments
//   tile kt   for each slice ks but the last: load slice ks + 1, MMAs of ks
//             MMAs of the last slice
//             cp.async.wait_group kStages - 2   this thread's copies of tile
//                                               kt + 1 landed
//             __syncthreads   (a) tile kt + 1 is visible to every warp;
//                             (b) every warp has loaded its last fragments of
//                             tile kt, so its stage is free
//             issue tile kt + kStages into tile kt's stage, commit (an empty
//             group past the last tile)
//             load slice 0 of tile kt + 1
// The same kernel without the look-ahead (step 10's loop order: barrier,
// copies, then each slice's loads and MMAs) ran at 0.34x cuBLAS against this
// one's 0.51x on the H200 (256 x 128 tiles, one bench run during the design,
// bench/results/h200/2026-11-30-wmma-11.log).
// What changed from step 10: warp tile 64 x 32 -> 64 x 64, CTA tile 128 x 128
// x 64 -> 128 x 256 x 32, 2 CTAs per SM -> 1, 3 stages -> 4 (every stage
// filled before the loop), fragments double-buffered and loaded a slice ahead,
// the barrier after the last slice's MMAs instead of before the first slice's
// loads, grouped tile order of 8 tile-rows instead of 16, bf16 inputs
// accepted (the 255-register cap leaves room for their fragment loads).
// Kept: WMMA 16x16x16 fragments through portability.h, padded shared rows
// (8 halves: ldmatrix rows in 8 distinct 16-byte bank groups), step 7's
// AsyncCopier, C staged per warp through shared memory (store_staged).
//
// Tile 128 x 256 x 32, 256 threads (8 warps, 2 x 4), 64 x 64 per warp (4 x 4
// fragments: 128 accumulators and 2 x 32 fragment registers per thread),
// 4 stages x (A 8.5 KiB + B 20 KiB) = 114 KiB + 128 B alignment slack of
// dynamic shared memory (C staging 10 KiB, overlaid), grouped tile order
// (8 tile-rows). ptxas (CUDA 13.0): 234 registers with fp16 inputs, 236 with
// bf16, no spills; 1 CTA per SM (the occupancy calculator agrees).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M a multiple
// of 128, N of 256, K of 32, lda, ldb, ldc multiples of 8, and A, B, C
// 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, two bench runs with step 10,
// bench/results/h200/2026-11-30-wmma-11-fix-1.csv and -2.csv; SM clock 1590
// MHz): 383.4 and 381.6 TFLOP/s, 0.530x cuBLAS (724.0, 720.4) in both, 1.35x
// step 10 (283.1, 0.39x). 4096^3: 413.9 TFLOP/s, 0.55x (-fix-4096.csv). The
// first committed build reached the kernel's shared memory through a helper
// returning the aligned pointer; ptxas then gave it 238 registers and it ran
// at 0.497x in four runs (2026-11-30-wmma-11.csv and -fix.log), 7% behind
// the same kernel addressed in place (see wmma::dynamic_smem_padding). bf16
// at 8192 (earlier build): 219.9 TFLOP/s, 0.27x, against step 7's 0.22x
// (-bf16.csv). Its GPU tests pass and racecheck finds no hazard
// (2026-11-30-wmma-11-fix.log). Dispatch rank 4: the fastest safe step
// wherever its tile fits.
#include <cstdint>
#include <string_view>

#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

constexpr int kStages = 4;
using Config = wmma::Config</*BM=*/128, /*BN=*/256, /*BK=*/2 * wmma::kFrag, /*kWarpsM=*/2,
                            /*kWarpsN=*/4, /*kPad=*/8, /*kPadC=*/4, kStages>;
constexpr std::int64_t kGroupM = 8;
// One CTA per SM: 256 threads may each take up to 255 registers.
constexpr int kMinBlocksPerSm = 1;
constexpr int kSlices = Config::BK / wmma::kFrag;
static_assert(kSlices % 2 == 0, "slice 0 of every K tile must land in fragment set 0");

// The warp's fragments of one 16-deep slice: every A and B fragment its
// kFragsM x kFragsN MMAs need, so that the next slice's can be loaded while
// this one's MMAs run.
template <typename TIn>
__device__ __forceinline__ void load_slice(wmma::FragA<TIn> (&fa)[Config::kFragsM],
                                           wmma::FragB<TIn> (&fb)[Config::kFragsN], const TIn* a_s,
                                           const TIn* b_s, const wmma::WarpPos& w, int ks) {
  wmma::load_b_fragments<Config>(fb, b_s, w, ks);
#pragma unroll
  for (int fi = 0; fi < Config::kFragsM; ++fi) {
    wmma::load_a_fragment<Config>(fa[fi], a_s, w, ks, fi);
  }
}

template <typename TIn>
__device__ __forceinline__ void mma_slice(wmma::Accumulators<Config>& acc,
                                          const wmma::FragA<TIn> (&fa)[Config::kFragsM],
                                          const wmma::FragB<TIn> (&fb)[Config::kFragsN]) {
#pragma unroll
  for (int fi = 0; fi < Config::kFragsM; ++fi) {
#pragma unroll
    for (int fj = 0; fj < Config::kFragsN; ++fj) {
      wmma::port::mma_sync(acc[fi][fj], fa[fi], fb[fj], acc[fi][fj]);
    }
  }
}

template <typename TIn, typename TOut>
__global__ TCGEMM_WMMA_KERNEL_ATTRS void __launch_bounds__(Config::kThreads, kMinBlocksPerSm)
    k11_large_warp_tile_kernel(const TIn* __restrict__ a, std::int64_t lda,
                               const TIn* __restrict__ b, std::int64_t ldb, TOut* __restrict__ c,
                               wmma::Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                               std::int64_t tiles_n) {
  extern __shared__ unsigned char smem_raw[];
  auto& smem = *reinterpret_cast<wmma::SharedStorage<TIn, Config>*>(
      smem_raw + wmma::dynamic_smem_padding(smem_raw));
  const wmma::Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const wmma::WarpPos w = wmma::warp_pos<Config>();
  wmma::AsyncCopier<Config, TIn> copier(a, lda, b, ldb, tile);
  // The registry keeps K below 2^31 and at least one tile deep (K == 0 never
  // reaches a kernel).
  const int k_tiles = static_cast<int>(k / Config::BK);

  // Tiles 0 .. kStages - 1 into stages 0 .. kStages - 1, one group per tile.
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (s < k_tiles) copier.copy_tile(smem.ab.a[s], smem.ab.b[s]);
    wmma::port::copy_async_commit();
  }

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  // Slice ks's fragments are in fa[ks % 2] and fb[ks % 2].
  wmma::FragA<TIn> fa[2][Config::kFragsM];
  wmma::FragB<TIn> fb[2][Config::kFragsN];
  wmma::port::copy_async_wait<kStages - 1>();
  __syncthreads();
  load_slice(fa[0], fb[0], smem.ab.a[0], smem.ab.b[0], w, 0);

  int stage = 0;  // tile kt's
  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks + 1 < kSlices; ++ks) {
      load_slice(fa[(ks + 1) % 2], fb[(ks + 1) % 2], smem.ab.a[stage], smem.ab.b[stage], w, ks + 1);
      mma_slice(acc, fa[ks % 2], fb[ks % 2]);
    }
    mma_slice(acc, fa[(kSlices - 1) % 2], fb[(kSlices - 1) % 2]);
    // kStages + kt groups committed, one per tile: when at most kStages - 2
    // are pending, this thread's copies of tiles 0 .. kt + 1 landed.
    wmma::port::copy_async_wait<kStages - 2>();
    __syncthreads();
    if (kt + kStages < k_tiles) copier.copy_tile(smem.ab.a[stage], smem.ab.b[stage]);
    wmma::port::copy_async_commit();
    stage = stage + 1 == kStages ? 0 : stage + 1;
    if (kt + 1 < k_tiles) load_slice(fa[0], fb[0], smem.ab.a[stage], smem.ab.b[stage], w, 0);
  }
  // The loop's last barrier came after every warp's last fragment load, and
  // every copy has landed (only empty groups can be pending): the C staging
  // may overlay the stages without another barrier.
  wmma::port::copy_async_wait<0>();
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-11";

}  // namespace

Status launch_wmma_11(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k11_large_warp_tile_kernel<TIn, TOut>, kName, args,
                                      wmma::kDynamicSmemBytes<wmma::SharedStorage<TIn, Config>>);
  });
}

}  // namespace tcgemm::kernels
