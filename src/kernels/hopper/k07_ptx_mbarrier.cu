// Hopper ladder, step 7: the raw PTX mbarrier API.
//
// Technique (worklog kernel 7): the persistent kernel of step 6 with its
// cuda::barrier objects replaced by bare mbarriers driven through PTX
// (src/ptx/mbarrier.cuh). Waits are on the phase parity the thread tracks
// itself (RingPosition), so no arrival tokens exist and a thread may wait
// without arriving. That lets each consumer warpgroup release a slot with
// one elected arrival instead of 128: the "empty" barrier counts 2 arrivals
// (one per consumer warpgroup) instead of 256 + 1, and the "full" barrier
// counts the producer's single expect_tx arrival.
// What changed from step 6: cuda::barrier -> ptx::mbarrier_*, arrival counts
// 257 -> 2 (empty) and 1 (full), waits by parity; and each consumer keeps one
// wgmma group in flight (wgmma.wait_group 1), releasing a slot one k-tile
// later instead of draining the tensor pipe before every release.
//
// Tile BM x BN x BK = 128 x 256 x 64, 384 threads (1 producer + 2 consumer
// warpgroups, setmaxnreg 40 / 232), 4 stages x 48 KiB, one CTA per SM looping
// over tiles in grouped order (sched::grouped_tile, 8 tile-rows per group).
// Layout TN (A row-major, B column-major, C column-major); any M, N, K >= 1
// (TMA zero-fills edges, the epilogue masks); lda, ldb multiples of 8.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 718 TFLOP/s = 0.90x at 4096^3, 769 TFLOP/s = 0.96x at 8192^3 (bf16, TN).
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/hopper/common.cuh"
#include "ptx/common.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels {
namespace {

constexpr std::string_view kName = "hopper-07";

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
  static constexpr int kGroupM = 8;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
};
static_assert(hopper::setmaxnreg_fits(Config::kConsumers, Config::kProducerRegs,
                                      Config::kConsumerRegs));

template <typename TIn>
struct alignas(1024) SharedStorage {
  TIn a[Config::kStages][Config::BM * Config::BK];
  TIn b[Config::kStages][Config::BN * Config::BK];
  std::uint64_t full[Config::kStages];
  std::uint64_t empty[Config::kStages];
};

constexpr std::uint32_t kStageBytes = (Config::BM + Config::BN) * Config::BK * 2;
template <typename TIn>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn>) + 1024;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads, 1)
    hopper07_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, hopper::EpilogueParams epilogue,
                    std::int64_t tiles_m, std::int64_t tiles_n, int k_tiles) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  const std::int64_t tiles = tiles_m * tiles_n;

  const int warpgroup = threadIdx.x / Config::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Config::kStages; ++s) {
      ptx::mbarrier_init(&smem.full[s], 1);
      ptx::mbarrier_init(&smem.empty[s], Config::kConsumers);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Config::kProducerRegs>();
    if (threadIdx.x == 0) {
      ptx::tma_prefetch_descriptor(&map_a);
      ptx::tma_prefetch_descriptor(&map_b);
      hopper::RingPosition<Config::kStages> ring;
      for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const sched::TileCoord tile = sched::grouped_tile(t, tiles_m, tiles_n, Config::kGroupM);
        const auto row_a = static_cast<std::int32_t>(tile.m * Config::BM);
        const auto row_b = static_cast<std::int32_t>(tile.n * Config::BN);
        for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
          // A fresh barrier's "previous" phase counts as complete, so the
          // first pass (phase 0) waits on parity 1 and returns at once.
          ptx::mbarrier_wait_parity(&smem.empty[ring.slot], ring.phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(&smem.full[ring.slot], kStageBytes);
          ptx::tma_load_2d(smem.a[ring.slot], &map_a, &smem.full[ring.slot], kt * Config::BK,
                           row_a);
          ptx::tma_load_2d(smem.b[ring.slot], &map_b, &smem.full[ring.slot], kt * Config::BK,
                           row_b);
        }
      }
    }
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % Config::kWarpgroupThreads == 0;
    hopper::RingPosition<Config::kStages> ring;
    float acc[Config::BN / 2];

    for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const sched::TileCoord tile = sched::grouped_tile(t, tiles_m, tiles_n, Config::kGroupM);
#pragma unroll
      for (float& x : acc) x = 0.0f;
      int previous_slot = -1;
      for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
        ptx::mbarrier_wait_parity(&smem.full[ring.slot], ring.phase);
        ptx::wgmma_fence();
        const TIn* a_tile = smem.a[ring.slot] + consumer * Config::kWgmmaM * Config::BK;
#pragma unroll
        for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
          ptx::wgmma_m64k16<Config::BN, TIn>(
              acc, ptx::make_smem_desc_k_major_sw128(a_tile + kk * Config::kWgmmaK),
              ptx::make_smem_desc_k_major_sw128(smem.b[ring.slot] + kk * Config::kWgmmaK), 1);
        }
        ptx::wgmma_commit_group();
        // One group stays in flight; the one before it has finished reading
        // its slot, which goes back to the producer.
        ptx::wgmma_wait_group<1>();
        if (previous_slot >= 0 && leader) ptx::mbarrier_arrive(&smem.empty[previous_slot]);
        previous_slot = ring.slot;
      }
      ptx::wgmma_wait_group<0>();
      if (leader) ptx::mbarrier_arrive(&smem.empty[previous_slot]);
      ptx::fence_registers(acc);
      // The producer is already filling slots for this CTA's next tile while
      // these stores drain: the overlap step 6 introduced.
      hopper::store_accumulators<TOut, Config::BN>(
          acc, epilogue, tile.m * Config::BM + consumer * Config::kWgmmaM, tile.n * Config::BN);
    }
  }
}

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  return hopper::launch_tn_step<Config>(&hopper07_kernel<TIn, TOut>, kName, args, kSmemBytes<TIn>,
                                        hopper::Grid::kOnePerSm);
}

}  // namespace

Status launch_hopper_07(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
