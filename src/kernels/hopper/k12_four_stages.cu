// Hopper ladder, step 12 (beyond the worklog): the ring's fourth stage back.
//
// Technique: step 10 paid for its shared-memory C tiles (2 x 32 KiB) with a
// stage of the A/B ring: 3 stages of 48 KiB instead of 4. With wgmma groups
// kept in flight (one slot held by the tensor cores, one being consumed), a
// 3-deep ring leaves about one k-tile of TMA lookahead. Here each consumer
// stores its 64 x 256 slice in two TMA stores of 64 x 128 through one 16 KiB
// buffer (the second waits until the first has read it), which frees 32 KiB:
// 4 stages + 2 x 16 KiB of C fit the 227 KiB a block may use.
// What changed from step 11: Cfg TmaStoreConfig<3, 256> -> <4, 128>.
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, Hilbert order, C stored by TMA in two halves.
// Layout TN; any N, K >= 1 and M a multiple of 8; lda, ldb, ldc multiples of
// 8; C 16-byte aligned; bf16 or fp16 output.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 759 TFLOP/s = 0.95x at 4096^3, 785 TFLOP/s = 0.98x at 8192^3 (bf16, TN).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_12(const GemmArgs& args) {
  return hopper::tma_store::launch<sched::HilbertOrder, hopper::tma_store::TmaStoreConfig<4, 128>>(
      args, "hopper-12");
}

}  // namespace tcgemm::kernels
