// WMMA ladder, step 5: a larger K step per barrier instead of double
// buffering (article 3.6, 50 TFLOP/s).
//
// Technique: copy a BATCH of 4 K slices (BK = 64) into one buffer, one barrier,
// compute all four, a second barrier. The article measured this 5 TFLOP/s
// above its double buffering on the S4000 and dropped double buffering for it:
//   - 4x fewer __syncthreads per unit of K (2 per 64 instead of 1 per 16);
//   - B is column-major, K-contiguous: a 16-deep slice is 32 bytes of each
//     column, a 64-deep one is a whole 128-byte line (8 threads per column).
// Overlap of copies and math now comes only from the other resident CTA(s)
// of the SM (the article's "the scheduler switches warps"), not from within
// the CTA. The copies stay cp.async (step 4): they still skip registers, but
// each thread waits for its own at once, so they are in effect synchronous.
// What changed from the previous step: BK 16 -> 64 (BATCH = 4), one buffer
// instead of two, two barriers per batch: copy, wait, barrier, math, barrier.
//
// Tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 35 KiB static shared memory (A 17 KiB + B 18 KiB; C staging 10 KiB,
// overlaid), grouped tile order (16 tile-rows).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 172.8 TFLOP/s, 0.22x cuBLAS (0.89x step 4: slower,
// not faster as in the article; ptxas gives this step 166 registers, so
// only one 256-thread CTA fits per SM until step 7's __launch_bounds__).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;
namespace port = ::tcgemm::wmma_port;

constexpr int kBatch = 4;  // 16-deep K slices per barrier
using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/kBatch * wmma::kFrag, /*kWarpsM=*/2,
                            /*kWarpsN=*/4, /*kPad=*/8, /*kPadC=*/4, /*kStages=*/1>;
constexpr std::int64_t kGroupM = 16;

template <typename TIn, typename TOut>
__global__ void k05_batch_k_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
                                   TOut* c, Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                                   std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
    wmma::copy_a_async<Config>(smem.ab.a[0], a, lda, tile, k0);
    wmma::copy_b_async<Config>(smem.ab.b[0], b, ldb, tile, k0);
    port::copy_async_commit();
    port::copy_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kBatch; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[0], smem.ab.b[0], w, ks);
    }
    // The next batch's copies overwrite tiles other warps may still be
    // reading; the last one also frees the union for the C staging below.
    __syncthreads();
  }
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-05";

}  // namespace

Status launch_wmma_05(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k05_batch_k_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
