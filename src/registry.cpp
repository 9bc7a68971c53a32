// The kernel registry and the one function that checks a kernel's constraints.
#include <tcgemm/registry.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/prod/config.h"
#include "tuned/tuned.h"

namespace tcgemm {
namespace {

// TMA: global strides are multiples of 16 bytes (8 half-precision elements),
// base addresses 16-byte aligned, coordinates are signed 32-bit.
constexpr std::int64_t kTmaStrideElements16 = 8;
constexpr std::int64_t kTmaAlignmentBytes = 16;
constexpr std::int64_t kTmaMaxCoordinate = (std::int64_t{1} << 31) - 1;
// TMA global strides are below 2^40 bytes: 2^39 two-byte elements.
constexpr std::int64_t kTmaMaxLd16 = (std::int64_t{1} << 39) - 1;

constexpr std::uint32_t kHalfTypes = bit(DType::kBF16) | bit(DType::kFP16);
constexpr std::uint32_t kAllOutputTypes = kHalfTypes | bit(DType::kFP32);

// The TMA-fed Hopper kernels (ladder steps 2 on): TN layout, half-precision
// inputs, TMA rules on A and B, any M, N, K (edges zero-filled and masked).
constexpr KernelConstraints tma_tn_constraints(std::uint32_t output_dtypes) {
  return KernelConstraints{
      .input_dtypes = kHalfTypes,
      .output_dtypes = output_dtypes,
      .a_layouts = bit(Layout::kRowMajor),
      .b_layouts = bit(Layout::kColMajor),
      .c_layouts = bit(Layout::kColMajor),
      .lda_multiple = kTmaStrideElements16,
      .ldb_multiple = kTmaStrideElements16,
      .ab_alignment = kTmaAlignmentBytes,
      .max_dim = kTmaMaxCoordinate,
      .max_ld = kTmaMaxLd16,
      .max_batch = 1,
      .compute_capability = 90,
  };
}

// Steps that also store C through TMA: 16-bit outputs, TMA rules on C too,
// and M a multiple of 8: measured on the H200, a TMA store clips a box's
// contiguous dimension only at 16-byte granularity, so with M % 8 != 0 it
// writes up to 7 rows of a column-major C's padding beyond M.
constexpr KernelConstraints tma_store_constraints() {
  KernelConstraints c = tma_tn_constraints(kHalfTypes);
  c.m_multiple = kTmaStrideElements16;
  c.ldc_multiple = kTmaStrideElements16;
  c.c_alignment = kTmaAlignmentBytes;
  return c;
}

// The WMMA ladder (issue 4): A, B and C column-major ("NN"), whole
// 128 x 128 tiles of C and whole BK-deep slices of K (no edge handling), half
// inputs, any output type, one problem per call. `k_multiple` is the step's
// K depth per iteration (16 or 64); `vector_ab` and `vector_c`: the step moves
// A and B (C) in 16-byte accesses, so their leading dimensions are multiples
// of 8 elements and their base pointers 16-byte aligned. Grid-x and 32-bit
// tile arithmetic keep M, N, K below 2^31.
constexpr std::int64_t kWmmaTile = 128;
constexpr std::int64_t kWmmaVectorElements = 8;
constexpr std::int64_t kWmmaVectorBytes = 16;

constexpr KernelConstraints wmma_nn_constraints(std::int64_t k_multiple, bool vector_ab,
                                                bool vector_c) {
  return KernelConstraints{
      .input_dtypes = kHalfTypes,
      .output_dtypes = kAllOutputTypes,
      .a_layouts = bit(Layout::kColMajor),
      .b_layouts = bit(Layout::kColMajor),
      .c_layouts = bit(Layout::kColMajor),
      .m_multiple = kWmmaTile,
      .n_multiple = kWmmaTile,
      .k_multiple = k_multiple,
      .lda_multiple = vector_ab ? kWmmaVectorElements : 1,
      .ldb_multiple = vector_ab ? kWmmaVectorElements : 1,
      .ldc_multiple = vector_c ? kWmmaVectorElements : 1,
      .ab_alignment = vector_ab ? kWmmaVectorBytes : 1,
      .c_alignment = vector_c ? kWmmaVectorBytes : 1,
      .max_dim = kTmaMaxCoordinate,
      .max_batch = 1,
      .compute_capability = 90,
  };
}

// Step 10: step 7's constraints, fp16 inputs only. Its bf16 instances would
// spill under the 128-register cap of two CTAs per SM: a bf16 WMMA fragment
// load is not an ldmatrix and takes more registers (ptxas, CUDA 13.0).
constexpr KernelConstraints wmma_multistage_constraints() {
  KernelConstraints c = wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/true);
  c.input_dtypes = bit(DType::kFP16);
  return c;
}

// Step 11: whole 128 x 256 tiles of C and 32-deep slices of K; otherwise step
// 7's constraints, bf16 inputs included (one CTA per SM leaves it up to 255
// registers, enough for bf16's fragment loads: ptxas, CUDA 13.0).
constexpr std::int64_t kWmmaWideTileN = 256;
constexpr std::int64_t kWmmaShallowTileK = 32;

constexpr KernelConstraints wmma_large_warp_tile_constraints() {
  KernelConstraints c =
      wmma_nn_constraints(kWmmaShallowTileK, /*vector_ab=*/true, /*vector_c=*/true);
  c.n_multiple = kWmmaWideTileN;
  return c;
}

constexpr std::array kLadderKernels = {
    // The Hopper ladder, one entry per worklog step, and the WMMA ladder:
    // teaching steps, frozen, run only by name (dispatch rank 0). The
    // dispatcher runs the production family (prod_kernels below); measured
    // against the steps it grew from in docs/production.md.
    KernelInfo{
        "hopper-01",
        "Hopper step 1: SIMT 2-D block tiling, no tensor cores; 128x128x16 tile, 256 threads, "
        "8x8 fp32 FMA outputs per thread",
        // Its 16-byte vector loads need what TMA needs of A and B; M, N, K edges
        // are zero-filled and masked.
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_01,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-02",
        "Hopper step 2: wgmma m64n64k16 + TMA + cuda::barrier, single stage; 64x64x64 tile, "
        "1 warpgroup",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_02,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-03",
        "Hopper step 3: larger tiles, wgmma m64n128k16 on two 64-row halves, single stage; "
        "128x128x64 tile, 1 warpgroup",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_03,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-04",
        "Hopper step 4: warp specialization, producer + consumer warpgroup over a 5-stage "
        "cuda::barrier ring; 128x128x64 tile",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_04,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-05",
        "Hopper step 5: two consumer warpgroups of wgmma m64n256k16, setmaxnreg 24/240, "
        "4-stage cuda::barrier ring; 128x256x64 tile",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_05,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-06",
        "Hopper step 6: persistent CTAs (one per SM) over tiles in grouped L2-friendly order, "
        "ring carried across tiles; 128x256x64 tile",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_06,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-07",
        "Hopper step 7: step 6 on raw PTX mbarriers, parity waits, one arrival per warpgroup",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_07,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-08",
        "Hopper step 8: clusters of 2 along M, B tile multicast by TMA to both CTAs",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_08,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-09",
        "Hopper step 9: scale-d = 0 first wgmma, column-ordered write-through stores",
        tma_tn_constraints(kAllOutputTypes),
        &kernels::launch_hopper_09,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-10",
        "Hopper step 10: C staged in swizzled shared memory, stored by TMA asynchronously",
        tma_store_constraints(),
        &kernels::launch_hopper_10,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-11",
        "Hopper step 11: tile pairs visited along a generalized Hilbert curve",
        tma_store_constraints(),
        &kernels::launch_hopper_11,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-12",
        "Hopper step 12 (beyond the worklog): step 11 with a 4-stage ring, C stored in two "
        "64x128 TMA stores",
        tma_store_constraints(),
        &kernels::launch_hopper_12,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-13",
        "Hopper step 13 (beyond the worklog): step 12 with the C tile written by stmatrix",
        tma_store_constraints(),
        &kernels::launch_hopper_13,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-14",
        "Hopper step 14 (beyond the worklog): step 13 with the tile order walked by the producer "
        "alone, a balanced grid, and half of each C tile stored under the next tile's wgmmas",
        tma_store_constraints(),
        &kernels::launch_hopper_14,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "hopper-15",
        "Hopper step 15 (beyond the worklog): step 14 with the last, partial round of tile pairs "
        "split along K over all resident clusters (stream-K; needs a workspace)",
        tma_store_constraints(),
        &kernels::launch_hopper_15,
        /*dispatch_rank=*/0,
        &kernels::workspace_hopper_15,
    },
    // The WMMA ladder (issue 4), one entry per step of the S4000 article, and
    // steps 10 and 11 beyond it: teaching steps, run by name only (the
    // production family serves NN problems). The hazard step (a data race)
    // is marked UNSAFE.
    KernelInfo{
        "wmma-00",
        "WMMA step 0: block + warp tiling over 16x16x16 fragments, scalar copies, C staged in "
        "shared memory; 128x128x16 tile, 256 threads, NN",
        wmma_nn_constraints(16, /*vector_ab=*/false, /*vector_c=*/false),
        &kernels::launch_wmma_00,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-01",
        "WMMA step 1: 16-byte vectorized global <-> shared copies of A, B and C",
        wmma_nn_constraints(16, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_01,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-02",
        "WMMA step 2: shared rows padded by 16 bytes against bank conflicts",
        wmma_nn_constraints(16, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_02,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-03",
        "WMMA step 3: grouped (swizzled) tile order for L2 locality, 16 tile-rows per group",
        wmma_nn_constraints(16, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_03,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-04",
        "WMMA step 4: double buffering with cp.async.cg 16-byte copies, one barrier per K slice",
        wmma_nn_constraints(16, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_04,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-05",
        "WMMA step 5: a batch of 4 K slices (BK=64) per barrier pair instead of double "
        "buffering; 128x128x64 tile",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_05,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-06",
        "WMMA step 6: the order of the A and B copies alternates between batches",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_06,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-07",
        "WMMA step 7: __restrict__, __launch_bounds__(256, 2), copy addresses advanced by "
        "pointer adds (the article's complete code)",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_07,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-08",
        "WMMA step 8 (regret 3): accumulators written from registers straight to C, positions "
        "asked of the fragment; no shared round trip",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/false),
        &kernels::launch_wmma_08,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-08-wide",
        "WMMA step 8 (regrets 1 + 3): 4 warps of 64x64 instead of 8 of 64x32, 128 threads, "
        "direct stores to C",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/false),
        &kernels::launch_wmma_08_wide,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-09",
        "UNSAFE (data race): WMMA step 9, step 7 without its second __syncthreads (the "
        "article's hazard step); results can be wrong, never dispatched",
        wmma_nn_constraints(64, /*vector_ab=*/true, /*vector_c=*/true),
        &kernels::launch_wmma_09,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-10",
        "WMMA step 10 (beyond the article): step 7's tile in a 3-stage cp.async pipeline, one "
        "barrier per 64-deep K tile; fp16 inputs",
        wmma_multistage_constraints(),
        &kernels::launch_wmma_10,
        /*dispatch_rank=*/0,
    },
    KernelInfo{
        "wmma-11",
        "WMMA step 11 (beyond the article): 64x64 warp tiles, fragments loaded a slice ahead, "
        "4-stage cp.async pipeline; 128x256x32 tile, 256 threads, 1 CTA per SM",
        wmma_large_warp_tile_constraints(),
        &kernels::launch_wmma_11,
        /*dispatch_rank=*/0,
    },
};

// The production family (src/kernels/prod/): any storage order of A, B and
// C, any leading dimension, element-aligned pointers, strided batches up to
// 2^31 - 1 entries (the batch index is a 32-bit TMA coordinate), and M, N, K
// up to 2^31 - 257: TMA coordinates are signed 32-bit and a cluster's last
// tile pair may start up to 256 rows past M (its second CTA's tile).
constexpr std::int64_t kProdMaxDim = kTmaMaxCoordinate - 256;

constexpr KernelConstraints prod_constraints() {
  return KernelConstraints{
      .input_dtypes = kHalfTypes,
      .output_dtypes = kAllOutputTypes,
      .a_layouts = bit(Layout::kRowMajor) | bit(Layout::kColMajor),
      .b_layouts = bit(Layout::kRowMajor) | bit(Layout::kColMajor),
      .c_layouts = bit(Layout::kRowMajor) | bit(Layout::kColMajor),
      .max_dim = kProdMaxDim,
      .max_batch = INT32_MAX,
      .compute_capability = 90,
  };
}

// A table row run by name: what the family takes, but a row that takes B
// only K-major (prod::takes_b) needs both operands K-contiguous (A
// row-major, B column-major), so that B is K-major in either orientation
// C's layout or the row's choice gives the kernel.
constexpr KernelConstraints prod_row_constraints(const prod::TileConfig& tile) {
  KernelConstraints c = prod_constraints();
  if (!prod::takes_b(tile, prod::Major::kMN)) {
    c.a_layouts = bit(Layout::kRowMajor);
    c.b_layouts = bit(Layout::kColMajor);
  }
  return c;
}

// Above every ladder step: the dispatcher runs the production family.
constexpr int kProdRank = 100;

// The family's small-M path (prod/skinny.h): mma.sync fed by per-warp
// streams of loads (a cp.async ring up to 8 rows), K split across a block's warps. Both operands
// K-contiguous with 16-byte-aligned rows; taken over the tiles wherever min(M, N) is at most
// kSkinnyMaxSmall, the largest small dimension where it measured faster
// (docs/production.md, "The small-M path"), unless the tuned table measured
// the tiles faster on the problem (skinny_passed_over).
constexpr std::int64_t kSkinnyMaxSmall = 16;

// Above "prod": where its constraints hold, the dispatcher runs it.
constexpr int kSkinnyRank = kProdRank + 10;

constexpr KernelConstraints skinny_constraints() {
  KernelConstraints c = prod_constraints();
  c.a_layouts = bit(Layout::kRowMajor);
  c.b_layouts = bit(Layout::kColMajor);
  c.k_multiple = 8;
  c.lda_multiple = 8;
  c.ldb_multiple = 8;
  c.ab_alignment = 16;
  c.ab_stride_multiple = 8;
  c.max_small_dim = kSkinnyMaxSmall;
  return c;
}

// The tuned table, where it holds the problem, decides between the small-M
// path and the tiles (tcgemm-tune times both): the path yields where the
// entry is a tile choice "prod" will run, and only there (an entry naming
// the path, or a config no longer in the table, leaves it in place).
bool skinny_passed_over(const GemmArgs& args) {
  return tuned::lookup_current_device(args).has_value();
}

// "prod": the family with its own choice of config (what the dispatcher
// runs), then one entry per config table row, run only by name.
template <std::size_t... kConfig>
constexpr auto prod_kernels(std::index_sequence<kConfig...>) {
  return std::array{
      KernelInfo{"prod",
                 "production family, config and K split chosen per problem (the heuristic's "
                 "estimate of waves, tile work, bytes moved and split cost); every storage "
                 "order, alignment and batch",
                 prod_constraints(), &kernels::launch_prod_config<kernels::kAutoConfig>, kProdRank,
                 &kernels::workspace_prod_config<kernels::kAutoConfig>,
                 /*workspace_optional=*/true, &kernels::describe_prod_config<kernels::kAutoConfig>,
                 /*passed_over=*/nullptr, &kernels::limits_prod_config<kernels::kAutoConfig>},
      KernelInfo{"prod-invariant",
                 "production family, batch-invariant (GemmOptions::batch_invariant): no K split "
                 "and a config that does not depend on M, so each row of C has the same bits "
                 "whatever M is",
                 prod_constraints(), &kernels::launch_prod_config<kernels::kInvariantConfig>,
                 /*dispatch_rank=*/0, &kernels::workspace_prod_config<kernels::kInvariantConfig>,
                 /*workspace_optional=*/true,
                 &kernels::describe_prod_config<kernels::kInvariantConfig>,
                 /*passed_over=*/nullptr, &kernels::limits_prod_config<kernels::kInvariantConfig>},
      KernelInfo{
          "prod-skinny",
          "production family, small-M path: mma.sync fed by per-warp load streams, 16 rows of "
          "the large operand per warp, K split across a block's warps (A row-major, B "
          "column-major, min(M, N) <= 16)",
          skinny_constraints(), &kernels::launch_prod_skinny, kSkinnyRank, nullptr,
          /*workspace_optional=*/false, &kernels::describe_prod_skinny, &skinny_passed_over},
      KernelInfo{prod::kConfigs[kConfig].name, prod::kConfigs[kConfig].description,
                 prod_row_constraints(prod::kConfigs[kConfig].tile),
                 &kernels::launch_prod_config<static_cast<int>(kConfig)>,
                 /*dispatch_rank=*/0, &kernels::workspace_prod_config<static_cast<int>(kConfig)>,
                 /*workspace_optional=*/true,
                 &kernels::describe_prod_config<static_cast<int>(kConfig)>,
                 /*passed_over=*/nullptr,
                 &kernels::limits_prod_config<static_cast<int>(kConfig)>}...};
}

template <typename T, std::size_t kA, std::size_t kB>
constexpr std::array<T, kA + kB> concat(const std::array<T, kA>& a, const std::array<T, kB>& b) {
  std::array<T, kA + kB> out{};
  for (std::size_t i = 0; i < kA; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < kB; ++i) out[kA + i] = b[i];
  return out;
}

constexpr std::array kKernels =
    concat(kLadderKernels, prod_kernels(std::make_index_sequence<prod::kConfigCount>{}));

std::string set_names(std::uint32_t set, bool is_layout) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    if ((set & (1u << i)) == 0) continue;
    if (!out.empty()) out += "|";
    out += is_layout ? to_string(static_cast<Layout>(i)) : to_string(static_cast<DType>(i));
  }
  return out.empty() ? "none" : out;
}

std::string multiple_reason(const char* what, std::int64_t value, std::int64_t multiple) {
  return std::string(what) + "=" + std::to_string(value) + " is not a multiple of " +
         std::to_string(multiple);
}

}  // namespace

std::span<const KernelInfo> registry() { return kKernels; }

const KernelInfo* find_kernel(std::string_view name) {
  for (const KernelInfo& kernel : kKernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

std::string check_constraints(const KernelConstraints& c, const GemmArgs& args,
                              const DeviceCaps& device) {
  if (c.compute_capability != 0 && device.compute_capability != c.compute_capability) {
    return "needs compute capability " + std::to_string(c.compute_capability) + " (sm_" +
           std::to_string(c.compute_capability) + "a), device has " +
           std::to_string(device.compute_capability);
  }
  if ((c.input_dtypes & bit(args.a.dtype)) == 0) {
    return "input dtype " + std::string(to_string(args.a.dtype)) + " (supports " +
           set_names(c.input_dtypes, false) + ")";
  }
  if ((c.output_dtypes & bit(args.c.dtype)) == 0) {
    return "output dtype " + std::string(to_string(args.c.dtype)) + " (supports " +
           set_names(c.output_dtypes, false) + ")";
  }
  const std::pair<const char*, std::pair<Layout, std::uint32_t>> layouts[] = {
      {"A", {args.a.layout, c.a_layouts}},
      {"B", {args.b.layout, c.b_layouts}},
      {"C", {args.c.layout, c.c_layouts}},
  };
  for (const auto& [name, layout] : layouts) {
    if ((layout.second & bit(layout.first)) == 0) {
      return std::string(name) + " layout " + std::string(to_string(layout.first)) +
             "-major (supports " + set_names(layout.second, true) + "-major)";
    }
  }
  if (args.m % c.m_multiple != 0) return multiple_reason("M", args.m, c.m_multiple);
  if (args.n % c.n_multiple != 0) return multiple_reason("N", args.n, c.n_multiple);
  if (args.k % c.k_multiple != 0) return multiple_reason("K", args.k, c.k_multiple);
  if (args.a.ld % c.lda_multiple != 0) return multiple_reason("lda", args.a.ld, c.lda_multiple);
  if (args.b.ld % c.ldb_multiple != 0) return multiple_reason("ldb", args.b.ld, c.ldb_multiple);
  if (args.c.ld % c.ldc_multiple != 0) return multiple_reason("ldc", args.c.ld, c.ldc_multiple);
  const std::pair<const char*, std::pair<const void*, std::int64_t>> pointers[] = {
      {"A", {args.a.ptr, c.ab_alignment}},
      {"B", {args.b.ptr, c.ab_alignment}},
      {"C", {args.c.ptr, c.c_alignment}},
  };
  for (const auto& [name, pointer] : pointers) {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer.first);
    if (address % static_cast<std::uintptr_t>(pointer.second) != 0) {
      return std::string(name) + " pointer is not " + std::to_string(pointer.second) +
             "-byte aligned";
    }
  }
  if (args.m > c.max_dim || args.n > c.max_dim || args.k > c.max_dim) {
    return "M, N and K must be at most " + std::to_string(c.max_dim);
  }
  const std::pair<const char*, std::int64_t> lds[] = {
      {"lda", args.a.ld}, {"ldb", args.b.ld}, {"ldc", args.c.ld}};
  for (const auto& [name, ld] : lds) {
    if (ld > c.max_ld) {
      return std::string(name) + "=" + std::to_string(ld) + " exceeds " + std::to_string(c.max_ld);
    }
  }
  if (args.batch_count > c.max_batch) {
    return "batch_count=" + std::to_string(args.batch_count) + " (supports at most " +
           std::to_string(c.max_batch) + ")";
  }
  if (std::min(args.m, args.n) > c.max_small_dim) {
    return "min(M, N)=" + std::to_string(std::min(args.m, args.n)) + " exceeds " +
           std::to_string(c.max_small_dim);
  }
  if (args.batch_count > 1) {
    if (args.a.stride % c.ab_stride_multiple != 0) {
      return multiple_reason("stride_a", args.a.stride, c.ab_stride_multiple);
    }
    if (args.b.stride % c.ab_stride_multiple != 0) {
      return multiple_reason("stride_b", args.b.stride, c.ab_stride_multiple);
    }
  }
  return {};
}

std::string check_workspace(const KernelInfo& kernel, const GemmArgs& args) {
  if (kernel.workspace_bytes == nullptr || kernel.workspace_optional) return {};
  const std::size_t needed = kernel.workspace_bytes(args);
  if (needed == 0) return {};
  const std::string needs =
      "needs " + std::to_string(needed) + " bytes of workspace (tcgemm::workspace_size); ";
  if (args.workspace_bytes < needed) {
    return needs + "args.workspace_bytes is " + std::to_string(args.workspace_bytes);
  }
  if (args.workspace == nullptr) return needs + "args.workspace is null";
  return {};
}

std::string describe(const KernelConstraints& c) {
  std::string out = "in " + set_names(c.input_dtypes, false) + ", out " +
                    set_names(c.output_dtypes, false) + ", A " + set_names(c.a_layouts, true) +
                    " B " + set_names(c.b_layouts, true) + " C " + set_names(c.c_layouts, true);
  if (c.m_multiple > 1 || c.n_multiple > 1 || c.k_multiple > 1) {
    out += ", M%" + std::to_string(c.m_multiple) + " N%" + std::to_string(c.n_multiple) + " K%" +
           std::to_string(c.k_multiple);
  }
  if (c.lda_multiple > 1 || c.ldb_multiple > 1 || c.ldc_multiple > 1) {
    out += ", lda%" + std::to_string(c.lda_multiple) + " ldb%" + std::to_string(c.ldb_multiple) +
           " ldc%" + std::to_string(c.ldc_multiple);
  }
  if (c.ab_alignment > 1 || c.c_alignment > 1) {
    out += ", align A/B " + std::to_string(c.ab_alignment) + "B C " +
           std::to_string(c.c_alignment) + "B";
  }
  if (c.ab_stride_multiple > 1) {
    out += ", A/B batch strides %" + std::to_string(c.ab_stride_multiple);
  }
  if (c.max_small_dim != INT64_MAX) out += ", min(M, N) <= " + std::to_string(c.max_small_dim);
  if (c.max_dim != INT64_MAX) out += ", M, N, K <= " + std::to_string(c.max_dim);
  out += ", batch <= " + std::to_string(c.max_batch);
  if (c.compute_capability != 0) out += ", sm_" + std::to_string(c.compute_capability) + "a";
  return out;
}

}  // namespace tcgemm
