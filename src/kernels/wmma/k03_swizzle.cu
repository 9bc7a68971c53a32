// WMMA ladder, step 3: block swizzling of the launch order for L2 locality
// (article 3.4, 45 TFLOP/s).
//
// Technique: CTAs that run at the same time should share A and B panels in
// L2. The hardware hands out blockIdx.x in order, and the previous steps
// mapped it to tiles one tile-row at a time: the ~264 resident CTAs (2 per
// SM) then span 4 tile-rows x all 64 tile-columns of an 8192 x 8192 C, i.e.
// 4 A panels and all 64 B panels. The grouped order of src/sched/tile_order.h
// (the same remap the Hopper ladder uses, CUTLASS's swizzle) walks kGroupM =
// 16 tile-rows down before moving one tile-column right, so the resident CTAs
// cover about 16 x 17 tiles: 16 A panels and 17 B panels.
//   The article remaps with a 3-D grid (blockIdx.z strips of N, a serpentine
//   over blockIdx.y); a grouped 1-D remap gives the same locality with one
//   integer division and no branch, and it is unit-tested on the CPU
//   (tests/host/test_tile_order.cpp).
// What changed from the previous step: tile order, group_m 1 -> 16.
//
// Tile 128 x 128 x 16, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 10.25 KiB static shared memory, grouped tile order (16 tile-rows).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 16, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 166.7 TFLOP/s, 0.21x cuBLAS (1.02x step 2).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;

using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/16, /*kWarpsM=*/2, /*kWarpsN=*/4,
                            /*kPad=*/8, /*kPadC=*/4, /*kStages=*/1>;
// About sqrt(resident CTAs) on a 132-SM H200 with 2 CTAs per SM: balances the
// A and B panels the resident CTAs touch.
constexpr std::int64_t kGroupM = 16;

template <typename TIn, typename TOut>
__global__ void k03_swizzle_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
                                   TOut* c, Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                                   std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
    wmma::copy_a_vector<Config>(smem.ab.a[0], a, lda, tile, k0);
    wmma::copy_b_vector<Config>(smem.ab.b[0], b, ldb, tile, k0);
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < Config::BK / wmma::kFrag; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[0], smem.ab.b[0], w, ks);
    }
    __syncthreads();
  }
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-03";

}  // namespace

Status launch_wmma_03(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k03_swizzle_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
