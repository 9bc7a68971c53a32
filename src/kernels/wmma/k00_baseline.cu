// WMMA ladder, step 0: the baseline (S4000 article section 3, "about 10 TFLOP/s").
//
// Technique: block tiling and warp tiling over WMMA.
//   - Each CTA computes a BM x BN tile of C; each of its 8 warps a 64 x 32
//     block of it as 4 x 2 fp32 accumulator fragments of 16 x 16 held in
//     registers (8 MMAs per warp per 16-deep slice: the article's table 1,
//     fourth row; its 128-lane warp with 64 x 128 of C and our 32-lane warp
//     with 64 x 32 hold the same 64 fp32 accumulators per thread).
//   - The CTA walks K 16 at a time: all threads copy the A tile (16 x BM) and
//     the B tile (BN x 16) into shared memory one element per load, a barrier,
//     every warp loads its fragments from shared memory and runs mma_sync, a
//     second barrier before the next copy overwrites the tiles.
//   - The epilogue goes through shared memory (the article's union of the A/B
//     buffers with the C staging buffer): each warp stores one fp32 fragment
//     to its 16 x 16 staging buffer, then its lanes convert and write the
//     fragment to C one element at a time, C = alpha * acc + beta * C.
// What changed from the previous step: this is the first step.
//
// Tile BM x BN x BK = 128 x 128 x 16, 256 threads (8 warps, 2 along M x 4
// along N), 64 x 32 per warp; 8 KiB of static shared memory (A/B 8 KiB, C
// staging 8 KiB, overlaid); one tile per CTA in the hardware's order (one
// tile-row after another).
// Layout: A, B and C column-major ("NN"). bf16 or fp16 in, bf16, fp16 or fp32
// out. Needs M and N multiples of 128 and K a multiple of 16 (no edge
// handling: whole tiles only); any leading dimensions and element-aligned
// pointers (every global access is one element).
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 45.0 TFLOP/s, 0.06x cuBLAS (775.9 TFLOP/s).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;

using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/16, /*kWarpsM=*/2, /*kWarpsN=*/4,
                            /*kPad=*/0, /*kPadC=*/0, /*kStages=*/1>;
constexpr std::int64_t kGroupM = 1;  // the hardware's order; step 3 groups tiles for L2

template <typename TIn, typename TOut>
__global__ void k00_baseline_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
                                    TOut* c, Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                                    std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
    wmma::copy_tiles_scalar<Config>(smem.ab.a[0], smem.ab.b[0], a, lda, b, ldb, tile, k0);
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < Config::BK / wmma::kFrag; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[0], smem.ab.b[0], w, ks);
    }
    // The next copy overwrites tiles other warps may still be reading; the
    // last one also frees the union for the C staging below.
    __syncthreads();
  }
  wmma::store_staged<Config, /*kVectorized=*/false>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-00";

}  // namespace

Status launch_wmma_00(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k00_baseline_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
