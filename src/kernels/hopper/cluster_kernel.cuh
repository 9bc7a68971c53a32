// The kernel of Hopper ladder steps 8 and 9 (k08_cluster_multicast.cu and
// k09_micro_opts.cu): persistent clusters of 2 CTAs along M with TMA
// multicast of B, direct register-to-global stores. Step 9's three
// micro-optimizations are the kMicroOpts template argument, so diffing the
// two steps is reading the `if constexpr` branches; each step's file holds
// its header and its launcher.
#pragma once

#include "kernels/hopper/common.cuh"
#include "ptx/cluster.cuh"
#include "ptx/common.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels::hopper::cluster {

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
  static constexpr int kClusterM = 2;  // CTAs per cluster, stacked along M
  static constexpr int kGroupM = 4;    // tile-pair rows per group (8 tile-rows)
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

// kMicroOpts (step 9): scale-d = 0 on each tile's first wgmma instead of
// zeroing the accumulators, and store_accumulators' tuned store order with
// write-through stores.
template <typename TIn, typename TOut, bool kMicroOpts>
__global__ void __launch_bounds__(Config::kThreads, 1)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           EpilogueParams epilogue, std::int64_t tiles_m, std::int64_t tiles_n, int k_tiles) {
  extern __shared__ std::uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<TIn>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  const std::int64_t pairs_m = sched::ceil_div(tiles_m, Config::kClusterM);
  const std::int64_t units = pairs_m * tiles_n;
  const std::int64_t cluster_id = blockIdx.x / Config::kClusterM;
  const std::int64_t clusters = gridDim.x / Config::kClusterM;
  const std::uint32_t rank = ptx::cluster_ctarank();

  const int warpgroup = threadIdx.x / Config::kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Config::kStages; ++s) {
      ptx::mbarrier_init(&smem.full[s], 1);
      ptx::mbarrier_init(&smem.empty[s], Config::kConsumers * Config::kClusterM);
    }
    ptx::fence_mbarrier_init();
  }
  // The peer's TMA and consumers use our barriers: inits visible cluster-wide first.
  ptx::cluster_sync();

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Config::kProducerRegs>();
    if (threadIdx.x == 0) {
      ptx::tma_prefetch_descriptor(&map_a);
      ptx::tma_prefetch_descriptor(&map_b);
      RingPosition<Config::kStages> ring;
      constexpr std::uint16_t kAllCtas = (1u << Config::kClusterM) - 1;
      constexpr int kBHalfRows = Config::BN / Config::kClusterM;
      for (std::int64_t u = cluster_id; u < units; u += clusters) {
        const sched::TileCoord pair = sched::grouped_tile(u, pairs_m, tiles_n, Config::kGroupM);
        const auto row_a = static_cast<std::int32_t>(
            sched::cluster_member_tile(pair, rank, Config::kClusterM).m * Config::BM);
        const auto row_b = static_cast<std::int32_t>(pair.n * Config::BN + rank * kBHalfRows);
        for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
          // A fresh barrier's "previous" phase counts as complete, so the
          // first pass (phase 0) waits on parity 1 and returns at once.
          ptx::mbarrier_wait_parity(&smem.empty[ring.slot], ring.phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(&smem.full[ring.slot], kStageBytes);
          ptx::tma_load_2d(smem.a[ring.slot], &map_a, &smem.full[ring.slot], kt * Config::BK,
                           row_a);
          ptx::tma_load_2d_multicast(smem.b[ring.slot] + rank * kBHalfRows * Config::BK, &map_b,
                                     &smem.full[ring.slot], kt * Config::BK, row_b, kAllCtas);
        }
      }
    }
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % Config::kWarpgroupThreads == 0;
    RingPosition<Config::kStages> ring;
    float acc[Config::BN / 2];

    // Releases a slot in every CTA of the cluster: both producers write it.
    auto release = [&](int slot) {
      if (leader) {
#pragma unroll
        for (int cta = 0; cta < Config::kClusterM; ++cta) {
          ptx::mbarrier_arrive_cluster(&smem.empty[slot], static_cast<std::uint32_t>(cta));
        }
      }
    };

    for (std::int64_t u = cluster_id; u < units; u += clusters) {
      const sched::TileCoord pair = sched::grouped_tile(u, pairs_m, tiles_n, Config::kGroupM);
      const sched::TileCoord tile = sched::cluster_member_tile(pair, rank, Config::kClusterM);
      if constexpr (!kMicroOpts) {
#pragma unroll
        for (float& x : acc) x = 0.0f;
      }
      int previous_slot = -1;
      for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
        ptx::mbarrier_wait_parity(&smem.full[ring.slot], ring.phase);
        ptx::wgmma_fence();
        const TIn* a_tile = smem.a[ring.slot] + consumer * Config::kWgmmaM * Config::BK;
#pragma unroll
        for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
          ptx::wgmma_m64k16<Config::BN, TIn>(
              acc, ptx::make_smem_desc_k_major_sw128(a_tile + kk * Config::kWgmmaK),
              ptx::make_smem_desc_k_major_sw128(smem.b[ring.slot] + kk * Config::kWgmmaK),
              // With kMicroOpts, D = A * B on the tile's first k-step.
              (!kMicroOpts || kt > 0 || kk > 0) ? 1u : 0u);
        }
        ptx::wgmma_commit_group();
        // One group stays in flight; the one before it has finished reading
        // its slot, which goes back to the producer.
        ptx::wgmma_wait_group<1>();
        if (previous_slot >= 0) release(previous_slot);
        previous_slot = ring.slot;
      }
      ptx::wgmma_wait_group<0>();
      release(previous_slot);
      ptx::fence_registers(acc);
      // The producer is already filling slots for this CTA's next tile while
      // these stores drain: the overlap step 6 introduced.
      store_accumulators<TOut, Config::BN, kMicroOpts>(
          acc, epilogue, tile.m * Config::BM + consumer * Config::kWgmmaM, tile.n * Config::BN);
    }
  }
  // The peer may still arrive on our empty barriers: stay until it is done.
  // (The producer warp's lanes diverged around its one issuing thread.)
  __syncwarp();
  ptx::cluster_sync();
}

template <typename TIn, typename TOut, bool kMicroOpts>
Status launch_typed(const GemmArgs& args, std::string_view name) {
  const std::int64_t tiles_m = sched::ceil_div(args.m, Config::BM);
  const std::int64_t tiles_n = sched::ceil_div(args.n, Config::BN);
  const std::int64_t units = sched::ceil_div(tiles_m, Config::kClusterM) * tiles_n;
  auto* kernel = &cluster::kernel<TIn, TOut, kMicroOpts>;
  Status status = allow_dynamic_smem(reinterpret_cast<const void*>(kernel), kSmemBytes<TIn>, name);
  if (!status.ok()) return status;
  int resident_clusters = 0;
  status = max_active_clusters(kernel, kSmemBytes<TIn>, Config::kThreads, Config::kClusterM,
                               &resident_clusters);
  if (!status.ok()) return status;
  CUtensorMap map_a;
  CUtensorMap map_b;
  status = make_tn_tensor_maps(args, Config::BK, Config::BM, Config::BN / Config::kClusterM, &map_a,
                               &map_b);
  if (!status.ok()) return status;

  const std::int64_t clusters = std::min<std::int64_t>(resident_clusters, units);
  return launch_kernel(kernel, name, static_cast<unsigned>(clusters * Config::kClusterM),
                       Config::kThreads, kSmemBytes<TIn>, Config::kClusterM, args.stream, map_a,
                       map_b, epilogue_params(args), tiles_m, tiles_n,
                       static_cast<int>(sched::ceil_div(args.k, Config::BK)));
}

// The launcher of steps 8 and 9, which differ only in kMicroOpts.
template <bool kMicroOpts>
Status launch(const GemmArgs& args, std::string_view name) {
  return visit_tn_types(args, [&]<typename TIn, typename TOut>() {
    return launch_typed<TIn, TOut, kMicroOpts>(args, name);
  });
}

}  // namespace tcgemm::kernels::hopper::cluster
