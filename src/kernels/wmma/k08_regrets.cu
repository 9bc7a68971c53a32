// WMMA ladder, step 8: the article's three regrets (article 3.9), two of them
// implemented, as two registry kernels from one templated kernel.
//
//   Regret 3, write-back (wmma-08 and wmma-08-wide): results go from the
//     accumulator registers straight to C, without the shared-memory round
//     trip. The article could not, not knowing where each element sits in a
//     fragment; nvcuda::wmma does not document it either, so the kernel asks
//     the fragment at run time (store_direct in common.cuh: load a 16 x 16
//     matrix of positions into an accumulator fragment; each lane's x[t]
//     then says where its element t goes). Supported API only. As a bonus C
//     needs no alignment beyond its element and any ldc: each lane writes
//     single elements, wherever the fragment says they belong.
//   Regret 1, block layout (wmma-08-wide only): fewer threads, each warp a
//     larger tile. The article's Moore Threads experts ran 256 x 256 with 512
//     threads (4 warps of 128 x 128) instead of 1024; the article got 33
//     TFLOP/s trying, the experts' hand-written code promised ~80. Here: the
//     same 128 x 128 CTA tile with 4 warps of 64 x 64 instead of 8 of 64 x 32,
//     128 threads: each warp reads 8 fragments per 16 MMAs instead of 6 per
//     8, 2/3 of the shared-memory traffic per MMA, at 128 fp32 accumulators
//     per thread.
//   Regret 2, a persistent grid fed by an atomic tile counter: NOT
//     implemented. It needs a counter in global memory zeroed before every
//     launch (a workspace the tcgemm API does not have, or global mutable
//     state shared by concurrent callers); the Hopper ladder's persistent
//     steps (hopper-06 on) show the static-schedule version of the idea.
// What changed from the previous step (7): the C epilogue (both kernels);
// the warp layout, 2 x 4 -> 2 x 2 warps of 64 x 64 (wmma-08-wide).
//
// wmma-08:      tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32
//               per warp, at most 128 registers (2 CTAs per SM).
// wmma-08-wide: tile 128 x 128 x 64, 128 threads (4 warps, 2 x 2), 64 x 64
//               per warp, at most 255 registers, 2 CTAs per SM.
// Both: 35 KiB + 1 KiB (position matrix) static shared memory, grouped tile
// order (16 tile-rows), otherwise step 7.
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda and ldb multiples of 8, and A
// and B 16-byte aligned; any ldc.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// wmma-08 316.6 TFLOP/s, 0.41x cuBLAS (0.99x step 7);
// wmma-08-wide 288.7 TFLOP/s, 0.37x (0.90x step 7: 254 registers, 8 warps
// per SM, one slice of fragments at a time).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;
namespace port = ::tcgemm::wmma_port;

constexpr int kBatch = 4;
constexpr std::int64_t kGroupM = 16;

// wmma-08: step 7's tiling.
using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/kBatch * wmma::kFrag, /*kWarpsM=*/2,
                            /*kWarpsN=*/4, /*kPad=*/8, /*kPadC=*/0, /*kStages=*/1>;
// wmma-08-wide: regret 1.
using WideConfig = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/kBatch * wmma::kFrag, /*kWarpsM=*/2,
                                /*kWarpsN=*/2, /*kPad=*/8, /*kPadC=*/0, /*kStages=*/1>;
constexpr int kMinBlocksPerSm = 2;

// The A/B buffers alone: no C staging any more.
template <typename TIn, class Cfg>
struct TileBuffers {
  TIn a[Cfg::BK * Cfg::kLdA];
  TIn b[Cfg::BN * Cfg::kLdB];
};

template <class Cfg, typename TIn, typename TOut>
__global__ TCGEMM_WMMA_KERNEL_ATTRS void __launch_bounds__(Cfg::kThreads, kMinBlocksPerSm)
    k08_regrets_kernel(const TIn* __restrict__ a, std::int64_t lda, const TIn* __restrict__ b,
                       std::int64_t ldb, TOut* __restrict__ c, Epilogue ep, std::int64_t k,
                       std::int64_t tiles_m, std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) TileBuffers<TIn, Cfg> smem;
  __shared__ alignas(wmma::kWmmaAlignBytes) float positions[wmma::kFragElements];
  const Tile tile = wmma::cta_tile<Cfg>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Cfg>();
  wmma::AsyncCopier<Cfg, TIn> copier(a, lda, b, ldb, tile);
  // 64 x 64 per warp leaves no registers for fragments of the next slice
  // loaded ahead: one 16-deep slice at a time. The same for bf16 at 128
  // registers: nvcc 13.0 lowers bf16 fragment loads to generic 32-bit loads
  // (no ldmatrix), whose 64-bit addresses need the registers.
  constexpr bool kTight = Cfg::kFragsN > 2 || std::is_same_v<TIn, __nv_bfloat16>;
  constexpr int kSliceUnroll = kTight ? 1 : kBatch;
  // Visible to every warp after the main loop's first barrier (K >= 64).
  wmma::fill_position_matrix<Cfg>(positions);

  wmma::Accumulators<Cfg> acc;
  wmma::zero_accumulators<Cfg>(acc);
  bool a_first = true;
  for (std::int64_t k0 = 0; k0 < k; k0 += Cfg::BK) {
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      if ((pass == 0) == a_first) {
        copier.copy_a(smem.a);
      } else {
        copier.copy_b(smem.b);
      }
    }
    a_first = !a_first;
    copier.advance();
    port::copy_async_commit();
    port::copy_async_wait<0>();
    __syncthreads();
#pragma unroll kSliceUnroll
    for (int ks = 0; ks < kBatch; ++ks) {
      wmma::mma_slice<Cfg>(acc, smem.a, smem.b, w, ks);
    }
    __syncthreads();
  }
  wmma::store_direct<Cfg>(acc, positions, c, ep, tile, w);
}

template <class Cfg>
Status launch_regrets(const GemmArgs& args, std::string_view name) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Cfg>(&k08_regrets_kernel<Cfg, TIn, TOut>, name, args);
  });
}

}  // namespace

Status launch_wmma_08(const GemmArgs& args) { return launch_regrets<Config>(args, "wmma-08"); }

Status launch_wmma_08_wide(const GemmArgs& args) {
  return launch_regrets<WideConfig>(args, "wmma-08-wide");
}

}  // namespace tcgemm::kernels
