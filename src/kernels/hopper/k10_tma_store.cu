// Hopper ladder, step 10: asynchronous stores through shared memory and TMA.
//
// Technique (worklog kernel 10): instead of each thread storing its
// accumulators straight to global memory, each consumer warpgroup writes its
// 64 x 256 slice (converted to the output type, alpha/beta applied) into a
// shared-memory C tile and one thread hands it to the TMA unit with a bulk
// tensor store, which runs while the warpgroup goes on with the next tile's
// wgmmas. The C tile is laid out as TMA's 128-byte swizzle expects for a
// column-major box of 64 rows x 256 columns (a column is one 128-byte line),
// which also spreads a warp's 2-byte writes over distinct banks.
// Ordering (HOPPER-NOTES): the writers fence their generic-proxy writes to the
// async proxy, a warpgroup barrier, then the store; before the tile is
// rewritten for the next output tile, the issuing thread waits for the store
// to finish reading it (wait_group.read) and a warpgroup barrier passes that on.
// The C tiles (2 x 32 KiB) cost one stage of the ring: 3 stages instead of 4.
// What changed from step 9: store_accumulators -> shared C tile + TMA store.
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 3 stages, persistent grid of resident clusters, grouped order.
// Layout TN; any M, N, K >= 1; lda, ldb, ldc multiples of 8; C 16-byte
// aligned; bf16 or fp16 output (fp32 output is refused: its 256-byte columns
// need a second box per column; the dispatcher falls back to step 9).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 735 TFLOP/s = 0.92x at 4096^3, 783 TFLOP/s = 0.98x at 8192^3 (bf16, TN).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {

// Grouped order over tile pairs: 4 pair-rows (8 tile-rows) per group.
using Step10Order = sched::GroupedOrder<4>;

Status launch_hopper_10(const GemmArgs& args) {
  return hopper::tma_store::launch<Step10Order, hopper::tma_store::TmaStoreConfig<3, 256>>(
      args, "hopper-10");
}

}  // namespace tcgemm::kernels
