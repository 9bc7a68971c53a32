// Hopper ladder, step 8: thread-block clusters with TMA multicast.
//
// Technique (worklog kernel 8): CTAs run in clusters of 2 that compute two
// vertically adjacent output tiles (tile-rows 2p and 2p + 1, same tile-column).
// Both need the same 256 x 64 slice of B per k-tile, so each CTA loads half of
// it (128 x 64) and multicasts it into both CTAs' shared memory: B traffic
// from L2 halves. Each CTA still loads its own A tile.
// Synchronization that changes with it: a slot in CTA r is written by both
// producers, so a producer may refill a slot only when the consumers of BOTH
// CTAs have released it. The "empty" barrier therefore counts 4 arrivals (2
// consumer warpgroups x 2 CTAs) and each consumer leader arrives on the slot's
// empty barrier in both CTAs (the remote one through mapa). The "full" barrier
// still counts one local expect_tx arrival for the slot's 48 KiB (A + both B
// halves), whichever CTA's TMA delivered them. Barrier inits are made visible
// cluster-wide, and no CTA exits before its peer stops arriving on it
// (cluster_sync at both ends).
// What changed from step 7: __cluster_dims__-style launch (cudaLaunchKernelEx,
// cluster 2 x 1), work units are tile pairs, B box 128 instead of 256 rows
// with multicast, empty-barrier count 2 -> 4 with remote arrivals.
//
// Tile 128 x 256 x 64 per CTA, 384 threads, 4 stages, persistent grid of the
// SM count rounded down to whole clusters, tile pairs in grouped order.
// Layout TN; any M, N, K >= 1 (an odd tile-row count leaves the second CTA of
// the last pair computing an all-out-of-bounds tile, which it never stores);
// lda, ldb multiples of 8.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 716 TFLOP/s = 0.90x at 4096^3, 766 TFLOP/s = 0.96x at 8192^3 (bf16, TN).
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/hopper/cluster_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_08(const GemmArgs& args) {
  return hopper::cluster::launch</*kMicroOpts=*/false>(args, "hopper-08");
}

}  // namespace tcgemm::kernels
