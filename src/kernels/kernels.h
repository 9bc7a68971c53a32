// Launchers of every kernel the library ships; the registry (src/registry.cpp)
// is their only caller besides the K == 0 path of the API.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <string>

namespace tcgemm::kernels {

// C = beta * C for every batch entry (K == 0 or alpha == 0 in the API; beta == 0
// writes zeros without reading C). Any layout and output dtype.
Status launch_scale_c(const GemmArgs& args);

// The Hopper ladder (issue 3), one launcher per step; each file's header says
// what the step adds over the previous one.
// Step 1: SIMT 2-D block tiling, no tensor cores. See k01_simt_blocktiling.cu.
Status launch_hopper_01(const GemmArgs& args);
// Step 2: wgmma m64n64k16 + TMA + cuda::barrier, 64 x 64 tile. See k02_wgmma_tma.cu.
Status launch_hopper_02(const GemmArgs& args);
// Step 3: 128 x 128 tile, wgmma m64n128k16. See k03_larger_tiles.cu.
Status launch_hopper_03(const GemmArgs& args);
// Step 4: producer + consumer warpgroups over a ring of stages. See k04_warp_specialized.cu.
Status launch_hopper_04(const GemmArgs& args);
// Step 5: 128 x 256 tile, two consumer warpgroups, setmaxnreg. See k05_two_consumers.cu.
Status launch_hopper_05(const GemmArgs& args);
// Step 6: persistent CTAs over grouped tiles. See k06_persistent.cu.
Status launch_hopper_06(const GemmArgs& args);

// Hopper ladder steps 7-15 (src/kernels/hopper/k07_* .. k15_*).
Status launch_hopper_07(const GemmArgs& args);
Status launch_hopper_08(const GemmArgs& args);
Status launch_hopper_09(const GemmArgs& args);
Status launch_hopper_10(const GemmArgs& args);
Status launch_hopper_11(const GemmArgs& args);
Status launch_hopper_12(const GemmArgs& args);
Status launch_hopper_13(const GemmArgs& args);
Status launch_hopper_14(const GemmArgs& args);
// Step 15: stream-K over the last round (k15_stream_k.cu); its workspace in bytes.
Status launch_hopper_15(const GemmArgs& args);
std::size_t workspace_hopper_15(const GemmArgs& args);

// The WMMA ladder (issue 4): the S4000 article's fp16 NN GEMM re-created on
// CUDA WMMA, one launcher per step (src/kernels/wmma/k00_* .. k11_*); each
// file's header says what the step adds over the previous one.
Status launch_wmma_00(const GemmArgs& args);       // baseline, see k00_baseline.cu
Status launch_wmma_01(const GemmArgs& args);       // 16-byte copies, k01_vectorized.cu
Status launch_wmma_02(const GemmArgs& args);       // padded shared rows, k02_padding.cu
Status launch_wmma_03(const GemmArgs& args);       // grouped tile order, k03_swizzle.cu
Status launch_wmma_04(const GemmArgs& args);       // cp.async double buffer, k04_cp_async.cu
Status launch_wmma_05(const GemmArgs& args);       // BATCH of K tiles per barrier, k05_batch_k.cu
Status launch_wmma_06(const GemmArgs& args);       // alternating A/B order, k06_alternate.cu
Status launch_wmma_07(const GemmArgs& args);       // compiler-facing, k07_compiler.cu
Status launch_wmma_08(const GemmArgs& args);       // regret 3: direct stores, k08_regrets.cu
Status launch_wmma_08_wide(const GemmArgs& args);  // regrets 1 + 3, k08_regrets.cu
Status launch_wmma_09(const GemmArgs& args);       // UNSAFE data race, k09_hazard.cu
Status launch_wmma_10(const GemmArgs& args);       // 3-stage pipeline, k10_multistage.cu
Status launch_wmma_11(const GemmArgs& args);       // 64x64 warp tiles, k11_large_warp_tile.cu

namespace hopper {
// Number of SMs of the current device: persistent grids size themselves by
// it (src/kernels/hopper/common.cu).
Status multiprocessor_count(int* count);
}  // namespace hopper

// The production family (src/kernels/prod/): every storage order, shape,
// alignment and batch. `config` indexes the config table (prod/config.h),
// the K split then the heuristic's best for it; kAutoConfig lets the
// family's heuristic choose both (prod/problem.h), kInvariantConfig makes
// the batch-invariant choice (no split, nothing that depends on M).
inline constexpr int kAutoConfig = -1;
inline constexpr int kInvariantConfig = -2;
Status launch_prod(const GemmArgs& args, int config);
// Bytes of workspace the launch uses (0 when none): 4 KiB it leaves
// untouched (stream-K's flags), then the repacked copies of operands TMA
// cannot address and a K split's fp32 partial sums. Taken from
// args.workspace when that is large enough, else allocated stream-ordered
// for the call.
std::size_t workspace_prod(const GemmArgs& args, int config);
// The full launch configuration, one line (tcgemm::describe).
std::string describe_prod(const GemmArgs& args, int config);
// kNotSupported where the launch would refuse the problem's size
// (prepare's size_limits), else success: KernelInfo::limits.
Status limits_prod(const GemmArgs& args, int config);

// The family's small-M path (src/kernels/prod/skinny.h): A row-major, B
// column-major, K-contiguous rows 16-byte aligned; any M, N (the registry
// entry takes min(M, N) <= 16, where it measured fastest), any C layout,
// output dtype and batch.
Status launch_prod_skinny(const GemmArgs& args);
std::string describe_prod_skinny(const GemmArgs& args);

template <int kConfig>
Status launch_prod_config(const GemmArgs& args) {
  return launch_prod(args, kConfig);
}
template <int kConfig>
std::size_t workspace_prod_config(const GemmArgs& args) {
  return workspace_prod(args, kConfig);
}
template <int kConfig>
std::string describe_prod_config(const GemmArgs& args) {
  return describe_prod(args, kConfig);
}
template <int kConfig>
Status limits_prod_config(const GemmArgs& args) {
  return limits_prod(args, kConfig);
}

}  // namespace tcgemm::kernels
