// Hopper ladder, step 9: micro-optimizations.
//
// Technique (worklog kernel 9), three small changes to step 8:
//   - the first wgmma of each tile runs with scale-d = 0 (D = A * B), so the
//     128 accumulators are never zeroed between tiles;
//   - the epilogue visits each column's two fragment rows back to back, so
//     consecutive stores land in the same 32-byte sector of a column-major C;
//   - stores are write-through (__stwt, st.global.wt) instead of write-back,
//     leaving L2 capacity to the A and B panels other CTAs are reading.
// What changed from step 8: the kernel's kMicroOpts argument (the kernel is
// shared: kernels/hopper/cluster_kernel.cuh).
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, persistent grid of resident clusters, grouped order.
// Layout TN; any M, N, K >= 1; lda, ldb multiples of 8.
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 714 TFLOP/s = 0.89x at 4096^3, 763 TFLOP/s = 0.95x at 8192^3 (bf16, TN).
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/hopper/cluster_kernel.cuh"

namespace tcgemm::kernels {

Status launch_hopper_09(const GemmArgs& args) {
  return hopper::cluster::launch</*kMicroOpts=*/true>(args, "hopper-09");
}

}  // namespace tcgemm::kernels
