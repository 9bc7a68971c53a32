// Hopper ladder, step 2: tensor cores (wgmma), TMA loads and a barrier.
//
// Technique (worklog kernel 2):
//   - One warpgroup (128 threads) per 64 x 64 output tile. For each 64-wide
//     K-slice, one thread asks the TMA unit to copy the A tile (64 x 64) and
//     the B tile (64 x 64) into shared memory with 128-byte swizzle, the
//     layout wgmma reads; the copies complete on a CUDA C++ barrier
//     (cuda::barrier, the API of the CUDA programming guide) by transaction
//     bytes: the issuing thread arrives with barrier_arrive_tx(bytes), every
//     other thread arrives plainly, and all wait on their arrival token.
//   - The warpgroup then issues 4 wgmma m64n64k16 (16 K-elements each),
//     accumulating into 32 fp32 registers per thread, and waits for them
//     before the next slice overwrites the tiles (single stage: load, wait,
//     compute, wait).
//   - The epilogue writes alpha * acc + beta * C straight from registers to a
//     column-major C, masked at the M and N edges.
// What changed from step 1: the tensor cores do the multiply (wgmma instead of
// FMA), the TMA unit does the copy (one thread instead of all), and the tile
// is the wgmma's own shape, 64 x 64.
//
// Tile BM x BN x BK = 64 x 64 x 64, 128 threads, 16 KiB of shared memory, one
// tile per CTA in plain row-major order.
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: TMA fills out-of-bounds boxes with zeros (and still counts
// the full box bytes) and the epilogue masks; lda and ldb must be multiples
// of 8 elements and A and B 16-byte aligned (TMA strides and addresses).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 353 TFLOP/s = 0.44x at 4096^3, 302 TFLOP/s = 0.38x at 8192^3 (bf16, TN).
#include <cstdint>
#include <cuda/barrier>
#include <string>
#include <utility>

#include "kernels/hopper/common.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels {
namespace {

using Barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

struct Config {
  static constexpr int BM = 64;
  static constexpr int BN = 64;
  static constexpr int BK = 64;         // 64 x 2 bytes = 128 bytes: one swizzle row
  static constexpr int kThreads = 128;  // one warpgroup
  static constexpr int kWgmmaK = 16;
  static constexpr int kGroupM = 1;  // plain row-major tile order (step 6 groups tiles for L2)
  static constexpr int kAccumulators = BN / 2;  // m64n64 fp32: 64 * 64 / 128 threads
};

template <typename TIn>
struct alignas(1024) SharedStorage {
  // Each tile starts on a 1024-byte boundary, as the 128-byte swizzle needs.
  TIn a[Config::BM * Config::BK];
  TIn b[Config::BN * Config::BK];
  Barrier loaded;
};
static_assert(Config::BM * Config::BK * 2 % 1024 == 0, "B tile must stay 1024-byte aligned");

constexpr std::uint32_t kTileBytes = (Config::BM + Config::BN) * Config::BK * 2;
// Dynamic shared memory is only 16-byte aligned: ask for room to round up.
template <typename TIn>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn>) + 1024;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads)
    k02_wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b, hopper::EpilogueParams epilogue,
                         std::int64_t tiles_m, std::int64_t tiles_n, int k_tiles) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});

  if (threadIdx.x == 0) {
    init(&smem.loaded, Config::kThreads);
    // Makes the initialized barrier visible to the TMA unit (async proxy).
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();

  const sched::TileCoord tile = sched::grouped_tile(blockIdx.x, tiles_m, tiles_n, Config::kGroupM);
  const auto row_a = static_cast<int>(tile.m * Config::BM);
  const auto row_b = static_cast<int>(tile.n * Config::BN);

  float acc[Config::kAccumulators];
#pragma unroll
  for (int i = 0; i < Config::kAccumulators; ++i) acc[i] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    Barrier::arrival_token token;
    if (threadIdx.x == 0) {
      cde::cp_async_bulk_tensor_2d_global_to_shared(smem.a, &map_a, kt * Config::BK, row_a,
                                                    smem.loaded);
      cde::cp_async_bulk_tensor_2d_global_to_shared(smem.b, &map_b, kt * Config::BK, row_b,
                                                    smem.loaded);
      token = cuda::device::barrier_arrive_tx(smem.loaded, 1, kTileBytes);
    } else {
      token = smem.loaded.arrive();
    }
    smem.loaded.wait(std::move(token));

    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
      ptx::wgmma_m64k16<Config::BN, TIn>(
          acc, ptx::make_smem_desc_k_major_sw128(smem.a + kk * Config::kWgmmaK),
          ptx::make_smem_desc_k_major_sw128(smem.b + kk * Config::kWgmmaK), 1u);
    }
    ptx::wgmma_commit_group();
    ptx::wgmma_wait_group<0>();
    // Every warp's wgmmas have read the tiles before thread 0 reloads them.
    __syncthreads();
  }
  ptx::fence_registers(acc);

  hopper::store_accumulators<TOut, Config::BN>(acc, epilogue, tile.m * Config::BM,
                                               tile.n * Config::BN);
}

constexpr std::string_view kName = "hopper-02";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  return hopper::launch_tn_step<Config>(&k02_wgmma_tma_kernel<TIn, TOut>, kName, args,
                                        kSmemBytes<TIn>, hopper::Grid::kOnePerTile);
}

}  // namespace

Status launch_hopper_02(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
