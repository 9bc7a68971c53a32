// Hopper ladder, step 5: warp specialization with two consumer warpgroups.
//
// Technique (worklog kernels 4-5, with kernel 7's PTX mbarriers):
//   - TMA loads A and B tiles with 128-byte swizzle into a kStages-deep ring of
//     shared-memory slots; each slot has a "full" mbarrier (TMA bytes landed)
//     and an "empty" mbarrier (both consumers are done reading it).
//   - Warpgroup 0 is the producer: one thread waits for an empty slot, arms
//     the full barrier with the slot's byte count and issues the two TMA loads.
//   - Warpgroups 1 and 2 are consumers: each owns 64 rows of the 128 x 256
//     output tile and issues wgmma m64n256k16 (128 fp32 accumulators per
//     thread), keeping one wgmma-group in flight while it waits for the next
//     slot, and releases a slot only after the wgmmas that read it completed.
//   - setmaxnreg moves registers from the producer (40) to the consumers (232).
//   - The epilogue writes alpha * acc + beta * C straight from registers to a
//     column-major C, masked at the M and N edges.
// What it adds over step 4: a 128 x 256 tile (two consumers instead of one, so
// 128 accumulators per thread instead of 256 and no wgmma serialization) and
// the register split.
//
// Tile BM x BN x BK = 128 x 256 x 64, 384 threads, 4 stages x 48 KiB of shared
// memory, one tile per CTA in grouped order (src/sched/tile_order.h).
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: TMA fills out-of-bounds boxes with zeros and the epilogue
// masks; lda and ldb must be multiples of 8 elements (16-byte TMA strides).
// Measured: see docs/ladder.md and bench/results/.
#include "kernels/hopper/common.cuh"
#include "ptx/common.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

#include <cstdint>
#include <string>

namespace tcgemm::kernels {
namespace {

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
  static constexpr int kGroupM = 8;  // tile-rows per group of the L2-friendly order
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static constexpr int kAccumulators = BN / 2;  // m64n256 fp32: 64 * 256 / 128 threads
};
static_assert(Config::BM == Config::kConsumers * Config::kWgmmaM);
// 65536 registers per SM (H100/H200), one CTA per SM.
static_assert(Config::kWarpgroupThreads * (Config::kProducerRegs +
                                           Config::kConsumers * Config::kConsumerRegs) <= 65536);

template <typename TIn>
struct alignas(1024) SharedStorage {
  // Each tile starts on a 1024-byte boundary, as the 128-byte swizzle needs.
  TIn a[Config::kStages][Config::BM * Config::BK];
  TIn b[Config::kStages][Config::BN * Config::BK];
  std::uint64_t full[Config::kStages];
  std::uint64_t empty[Config::kStages];
};

constexpr std::uint32_t kStageBytes = (Config::BM + Config::BN) * Config::BK * 2;
// Dynamic shared memory is only 16-byte aligned: ask for room to round up.
template <typename TIn>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn>) + 1024;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads, 1)
    k05_warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
                                const __grid_constant__ CUtensorMap map_b, hopper::EpilogueParams epilogue,
                                std::int64_t tiles_m, std::int64_t tiles_n, int k_tiles) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});

  const int warpgroup = threadIdx.x / Config::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Config::kStages; ++s) {
      ptx::mbarrier_init(&smem.full[s], 1);                    // the producer's expect_tx arrival
      ptx::mbarrier_init(&smem.empty[s], Config::kConsumers);  // one arrival per consumer
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  const sched::TileCoord tile =
      sched::grouped_tile(blockIdx.x, tiles_m, tiles_n, Config::kGroupM);

  if (warpgroup == 0) {
    // Producer. One thread issues all loads; the rest of the warpgroup only
    // gives its registers away.
    ptx::setmaxnreg_dec<Config::kProducerRegs>();
    if (threadIdx.x == 0) {
      ptx::tma_prefetch_descriptor(&map_a);
      ptx::tma_prefetch_descriptor(&map_b);
      const auto row_a = static_cast<std::int32_t>(tile.m * Config::BM);
      const auto row_b = static_cast<std::int32_t>(tile.n * Config::BN);
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % Config::kStages;
        const std::uint32_t round = static_cast<std::uint32_t>(kt / Config::kStages);
        ptx::mbarrier_wait_parity(&smem.empty[s], (round & 1) ^ 1);
        ptx::mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);
        ptx::tma_load_2d(smem.a[s], &map_a, &smem.full[s], kt * Config::BK, row_a);
        ptx::tma_load_2d(smem.b[s], &map_b, &smem.full[s], kt * Config::BK, row_b);
      }
    }
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % Config::kWarpgroupThreads == 0;
    float acc[Config::kAccumulators];

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % Config::kStages;
      ptx::mbarrier_wait_parity(&smem.full[s], static_cast<std::uint32_t>(kt / Config::kStages) & 1);
      ptx::wgmma_fence();
      const TIn* a_tile = smem.a[s] + consumer * Config::kWgmmaM * Config::BK;
#pragma unroll
      for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
        // scale-d = 0 on the tile's first wgmma: D = A * B, no zeroing needed.
        ptx::wgmma_m64k16<Config::BN, TIn>(
            acc, ptx::make_smem_desc_k_major_sw128(a_tile + kk * Config::kWgmmaK),
            ptx::make_smem_desc_k_major_sw128(smem.b[s] + kk * Config::kWgmmaK),
            (kt > 0 || kk > 0) ? 1u : 0u);
      }
      ptx::wgmma_commit_group();
      // Keep this k-tile's group in flight; the previous one has now finished
      // reading its slot, which can go back to the producer.
      ptx::wgmma_wait_group<1>();
      if (kt > 0 && leader) ptx::mbarrier_arrive(&smem.empty[(kt - 1) % Config::kStages]);
    }
    ptx::wgmma_wait_group<0>();
    ptx::fence_registers(acc);

    hopper::store_accumulators<TOut, Config::BN>(acc, epilogue, tile.m * Config::BM + consumer * Config::kWgmmaM,
                     tile.n * Config::BN);
  }
}

constexpr std::string_view kName = "k05_warp_specialized";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  const std::int64_t tiles_m = sched::ceil_div(args.m, Config::BM);
  const std::int64_t tiles_n = sched::ceil_div(args.n, Config::BN);
  constexpr std::int64_t kMaxGridX = (std::int64_t{1} << 31) - 1;
  if (tiles_m * tiles_n > kMaxGridX) {
    return {StatusCode::kNotSupported, std::string(kName) + ": more output tiles than one grid holds"};
  }
  auto* kernel = &k05_warp_specialized_kernel<TIn, TOut>;
  Status status = hopper::prepare_kernel(reinterpret_cast<const void*>(kernel), kSmemBytes<TIn>, kName);
  if (!status.ok()) return status;
  CUtensorMap map_a;
  CUtensorMap map_b;
  status = hopper::make_tn_tensor_maps(args, Config::BK, Config::BM, Config::BN, &map_a, &map_b);
  if (!status.ok()) return status;

  const int k_tiles = static_cast<int>(sched::ceil_div(args.k, Config::BK));
  kernel<<<static_cast<unsigned>(tiles_m * tiles_n), Config::kThreads, kSmemBytes<TIn>,
           args.stream>>>(map_a, map_b, hopper::epilogue_params(args), tiles_m, tiles_n, k_tiles);
  return hopper::launch_status(kName);
}

}  // namespace

Status launch_k05_warp_specialized(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
