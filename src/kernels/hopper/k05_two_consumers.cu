// Hopper ladder, step 5: 128 x 256 tiles with two consumer warpgroups.
//
// Technique (worklog kernel 5):
//   - The ring of step 4 (one producer thread issuing TMA loads into
//     kStages slots, full/empty cuda::barriers with arrival tokens) now feeds
//     two consumer warpgroups. Both multiply every slot, so each barrier
//     expects both consumers' 256 threads plus the producer thread (257
//     arrivals: the token traffic step 7 cuts down).
//   - The output tile grows to 128 x 256. One warpgroup holding it would need
//     256 accumulators per thread, every register a thread may have: ptxas
//     spills and serializes the wgmmas (warning C7511), the worklog's 5x
//     slowdown. Split by rows instead: consumer c owns rows 64c .. 64c + 63
//     and issues wgmma m64n256k16, 128 accumulators per thread.
//   - setmaxnreg rebalances the register file: the producer warpgroup drops
//     to kProducerRegs, the consumers rise to kConsumerRegs (the worklog's
//     24 / 240 split, 128 * (24 + 2 * 240) = 64512 of 65536 registers).
//   - Each consumer writes its 64 x 256 block straight from registers, masked.
// What changed from step 4: a 128 x 256 tile (twice the reuse of each loaded
// A byte), two consumers instead of one, m64n256k16 instead of two
// m64n128k16, 4 stages instead of 5 (a slot is now 48 KiB) and the register
// split.
//
// Tile BM x BN x BK = 128 x 256 x 64, 384 threads (producer + 2 consumer
// warpgroups), 4 stages x 48 KiB of shared memory, one tile per CTA in plain
// row-major order.
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: TMA fills out-of-bounds boxes with zeros (and still counts
// the full box bytes) and the epilogue masks; lda and ldb must be multiples
// of 8 elements and A and B 16-byte aligned (TMA strides and addresses).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 561 TFLOP/s = 0.70x at 4096^3, 597 TFLOP/s = 0.75x at 8192^3 (bf16, TN).
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
  static constexpr int kGroupM = 1;  // plain row-major tile order (step 6 groups tiles for L2)
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
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
    k05_two_consumers_kernel(const __grid_constant__ CUtensorMap map_a,
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
    // Producer: one thread issues every load; the rest of the warpgroup only
    // gives its registers away.
    ptx::setmaxnreg_dec<Config::kProducerRegs>();
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
    // Consumers. Every slot starts empty.
    ptx::setmaxnreg_inc<Config::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    for (int s = 0; s < Config::kStages; ++s) static_cast<void>(smem.empty[s].arrive());

    float acc[Config::kAccumulators];
#pragma unroll
    for (int i = 0; i < Config::kAccumulators; ++i) acc[i] = 0.0f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % Config::kStages;
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
    }

    ptx::fence_registers(acc);
    hopper::store_accumulators<TOut, Config::BN>(
        acc, epilogue, tile.m * Config::BM + consumer * Config::kWgmmaM, tile.n * Config::BN);
  }
}

constexpr std::string_view kName = "hopper-05";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  return hopper::launch_tn_step<Config>(&k05_two_consumers_kernel<TIn, TOut>, kName, args,
                                        kSmemBytes<TIn>, hopper::Grid::kOnePerTile);
}

}  // namespace

Status launch_hopper_05(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
