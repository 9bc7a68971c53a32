// WMMA ladder, step 6: alternating the order of the A and B copies between
// batches (article 3.7, 53 TFLOP/s).
//
// Technique: the article's argument is cache locality in time: a batch that
// copies A then B leaves B's lines most recently touched, so the next batch
// should start with B. Even batches issue A's copies first, odd batches B's,
// so consecutive batches meet on the same operand. As in the article's
// second version, the choice is folded into one loop of two passes with a
// predicate (uniform across the CTA, so no divergence) rather than two
// duplicated branches.
//   On an H200 the copies of one batch are all in flight together (cp.async
//   issues without waiting), so the order only changes which requests reach
//   L2 first; the measurement says whether that is worth anything here.
// What changed from the previous step: the A-then-B copy order alternates
// with the batch parity.
//
// Tile 128 x 128 x 64, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 35 KiB static shared memory, grouped tile order (16 tile-rows).
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 64, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 177.2 TFLOP/s, 0.23x cuBLAS (1.03x step 5).
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

template <typename TIn, typename TOut>
__global__ void k06_alternate_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
                                     TOut* c, Epilogue ep, std::int64_t k, std::int64_t tiles_m,
                                     std::int64_t tiles_n) {
  __shared__ alignas(wmma::kWmmaAlignBytes) wmma::SharedStorage<TIn, Config> smem;
  const Tile tile = wmma::cta_tile<Config>(tiles_m, tiles_n, kGroupM);
  const WarpPos w = wmma::warp_pos<Config>();

  wmma::Accumulators<Config> acc;
  wmma::zero_accumulators<Config>(acc);
  bool a_first = true;
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      if ((pass == 0) == a_first) {
        wmma::copy_a_async<Config>(smem.ab.a[0], a, lda, tile, k0);
      } else {
        wmma::copy_b_async<Config>(smem.ab.b[0], b, ldb, tile, k0);
      }
    }
    a_first = !a_first;
    port::copy_async_commit();
    port::copy_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kBatch; ++ks) {
      wmma::mma_slice<Config>(acc, smem.ab.a[0], smem.ab.b[0], w, ks);
    }
    __syncthreads();
  }
  wmma::store_staged<Config, /*kVectorized=*/true>(acc, smem.c[w.warp], c, ep, tile, w);
}

constexpr std::string_view kName = "wmma-06";

}  // namespace

Status launch_wmma_06(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k06_alternate_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
