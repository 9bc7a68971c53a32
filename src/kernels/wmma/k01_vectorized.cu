// WMMA ladder, step 1: vectorized global <-> shared copies (article 3.2, 40 TFLOP/s).
//
// Technique: every copy moves 16 bytes at once.
//   - A tile: thread t loads the 8 consecutive M elements (t % 16) * 8 .. + 7
//     of K row t / 16 with one 16-byte load and stores them with one 16-byte
//     store (the article's LDST64BITS moved 4 halves; 16 bytes is the widest
//     CUDA access). A column-major A is M-contiguous, so a warp reads two
//     whole 256-byte K rows.
//   - B tile: a column-major B is K-contiguous, and one 16-deep slice of a
//     column is only 32 bytes: two threads per column, a warp touches 16
//     columns, each a separate 32-byte sector (the article's complaint about
//     a column-major B; step 5's deeper K step reads 128 bytes per column).
//   - Epilogue: each lane reads 8 staged fp32 values of one C column as two
//     16-byte shared loads and writes them to C with 16-byte stores.
// What changed from the previous step: 2-byte copies -> 16-byte copies (A, B
// and C).
//
// Tile 128 x 128 x 16, 256 threads (8 warps, 2 x 4), 64 x 32 per warp, 8 KiB
// static shared memory, hardware tile order.
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 16, lda, ldb and ldc multiples of 8, and
// A, B, C 16-byte aligned (every access is 16 bytes).
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 82.0 TFLOP/s, 0.11x cuBLAS (1.82x step 0).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;

using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/16, /*kWarpsM=*/2, /*kWarpsN=*/4,
                            /*kPad=*/0, /*kPadC=*/0, /*kStages=*/1>;
constexpr std::int64_t kGroupM = 1;

template <typename TIn, typename TOut>
__global__ void k01_vectorized_kernel(const TIn* a, std::int64_t lda, const TIn* b,
                                      std::int64_t ldb, TOut* c, Epilogue ep, std::int64_t k,
                                      std::int64_t tiles_m, std::int64_t tiles_n) {
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

constexpr std::string_view kName = "wmma-01";

}  // namespace

Status launch_wmma_01(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k01_vectorized_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
