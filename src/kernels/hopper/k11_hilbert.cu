// Hopper ladder, step 11: Hilbert-curve tile order.
//
// Technique (worklog kernel 11): the persistent clusters walk the output's
// tile pairs along a generalized Hilbert curve (sched/hilbert.h) instead of
// grouped row order. Work item u goes to cluster u mod (number of clusters),
// so the tiles in flight at any moment are a contiguous stretch of the curve:
// a compact blob of the output that shares A row-panels and B column-panels,
// and the next wave's blob borders the current one, so its panels are
// still in L2. Unlike the public code this covers any tile grid (no power-of-
// two or 128-tile limit): hilbert_tile is a bijection on every rectangle.
// What changed from step 10: the kernel's Order argument, GroupedOrder ->
// HilbertOrder (the kernel is shared: kernels/hopper/tma_store_kernel.cuh).
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 3 stages, shared-memory C tile stored by TMA.
// Layout TN; any M, N, K >= 1; lda, ldb, ldc multiples of 8; C 16-byte
// aligned; bf16 or fp16 output.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 731 TFLOP/s = 0.92x at 4096^3, 777 TFLOP/s = 0.97x at 8192^3 (bf16, TN).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_11(const GemmArgs& args) {
  return hopper::tma_store::launch<sched::HilbertOrder, hopper::tma_store::TmaStoreConfig<3, 256>>(
      args, "hopper-11");
}

}  // namespace tcgemm::kernels
