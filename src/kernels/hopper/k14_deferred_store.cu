// Hopper ladder, step 14 (beyond the worklog): the tensor cores stop waiting
// between tiles.
//
// Technique: an in-kernel clock64 trace of step 13 at 4096^3 (per tile, per
// consumer warpgroup) put the mainloop at 66.2k cycles, within 1% of the
// 65.5k a 128 x 256 x 4096 tile needs at the tensor cores' peak, but 4.3k
// more cycles per tile went to work done while no wgmma was queued:
//  - 1.85k between tiles: each consumer computed the next tile's Hilbert index
//    (64-bit divisions). Now only the producer walks the tile order; it writes
//    the tile's origin beside the slot of the tile's first k-tile with
//    st.async, which completes on the slot's full barrier like the TMA
//    loads, and the consumers read it after their wait, with a warpgroup
//    barrier before the slot can be released and rewritten: 0.1k.
//  - 2.45k in the epilogue, of which 1.0k waiting for the TMA store of the
//    slice's first half to read the 16 KiB buffer before the second half
//    could be staged (every CTA ends its tile at the same moment, so C
//    leaves in bursts). Now the first half is stored at once and the second
//    half stays in registers packed to 16 bits (32 per thread, beside the 128
//    accumulators: the consumers' 232 registers hold both, with the tile loop
//    counted in 32 bits) until two k-tiles into the next tile, when the
//    buffer is free and the new tile's wgmmas keep the tensor cores busy:
//    1.1k.
// And the grid is balanced: the fewest clusters that need no more rounds of
// tile pairs than the resident maximum (64 instead of 66 at 4096 and 8192,
// where 256 and 1024 pairs would leave 8 and 32 clusters a round short).
// What changed from step 13: Cfg TmaStoreConfig<4, 128, true> -> <4, 128,
// true, kProducerSchedule, kBalancedGrid, kDeferredStore> (all three in
// kernels/hopper/tma_store_kernel.cuh). The traced mainloop grows to 67.0k
// cycles (one more TMA store per consumer inside it): 68.3k per tile in all,
// against step 13's 70.5k.
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, Hilbert order, C stored by TMA in two halves.
// Layout TN; any N, K >= 1 and M a multiple of 8; lda, ldb, ldc multiples of
// 8; C 16-byte aligned; bf16 or fp16 output (step 13's constraints).
// Measured (H200, bench/results/h200/2026-11-30-hopper-14.csv, same-run
// cuBLAS, bf16 TN): 798 TFLOP/s = 1.00x at 4096^3 (step 13: 0.97x), 707
// TFLOP/s = 1.03x at 8192^3 on a card at 1515 MHz (step 13: 1.01x). With the
// race fixed (the tile's origin handed over by st.async, a barrier before
// the slot's release; racecheck clean on the MultiRound GPU tests):
// 1.006x / 1.009x at 4096 and 1.028x at 8192 in two runs of steps 13-15
// (2026-11-30-hopper-15-{1,2}.csv), 1.01x / 1.02x in the fifteen-step
// ladder run (2026-11-30-hopper-ladder.csv).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_14(const GemmArgs& args) {
  return hopper::tma_store::launch<
      sched::HilbertOrder,
      hopper::tma_store::TmaStoreConfig<4, 128, /*kStmatrix=*/true, /*kProducerSchedule=*/true,
                                        /*kBalancedGrid=*/true, /*kDeferredStore=*/true>>(
      args, "hopper-14");
}

}  // namespace tcgemm::kernels
