// WMMA ladder, step 10 (beyond the article): a multi-stage cp.async pipeline.
//
// Technique: kStages = 3 buffers of one 64-deep K tile each, filled by
// cp.async two tiles ahead of the math, with ONE __syncthreads per K tile:
//   prologue  issue tiles 0 and 1 (one commit group each)
//   tile kt   cp.async.wait_group 1    this thread's copies of tile kt landed
//                                      (at most the group of tile kt + 1 is
//                                      still in flight)
//             __syncthreads            (a) every thread's copies of tile kt
//                                      are visible to every warp; (b) every
//                                      warp has finished its math on tile
//                                      kt - 1, so its buffer is free
//             issue tile kt + 2 into the buffer of tile kt - 1, commit (an
//                                      empty group past the last tile, so the
//                                      group count stays one per tile)
//             math on tile kt
// This is what the article's step 4 (double buffering) wanted and step 5
// (a deeper K step per barrier) gave up for: steps 5-9 copy and compute in
// turn, and only the SM's other CTA fills the gaps. Here the copies of a
// tile have two tiles of math to land under, inside the CTA. The same
// barrier that publishes a tile frees the buffer the next copy overwrites,
// which is why one barrier is enough where step 7 needs two; the hazard step
// (wmma-09) dropped step 7's second barrier without adding the buffers that
// make it unnecessary.
//   Step 6's alternating A/B copy order is gone: a tile's copies are issued
// two tiles before its math, so which operand's requests go first no longer
// meets the previous tile's.
// What changed from step 7: kStages 1 -> 3, the buffers move to dynamic
// shared memory (105 KiB, over the 48 KiB static limit), one barrier per
// tile instead of two, copies issued two tiles ahead, no A/B alternation.
// Kept from step 7: tile and warp layout, padding, fragment order, epilogue,
// grouped tile order, __launch_bounds__(256, 2).
//
// Tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 3 stages x (A 17 KiB + B 18 KiB) = 105 KiB + 128 B alignment slack of
// dynamic shared memory (C staging 10 KiB, overlaid on stage 0), grouped
// tile order (16 tile-rows), at most 128 registers per thread: 2 CTAs per
// SM (2 x (105.1 + 1 reserved) KiB of the 228 KiB; 2 x 256 x 128 registers
// = the 65536 of the SM).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned (step 7's constraints).
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run with step 7,
// bench/results/h200/2026-11-29-wmma-10.csv; the GPU ran hot, SM clock 1650
// MHz at the end): 291.4 TFLOP/s, 0.40x cuBLAS (736.6), 1.07x step 7 in the
// same run (273.1, 0.37x). Short of the issue's 0.5x. Its GPU tests pass, and
// racecheck finds no hazard (bench/results/h200/2026-11-29-wmma-10.log).
// Dispatch rank 3: the fp16 NN problems step 11 refuses (N not a multiple
// of 256).
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;
namespace port = ::tcgemm::wmma_port;

constexpr int kStages = 3;
using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/4 * wmma::kFrag, /*kWarpsM=*/2,
                            /*kWarpsN=*/4, /*kPad=*/8, /*kPadC=*/4, kStages>;
constexpr std::int64_t kGroupM = 16;
constexpr int kMinBlocksPerSm = 2;

template <typename TIn, typename TOut>
__global__ TCGEMM_WMMA_KERNEL_ATTRS void __launch_bounds__(Config::kThreads, kMinBlocksPerSm)
    k10_multistage_kernel(const TIn* __restrict__ a, std::int64_t lda, const TIn* __restrict__ b,
                          std::int64_t ldb, TOut* __restrict__ c, Epilogue ep, std::int64_t k,
                          std::int64_t tiles_m, std::int64_t tiles_n) {
  extern __shared__ unsigned char smem_raw[];
  auto& smem = *reinterpret_cast<wmma::SharedStorage<TIn, Config>*>(
      smem_raw + wmma::dynamic_smem_padding(smem_raw));
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();
  wmma::AsyncCopier<Config, TIn> copier(a, lda, b, ldb, tile);
  // The registry keeps K below 2^31.
  const int k_tiles = static_cast<int>(k / Config::BK);

  // Tiles 0 .. kStages - 2 into stages 0 .. kStages - 2, one group per tile.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) copier.copy_tile(smem.ab.a[s], smem.ab.b[s]);
    port::copy_async_commit();
  }

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  int read_stage = 0;             // buffer of tile kt
  int write_stage = kStages - 1;  // buffer of tile kt + kStages - 1 = that of tile kt - 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    // kStages - 1 + kt groups committed, one per tile: when at most
    // kStages - 2 are pending, this thread's copies of tiles 0 .. kt landed.
    port::copy_async_wait<kStages - 2>();
    __syncthreads();
    if (kt + kStages - 1 < k_tiles) {
      copier.copy_tile(smem.ab.a[write_stage], smem.ab.b[write_stage]);
    }
    port::copy_async_commit();
#pragma unroll
    for (int ks = 0; ks < Config::BK / wmma::kFrag; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[read_stage], smem.ab.b[read_stage], w, ks);
    }
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  // Only empty groups can be left; the barrier is the one that matters: the
  // C staging overlays buffers that slower warps may still be reading.
  port::copy_async_wait<0>();
  __syncthreads();
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-10";

}  // namespace

Status launch_wmma_10(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    if constexpr (!std::is_same_v<TIn, __half>) {
      // Not instantiated: the registry refuses bf16 inputs (they spill).
      return Status{StatusCode::kNotSupported, std::string(kName) + ": fp16 inputs only"};
    } else {
      return wmma::launch_tiles<Config>(&k10_multistage_kernel<TIn, TOut>, kName, args,
                                        wmma::kDynamicSmemBytes<wmma::SharedStorage<TIn, Config>>);
    }
  });
}

}  // namespace tcgemm::kernels
