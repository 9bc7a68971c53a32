// Hopper ladder, step 15 (beyond the worklog): stream-K for the last round.
//
// Technique: a persistent grid of whole tile pairs pays for its last, partial
// round: at 8192^3 the 1024 pairs of 128 x 256 fill 66 clusters in 15.5
// rounds, and step 14 runs 16 (on 64). Step 15 keeps the whole rounds (990
// pairs, round-robin in Hilbert order) and splits the last 34 pairs' 4352
// k-tiles evenly over all 66 resident clusters, 65 or 66 each
// (sched/stream_k.h). A pair split over several clusters is finished by the
// cluster holding its first k-tile; the others (whose share begins their
// range, so it is done first) write fp32 partial sums to the GEMM workspace
// and raise a flag (release); the head waits for the flags (acquire), adds
// the partials in cluster order (bitwise repeatable), lowers the flags and
// stores C as step 14 does.
// What changed from step 14: Cfg TmaStoreConfig<..., kStreamK = true>; the
// producer hands over each work item's k-tile count and fixup role with its
// origin, and ends with an empty item; the grid is every resident cluster.
// The split pays only when it saves more than its fixup, which moves every
// CTA's 128 KiB partial through L2 at once (~11 us on the H200): the schedule
// charges 16 k-tiles for it and 1/64 of the whole rounds for this kernel's
// bookkeeping, and when it splits nothing step 14's kernel runs (4096^3).
// Needs the GEMM workspace: 4 KiB of flags, then, from 512 KiB in, 128 KiB
// per SM (tcgemm::workspace_size). When nothing is split it calls step 14's
// launcher (launch_hopper_14), never a second instance of that kernel.
//
// Tile 128 x 256 x 64 per CTA, clusters of 2 along M with B multicast,
// 384 threads, 4 stages, Hilbert order, C stored by TMA in two halves.
// Layout TN; any N, K >= 1 and M a multiple of 8; lda, ldb, ldc multiples of
// 8; C 16-byte aligned; bf16 or fp16 output (step 14's constraints).
// Measured (H200, same-run cuBLAS, bf16 TN): 1.049x / 1.053x at 8192^3 in two
// runs of steps 14-15 (step 14: 1.030x / 1.034x; bench/results/h200/
// 2026-11-30-hopper-15-final-{1,2}.csv), 1.017x in the fifteen-step ladder
// run (step 14: 1.019x; 2026-11-30-hopper-ladder.csv); 1024 x 768 x 4096
// 0.68x (step 14: 0.41x), 2040 x 2304 x 8192 0.84x (0.62x)
// (2026-11-30-stream-k-shapes.csv); 4096^3 runs step 14's kernel. Built from
// d9765fe (kernels unchanged since): 1.048x at 8192^3 with step 14 at 1.029x
// (2026-11-30-hopper-15-v10-worklog.csv); llm set 2026-11-30-llm-hopper-15-
// v10.csv. Built from f04c4fa: 1.013x in the ladder rerun (step 14 1.018x;
// 2026-11-30-hopper-ladder-f04c4fa.csv).
#include "kernels/hopper/tma_store_kernel.cuh"

namespace tcgemm::kernels {
namespace {

using Step15Config =
    hopper::tma_store::TmaStoreConfig<4, 128, /*kStmatrix=*/true, /*kProducerSchedule=*/true,
                                      /*kBalancedGrid=*/true, /*kDeferredStore=*/true,
                                      /*kStreamK=*/true>;

}  // namespace

Status launch_hopper_15(const GemmArgs& args) {
  return hopper::tma_store::launch<sched::HilbertOrder, Step15Config>(args, "hopper-15",
                                                                      &launch_hopper_14);
}

std::size_t workspace_hopper_15(const GemmArgs& /*args*/) {
  return hopper::tma_store::stream_k_workspace_size<Step15Config>();
}

}  // namespace tcgemm::kernels
