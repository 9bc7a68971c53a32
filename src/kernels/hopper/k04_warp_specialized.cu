// Hopper ladder, step 4: warp specialization over a ring of stages.
//
// Technique (worklog kernel 4):
//   - The CTA has two warpgroups with different jobs. Warpgroup 0 is the
//     producer: one of its threads walks the K-slices, loading each into the
//     next slot of a kStages-deep ring of shared-memory slots with TMA.
//     Warpgroup 1 is the consumer: it multiplies slot after slot with wgmma.
//     Loads of later slices now overlap the wgmmas of earlier ones.
//   - Each slot has two cuda::barriers (the CUDA C++ API, with arrival
//     tokens), both expecting the consumer's 128 threads plus the producer
//     thread:
//       full[s]   the slot holds data: the producer arrives with
//                 barrier_arrive_tx(slot bytes) after issuing the loads, each
//                 consumer thread arrives and waits on its token;
//       empty[s]  the slot may be refilled: each consumer thread arrives once
//                 its wgmmas on the slot have completed, the producer arrives
//                 and waits on its token before reloading. The consumer
//                 arrives once on every empty barrier up front, so the first
//                 pass round the ring finds all slots free.
//   - The consumer computes the 128 x 128 tile as in step 3 (two 64-row
//     halves, wgmma m64n128k16, 2 x 64 accumulators per thread) and writes it
//     straight from registers, masked.
// What changed from step 3: a producer warpgroup and a ring of kStages slots
// with full/empty barriers replace the single-stage load-wait-compute loop, so
// the TMA loads hide behind the tensor-core work.
//
// Tile BM x BN x BK = 128 x 128 x 64, 256 threads (producer + consumer
// warpgroup), 5 stages x 32 KiB of shared memory, one tile per CTA in plain
// row-major order.
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: TMA fills out-of-bounds boxes with zeros (and still counts
// the full box bytes) and the epilogue masks; lda and ldb must be multiples
// of 8 elements and A and B 16-byte aligned (TMA strides and addresses).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 362 TFLOP/s = 0.45x at 4096^3, 381 TFLOP/s = 0.48x at 8192^3 (bf16, TN).
#include <cstdint>
#include <cuda/barrier>
#include <string>

#include "kernels/hopper/common.cuh"
#include "ptx/wgmma.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels {
namespace {

using Barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

struct Config {
  static constexpr int BM = 128;
  static constexpr int BN = 128;
  static constexpr int BK = 64;  // 64 x 2 bytes = 128 bytes: one swizzle row
  static constexpr int kStages = 5;
  static constexpr int kConsumers = 1;
  static constexpr int kWarpgroupThreads = 128;
  static constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;
  static constexpr int kWgmmaM = 64;
  static constexpr int kWgmmaK = 16;
  static constexpr int kHalves = BM / kWgmmaM;  // 64-row wgmma blocks per tile
  static constexpr int kGroupM = 1;  // plain row-major tile order (step 6 groups tiles for L2)
  static constexpr int kAccumulators = BN / 2;  // per half, m64n128 fp32: 64 * 128 / 128 threads
  // Every consumer thread and the one producer thread arrive on each barrier.
  static constexpr int kArrivals = kConsumers * kWarpgroupThreads + 1;
};

template <typename TIn>
struct alignas(1024) SharedStorage {
  // Each tile starts on a 1024-byte boundary, as the 128-byte swizzle needs.
  TIn a[Config::kStages][Config::BM * Config::BK];
  TIn b[Config::kStages][Config::BN * Config::BK];
  Barrier full[Config::kStages];
  Barrier empty[Config::kStages];
};
// The B tiles and the second A half start on 1024-byte boundaries too.
static_assert(Config::kWgmmaM * Config::BK * 2 % 1024 == 0);

constexpr std::uint32_t kStageBytes = (Config::BM + Config::BN) * Config::BK * 2;
// Dynamic shared memory is only 16-byte aligned: ask for room to round up.
template <typename TIn>
constexpr std::size_t kSmemBytes = sizeof(SharedStorage<TIn>) + 1024;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads)
    k04_warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
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

  const sched::TileCoord tile = sched::grouped_tile(blockIdx.x, tiles_m, tiles_n, Config::kGroupM);

  if (warpgroup == 0) {
    // Producer: one thread issues every load; the rest of the warpgroup idles.
    if (threadIdx.x == 0) {
      const auto row_a = static_cast<int>(tile.m * Config::BM);
      const auto row_b = static_cast<int>(tile.n * Config::BN);
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % Config::kStages;
        smem.empty[s].wait(smem.empty[s].arrive());
        cde::cp_async_bulk_tensor_2d_global_to_shared(smem.a[s], &map_a, kt * Config::BK, row_a,
                                                      smem.full[s]);
        cde::cp_async_bulk_tensor_2d_global_to_shared(smem.b[s], &map_b, kt * Config::BK, row_b,
                                                      smem.full[s]);
        static_cast<void>(cuda::device::barrier_arrive_tx(smem.full[s], 1, kStageBytes));
      }
    }
  } else {
    // Consumer. Every slot starts empty.
    for (int s = 0; s < Config::kStages; ++s) static_cast<void>(smem.empty[s].arrive());

    float acc[Config::kHalves][Config::kAccumulators];
#pragma unroll
    for (int h = 0; h < Config::kHalves; ++h) {
#pragma unroll
      for (int i = 0; i < Config::kAccumulators; ++i) acc[h][i] = 0.0f;
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % Config::kStages;
      smem.full[s].wait(smem.full[s].arrive());
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < Config::BK / Config::kWgmmaK; ++kk) {
#pragma unroll
        for (int h = 0; h < Config::kHalves; ++h) {
          const TIn* a_half = smem.a[s] + h * Config::kWgmmaM * Config::BK;
          ptx::wgmma_m64k16<Config::BN, TIn>(
              acc[h], ptx::make_smem_desc_k_major_sw128(a_half + kk * Config::kWgmmaK),
              ptx::make_smem_desc_k_major_sw128(smem.b[s] + kk * Config::kWgmmaK), 1u);
        }
      }
      ptx::wgmma_commit_group();
      // The slot goes back to the producer only once the wgmmas reading it
      // have completed.
      ptx::wgmma_wait_group<0>();
      static_cast<void>(smem.empty[s].arrive());
    }

#pragma unroll
    for (int h = 0; h < Config::kHalves; ++h) {
      ptx::fence_registers(acc[h]);
      hopper::store_accumulators<TOut, Config::BN>(
          acc[h], epilogue, tile.m * Config::BM + h * Config::kWgmmaM, tile.n * Config::BN);
    }
  }
}

constexpr std::string_view kName = "hopper-04";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  return hopper::launch_tn_step<Config>(&k04_warp_specialized_kernel<TIn, TOut>, kName, args,
                                        kSmemBytes<TIn>, hopper::Grid::kOnePerTile);
}

}  // namespace

Status launch_hopper_04(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
