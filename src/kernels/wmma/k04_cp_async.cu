// WMMA ladder, step 4: double buffering with cp.async (article 3.5, 47 TFLOP/s).
//
// Technique: two A/B buffers; while the warps compute on one K slice, the
// next slice is already being copied into the other.
//   - The copies are cp.async.cg of 16 bytes (src/ptx/cp_async.cuh): global
//     to shared without passing through registers, tracked per thread by
//     commit/wait groups. The article used __pipeline_memcpy_async with 8
//     bytes, found no speed-up and suspected the copies were not really
//     asynchronous (removing commit/wait changed neither speed nor
//     results). Here they are: the SASS has LDGSTS (the asynchronous
//     global-to-shared instruction) and no register staging, and leaving the
//     wait out WOULD be a race: the wait is what makes a thread's own copies
//     complete before the barrier publishes them. Whether the overlap pays is
//     what the measurement of this step against step 3 says.
//   - One barrier per slice: at the top of iteration kt a thread waits for
//     its copies of slice kt, then __syncthreads makes all of slice kt
//     visible AND certifies every warp has finished computing slice kt - 1,
//     whose buffer the copies of slice kt + 1, issued next, overwrite.
// What changed from the previous step: kStages = 2, copies by cp.async issued
// one slice ahead, one __syncthreads per slice instead of two.
//
// Tile 128 x 128 x 16, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 20.5 KiB static shared memory (2 x (4.25 + 6) KiB; C staging 10 KiB,
// overlaid), grouped tile order (16 tile-rows).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 16, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 193.3 TFLOP/s, 0.25x cuBLAS (1.16x step 3: the
// asynchronous copies do pay here, unlike on the S4000).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;
namespace port = ::tcgemm::wmma_port;

using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/16, /*kWarpsM=*/2, /*kWarpsN=*/4,
                            /*kPad=*/8, /*kPadC=*/4, /*kStages=*/2>;
constexpr std::int64_t kGroupM = 16;

template <typename TIn, typename TOut>
__global__ void k04_cp_async_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
                                    TOut* c, Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                                    std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();
  const std::int64_t k_tiles = k / Config::BK;

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  wmma::copy_a_async<Config>(smem.ab.a[0], a, lda, tile, 0);
  wmma::copy_b_async<Config>(smem.ab.b[0], b, ldb, tile, 0);
  port::copy_async_commit();
  for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
    const int stage = static_cast<int>(kt % Config::kStages);
    // The only group in flight is slice kt's.
    port::copy_async_wait<0>();
    __syncthreads();
    if (kt + 1 < k_tiles) {
      const int next = static_cast<int>((kt + 1) % Config::kStages);
      wmma::copy_a_async<Config>(smem.ab.a[next], a, lda, tile, (kt + 1) * Config::BK);
      wmma::copy_b_async<Config>(smem.ab.b[next], b, ldb, tile, (kt + 1) * Config::BK);
      port::copy_async_commit();
    }
#pragma unroll
    for (int ks = 0; ks < Config::BK / wmma::kFrag; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[stage], smem.ab.b[stage], w, ks);
    }
  }
  // The C staging overlays the buffers other warps may still be reading.
  __syncthreads();
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-04";

}  // namespace

Status launch_wmma_04(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k04_cp_async_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
