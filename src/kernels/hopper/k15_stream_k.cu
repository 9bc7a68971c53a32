// Hopper ladder, step 15 (beyond the worklog): stream-K for the last round.
//
// Technique: at 4096^3 the 256 tile pairs of 128 x 256 fill 66 clusters in
// 3.88 rounds, and step 14 runs 4 (on 64 clusters: the fourth round is the
// quantization every data-parallel grid pays; each CTA already runs within
// 4% of the tensor cores' bound). Step 15 keeps the whole rounds (198 pairs,
// round-robin in Hilbert order) and splits the last 58 pairs' 3712 k-tiles
// evenly over all 66 resident clusters, 56 or 57 each (sched/stream_k.h):
// the busiest cluster does 249 k-tiles instead of 256. A pair split over
// several clusters is finished by the cluster holding its first k-tile; the
// others (whose share begins their range, so it is done first) write fp32
// partial sums to the GEMM workspace and raise a flag (release); the head
// waits for the flags (acquire), adds the partials in cluster order (the
// result is bitwise repeatable) and stores C as step 14 does.
// What changed from step 14: Cfg TmaStoreConfig<..., kStreamK = true>; the
// producer hands over each work item's k-tile count and fixup role with its
// origin; the grid is all resident clusters when the split pays (it falls
// back to step 14's balanced data-parallel grid when it does not: a full
// last round, or too few k-tiles to split); it needs a workspace of 128 KiB
// per SM (tcgemm::workspace_size).
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, Hilbert order, C stored by TMA in two halves.
// Layout TN; any N, K >= 1 and M a multiple of 8; lda, ldb, ldc multiples of
// 8; C 16-byte aligned; bf16 or fp16 output (step 14's constraints).
// Measured: not yet.
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {
namespace {

using Step15Config =
    hopper::tma_store::TmaStoreConfig<4, 128, /*kStmatrix=*/true, /*kProducerSchedule=*/true,
                                      /*kBalancedGrid=*/true, /*kDeferredStore=*/true,
                                      /*kStreamK=*/true>;

}  // namespace

Status launch_hopper_15(const GemmArgs& args) {
  return hopper::tma_store::launch<sched::HilbertOrder, Step15Config>(args, "hopper-15");
}

std::size_t workspace_hopper_15(const GemmArgs& /*args*/) {
  return hopper::tma_store::stream_k_workspace_size<Step15Config>();
}

}  // namespace tcgemm::kernels
