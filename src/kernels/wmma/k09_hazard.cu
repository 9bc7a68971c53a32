// WMMA ladder, step 9: the "hazard" step (article 4.2, 63 TFLOP/s).
// UNSAFE: THIS KERNEL HAS A DATA RACE. Its results are not reliable: it is in
// the registry (dispatch rank 0, never chosen automatically) only so the
// bench can measure what it really does. Use it by name for that alone.
//
// Technique: the article's closing experiment, "delete the second
// __syncthreads() of the complete code": step 7 with the barrier after the
// math of each batch removed, nothing else changed. Without it:
//   - A warp that finishes its math on batch i issues the cp.async copies of
//     batch i + 1 into the same (single) A/B buffer while slower warps are
//     still loading fragments of batch i from it: a write-after-read race on
//     shared memory. The slow warps may multiply batch i + 1's data (or a mix
//     of both) in place of batch i's. The first barrier still makes every
//     warp wait for the copies to land before its math, which keeps the
//     damage to "sometimes wrong" rather than "always wrong".
//   - After the last batch, a fast warp's epilogue stores its fp32 staging
//     (the union with the A/B buffer) while slower warps still read the
//     last batch's tiles: the same race at the end.
// Whether and how often the output is wrong depends on warp timing, which
// varies with the GPU, the clocks, the other resident CTA and the inputs;
// a run that happens to verify proves nothing. compute-sanitizer racecheck
// names the hazards: on a 256^3 NN problem, 22 reports of races between a
// write and the fragment reads at two read sites, 50368 hazards in all
// (bench/results/h200/2026-11-29-wmma-ladder.log).
// ITS SPEED IS WORTH NOTHING: any speed-up over step 7 is bought by
// computing a different, wrong product some of the time. The bench never
// times it (it fails verification), and none of its numbers should be
// quoted as a GEMM's.
// What changed from the previous step (7): the __syncthreads after the math
// of each batch is gone.
//
// Tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 35 KiB static shared memory, grouped tile order (16 tile-rows), at most
// 128 registers per thread.
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned (refused otherwise, like step 7).
// Measured (H200, fp16 NN, bench/results/h200/2026-11-29-wmma-ladder-*.csv):
// 8192 x 8192 x 16384: verification FAILED (repeat): two runs on the same
// inputs differed, and the result had max abs error 31.4 where the safe steps
// have 0.26 (rel. Frobenius 1.5e-3 vs 2.1e-4). 4096^3: FAILED (nonfinite):
// NaN/Inf in C, rel. error 0.42. Hazard mode (tcgemm-bench --hazard-runs,
// bench/results/h200/2026-11-29-wmma-hazard.txt): at 1024^3 (64 CTAs, one
// per SM) 30 runs on fresh inputs were all right and repeatable, which is
// exactly why one clean run proves nothing.
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;
namespace port = ::tcgemm::wmma_port;

constexpr int kBatch = 4;
using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/kBatch * wmma::kFrag, /*kWarpsM=*/2,
                            /*kWarpsN=*/4, /*kPad=*/8, /*kPadC=*/4, /*kStages=*/1>;
constexpr std::int64_t kGroupM = 16;
constexpr int kMinBlocksPerSm = 2;

template <typename TIn, typename TOut>
__global__ TCGEMM_WMMA_KERNEL_ATTRS void __launch_bounds__(Config::kThreads, kMinBlocksPerSm)
    k09_hazard_kernel(const TIn* __restrict__ a, std::int64_t lda, const TIn* __restrict__ b,
                      std::int64_t ldb, TOut* __restrict__ c, Epilogue ep, std::int64_t k,
                      std::int64_t tiles_m, std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();
  wmma::AsyncCopier<Config, TIn> copier(a, lda, b, ldb, tile);

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  bool a_first = true;
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      if ((pass == 0) == a_first) {
        copier.copy_a(smem.ab.a[0]);
      } else {
        copier.copy_b(smem.ab.b[0]);
      }
    }
    a_first = !a_first;
    copier.advance();
    port::copy_async_commit();
    port::copy_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kBatch; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[0], smem.ab.b[0], w, ks);
    }
    // RACE: step 7's second __syncthreads stood here. Nothing now stops this
    // warp from overwriting the tiles with the next batch's copies while
    // other warps still read them.
  }
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-09";

}  // namespace

Status launch_wmma_09(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k09_hazard_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
