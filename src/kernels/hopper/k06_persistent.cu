// Hopper ladder, step 6: a persistent kernel over grouped tiles.
//
// Technique (worklog kernel 6):
//   - The grid is one CTA per SM (the count is read from the device, never
//     assumed). CTA b computes tiles b, b + gridDim.x, b + 2 * gridDim.x, ...
//     of the linear tile order, so a CTA lives for the whole GEMM.
//   - The ring and its cuda::barriers persist across tiles: the producer
//     thread runs straight on from the last K-slice of one tile into the
//     first K-slices of the next, so while the consumers write the current
//     tile's accumulators to C, the next tile's loads are already landing.
//     Producer and consumers both just keep stepping round the ring.
//   - The linear order is the grouped order of sched::grouped_tile: kGroupM
//     tile-rows at a time, walked column by column, so the ~one wave of
//     tiles in flight shares a few A row-panels and B column-panels, which
//     then hit in L2 (the worklog's 16 x 8 block of tiles).
//   - Consumers zero their accumulators at the start of each tile; the rest
//     (two consumer warpgroups of m64n256k16, setmaxnreg, all 257 threads
//     arriving on every full/empty barrier) is step 5.
// What changed from step 5: persistent CTAs instead of one CTA per tile
// (loads of the next tile overlap the store of this one), and the L2-friendly
// grouped tile order instead of plain row-major. Tile counts are ceiling
// divisions, so partial tiles at the M and N edges are scheduled like any
// other.
//
// Tile BM x BN x BK = 128 x 256 x 64, 384 threads (producer + 2 consumer
// warpgroups), 4 stages x 48 KiB of shared memory, min(SMs, tiles) CTAs
// looping over tiles in grouped order (kGroupM = 16 tile-rows).
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: TMA fills out-of-bounds boxes with zeros (and still counts
// the full box bytes) and the epilogue masks; lda and ldb must be multiples
// of 8 elements and A and B 16-byte aligned (TMA strides and addresses).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 583 TFLOP/s = 0.73x at 4096^3, 615 TFLOP/s = 0.77x at 8192^3 (bf16, TN).
#include <algorithm>
#include <cstdint>
#include <cuda/barrier>
#include <string>

#include "kernels/hopper/common.cuh"
#include "ptx/common.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels {
namespace {

using Barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

struct Config {
  static constexpr int BM = 128;
  static constexpr int BN = 256;
  static constexpr int BK = 64;  // 64 x 2 bytes = 128 bytes: one swizzle row
  static constexpr int kStages = 4;
  static constexpr int kConsumers = 2;
  static constexpr int kWarpgroupThreads = 128;
  static constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;
  static constexpr int kWgmmaM = 64;
  static constexpr int kWgmmaK = 16;
  static constexpr int kGroupM = 16;  // tile-rows per group of the L2-friendly order
  // The producer now maps tile indices to coordinates (64-bit divisions),
  // which spill in step 5's 24 registers: 40 / 232 instead of 24 / 240.
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static constexpr int kAccumulators = BN / 2;  // m64n256 fp32: 64 * 256 / 128 threads
  // Every consumer thread and the one producer thread arrive on each barrier.
  static constexpr int kArrivals = kConsumers * kWarpgroupThreads + 1;
};
static_assert(Config::BM == Config::kConsumers * Config::kWgmmaM);
static_assert(hopper::setmaxnreg_fits(Config::kConsumers, Config::kProducerRegs,
                                      Config::kConsumerRegs));

template <typename TIn>
struct alignas(1024) SharedStorage {
  // Each tile starts on a 1024-byte boundary, as the 128-byte swizzle needs.
  TIn a[Config::kStages][Config::BM * Config::BK];
  TIn b[Config::kStages][Config::BN * Config::BK];
  Barrier full[Config::kStages];
  Barrier empty[Config::kStages];
};
// The B tiles and the second consumer's A rows start on 1024-byte boundaries too.
static_assert(Config::kWgmmaM * Config::BK * 2 % 1024 == 0);

constexpr std::uint32_t kStageBytes = (Config::BM + Config::BN) * Config::BK * 2;
// Dynamic shared memory is only 16-byte aligned: ask for room to round up.
template <typename TIn>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn>) + 1024;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads, 1)
    k06_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b,
                          hopper::EpilogueParams epilogue, std::int64_t tiles_m,
                          std::int64_t tiles_n, int k_tiles) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});

  const int warpgroup = threadIdx.x / Config::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Config::kStages; ++s) {
      init(&smem.full[s], Config::kArrivals);
      init(&smem.empty[s], Config::kArrivals);
    }
    // Makes the initialized barriers visible to the TMA unit (async proxy).
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();

  const std::int64_t tiles = tiles_m * tiles_n;

  if (warpgroup == 0) {
    // Producer: one thread issues every load; the rest of the warpgroup only
    // gives its registers away.
    ptx::setmaxnreg_dec<Config::kProducerRegs>();
    if (threadIdx.x == 0) {
      int s = 0;  // ring slot, carried across tiles
      for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const sched::TileCoord tile = sched::grouped_tile(t, tiles_m, tiles_n, Config::kGroupM);
        const auto row_a = static_cast<int>(tile.m * Config::BM);
        const auto row_b = static_cast<int>(tile.n * Config::BN);
        for (int kt = 0; kt < k_tiles; ++kt) {
          smem.empty[s].wait(smem.empty[s].arrive());
          cde::cp_async_bulk_tensor_2d_global_to_shared(smem.a[s], &map_a, kt * Config::BK, row_a,
                                                        smem.full[s]);
          cde::cp_async_bulk_tensor_2d_global_to_shared(smem.b[s], &map_b, kt * Config::BK, row_b,
                                                        smem.full[s]);
          static_cast<void>(cuda::device::barrier_arrive_tx(smem.full[s], 1, kStageBytes));
          if (++s == Config::kStages) s = 0;
        }
      }
    }
  } else {
    // Consumers. Every slot starts empty.
    ptx::setmaxnreg_inc<Config::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    for (int s = 0; s < Config::kStages; ++s) static_cast<void>(smem.empty[s].arrive());

    int s = 0;  // ring slot, carried across tiles
    float acc[Config::kAccumulators];
    for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const sched::TileCoord tile = sched::grouped_tile(t, tiles_m, tiles_n, Config::kGroupM);
#pragma unroll
      for (int i = 0; i < Config::kAccumulators; ++i) acc[i] = 0.0f;

      for (int kt = 0; kt < k_tiles; ++kt) {
        smem.full[s].wait(smem.full[s].arrive());
        ptx::wgmma_fence();
        const TIn* a_rows = smem.a[s] + consumer * Config::kWgmmaM * Config::BK;
#pragma unroll
        for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
          ptx::wgmma_m64k16<Config::BN, TIn>(
              acc, ptx::make_smem_desc_k_major_sw128(a_rows + kk * Config::kWgmmaK),
              ptx::make_smem_desc_k_major_sw128(smem.b[s] + kk * Config::kWgmmaK), 1u);
        }
        ptx::wgmma_commit_group();
        // The slot goes back to the producer only once the wgmmas reading it
        // have completed.
        ptx::wgmma_wait_group<0>();
        static_cast<void>(smem.empty[s].arrive());
        if (++s == Config::kStages) s = 0;
      }

      // Meanwhile the producer is already filling the freed slots with the
      // next tile's K-slices.
      ptx::fence_registers(acc);
      hopper::store_accumulators<TOut, Config::BN>(
          acc, epilogue, tile.m * Config::BM + consumer * Config::kWgmmaM, tile.n * Config::BN);
    }
  }
}

constexpr std::string_view kName = "hopper-06";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  return hopper::launch_tn_step<Config>(&k06_persistent_kernel<TIn, TOut>, kName, args,
                                        kSmemBytes<TIn>, hopper::Grid::kOnePerSm);
}

}  // namespace

Status launch_hopper_06(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
