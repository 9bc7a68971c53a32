// Hopper ladder, step 13 (beyond the worklog): the C tile written by stmatrix.
//
// Technique: in steps 10-12 each consumer thread writes its 128 accumulators
// into the shared C buffer one 2-byte store at a time, while no wgmma is
// queued (both consumers reach the epilogue together): 128 st.shared per
// thread per tile. stmatrix.x4.trans stores four 8 x 8 blocks of 16-bit
// values per warp instruction, transposed, straight from the wgmma fragment
// layout (which is the mma accumulator layout stmatrix reads): 16 instructions
// per thread per tile, each conflict-free under the 128-byte swizzle.
// What changed from step 12: Cfg TmaStoreConfig<4, 128> -> <4, 128, true>
// (stage_c_part_stmatrix in kernels/hopper/tma_store_kernel.cuh).
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, Hilbert order, C stored by TMA in two halves.
// Layout TN; any N, K >= 1 and M a multiple of 8; lda, ldb, ldc multiples of
// 8; C 16-byte aligned; bf16 or fp16 output.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder-10-13.csv, same-run
// cuBLAS): 759 TFLOP/s = 0.97x at 4096^3 (step 12 in that run: 0.95x), 678
// TFLOP/s = 1.01x at 8192^3 on a card that throttled to 1530 MHz (bf16, TN).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_13(const GemmArgs& args) {
  return hopper::tma_store::launch<sched::HilbertOrder,
                                   hopper::tma_store::TmaStoreConfig<4, 128, /*kStmatrix=*/true>>(
      args, "hopper-13");
}

}  // namespace tcgemm::kernels
