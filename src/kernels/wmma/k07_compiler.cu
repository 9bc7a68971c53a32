// WMMA ladder, step 7: compiler-facing changes (article 3.8, 59 TFLOP/s: the
// article's complete code).
//
// Technique: tell the compiler what the programmer knows. The article's
// list, and what each becomes with nvcc:
//   1. -O3 (and MUSA's Od3): nvcc always optimizes device code; the Release
//      build is already -O3 on the host side. Nothing to change.
//   2. __restrict__ on A, B, C: added (the three never alias here).
//   3. __align__(64) on the shared union: it is 32-byte aligned from step 0
//      on because WMMA requires it; the article saw no effect from more.
//   4. #pragma unroll: every loop with a constant trip count was already
//      unrolled from step 0 on (the fragment arrays must be, to stay in
//      registers; ptxas reports no local memory for any step).
//   5. mtgpu_tiny_offset (offsets fit in INT_MAX): no CUDA attribute; done
//      by hand with AsyncCopier (common.cuh): each thread's copy addresses
//      are computed once and advanced by one pointer add per batch, instead
//      of two 64-bit index products per 16-byte copy.
//   6.-7. mtgpu_enable_ldma_index and the other mtgpu_* attributes: MUSA
//      only; TCGEMM_WMMA_KERNEL_ATTRS (portability.h) expands to them on MUSA
//      and to nothing here.
//   8. __launch_bounds__(1024, 1) in the article (1024 threads, 1 block per
//      MP): here __launch_bounds__(256, 2), which caps registers at 128 per
//      thread so that two CTAs fit on an SM (65536 registers).
//   9. A newer compiler (+5 TFLOP/s in the article): the whole ladder is
//      built by one nvcc (13.0), so nothing changes between steps.
// What changed from the previous step: 2, 5, 8 (and the empty 6-7 macro).
//
// Tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 35 KiB static shared memory, grouped tile order (16 tile-rows), at most
// 128 registers per thread (2 CTAs per SM).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 321.3 TFLOP/s, 0.41x cuBLAS (1.81x step 6: mostly the
// second resident CTA that __launch_bounds__(256, 2) buys, 126 registers
// instead of 158); the fastest of the article's safe steps, dispatched for NN
// problems steps 10 and 11 refuse (bf16 inputs with N not a multiple of 256;
// rank 2).
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
    k07_compiler_kernel(const TIn* __restrict__ a, std::int64_t lda, const TIn* __restrict__ b,
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
    // The second barrier: step 9 removes exactly this one.
    __syncthreads();
  }
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-07";

}  // namespace

Status launch_wmma_07(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k07_compiler_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
