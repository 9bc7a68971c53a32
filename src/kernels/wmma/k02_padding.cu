// WMMA ladder, step 2: padded shared-memory rows against bank conflicts
// (article 3.3, 42 TFLOP/s).
//
// Technique: each shared row of A and B, and each column of the C staging
// buffer, is padded so that the rows a fragment load reads start in
// different banks.
//   - On sm_90, load_matrix_sync of a 16 x 16 half fragment compiles to
//     ldmatrix (LDSM), which reads eight 16-byte rows per 8 x 8 matrix in one
//     shared-memory wavefront when the eight rows fall in distinct 16-byte
//     bank groups (of the eight in a 128-byte line). Unpadded, a row of A is
//     128 elements = 256 bytes: all eight rows start in the same bank group,
//     an 8-way conflict (the article's "bank 0-15 busy, 16-31 idle" on
//     S4000). A row of B is 16 elements = 32 bytes: rows 0-3 and 4-7 collide,
//     2-way. Padding each row by 8 elements (16 bytes) makes the strides 272
//     and 48 bytes, and the eight rows hit eight different bank groups.
//   - WMMA needs ldm to be a multiple of 16 bytes, so the article's 2-element
//     pad (4 bytes) is not expressible here: 8 elements is the smallest.
//   - The fp32 staging of C: store_matrix_sync writes, per instruction, rows
//     lane / 4 of columns 2 * (lane % 4) (+1); with 16-float columns, columns
//     0, 2, 4, 6 are 128 bytes apart and share banks (4-way). 20-float columns
//     (pad 4, the smallest WMMA allows for floats) spread them over the banks.
// What changed from the previous step: kPad = 8 elements on every row of A
// and B, kPadC = 4 floats on every staged column of C.
//
// Tile 128 x 128 x 16, 256 threads (8 warps, 2 x 4), 64 x 32 per warp,
// 10.25 KiB static shared memory (A 4.25 KiB + B 6 KiB; C staging 10 KiB,
// overlaid), hardware tile order.
// Layout: NN. bf16 or fp16 in, bf16, fp16 or fp32 out. Needs M and N
// multiples of 128, K a multiple of 16, lda, ldb, ldc multiples of 8, and A,
// B, C 16-byte aligned.
// Measured (H200, 8192 x 8192 x 16384 fp16 NN, one bench run,
// bench/results/h200/2026-11-29-wmma-ladder-8192.csv):
// 163.4 TFLOP/s, 0.21x cuBLAS (1.99x step 1: the
// unpadded ldmatrix conflicts halved the speed; the article gained 5%).
#include "kernels/wmma/common.cuh"

namespace tcgemm::kernels {
namespace {

using wmma::Epilogue;
using wmma::Tile;
using wmma::WarpPos;

using Config = wmma::Config</*BM=*/128, /*BN=*/128, /*BK=*/16, /*kWarpsM=*/2, /*kWarpsN=*/4,
                            /*kPad=*/8, /*kPadC=*/4, /*kStages=*/1>;
constexpr std::int64_t kGroupM = 1;

template <typename TIn, typename TOut>
__global__ void k02_padding_kernel(const TIn* a, std::int64_t lda, const TIn* b, std::int64_t ldb,
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

constexpr std::string_view kName = "wmma-02";

}  // namespace

Status launch_wmma_02(const GemmArgs& args) {
  return wmma::visit_types(args, [&]<typename TIn, typename TOut>() {
    return wmma::launch_tiles<Config>(&k02_padding_kernel<TIn, TOut>, kName, args);
  });
}

}  // namespace tcgemm::kernels
