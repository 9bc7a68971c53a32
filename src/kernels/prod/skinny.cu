// The production family's small-M path (skinny.h): mma.sync fed by per-warp
// load streams (a cp.async ring in shared memory for 8 rows of the small
// operand, batches in registers for 16), K split across the warps of a
// block, the partial sums added in shared memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/numeric.cuh"
#include "kernels/prod/launch.h"
#include "kernels/prod/skinny.h"
#include "ptx/cp_async.cuh"
#include "ptx/griddep.cuh"
#include "ptx/mma.cuh"

namespace tcgemm::kernels::prod {
namespace {

using tcgemm::prod::kSkinnyChunk;
using tcgemm::prod::kSkinnyMaxWarps;
using tcgemm::prod::kSkinnyRows;
using tcgemm::prod::SkinnyShape;

struct SkinnyParams {
  const void* large = nullptr;  // the large operand's rows, K-contiguous, ld_large apart
  const void* small = nullptr;  // the small operand's rows
  void* c = nullptr;
  std::int64_t large_rows = 0;
  std::int64_t small_rows = 0;
  std::int64_t k = 0;
  std::int64_t ld_large = 0;
  std::int64_t ld_small = 0;
  std::int64_t stride_large = 0;  // per batch entry, elements (0: one matrix for all)
  std::int64_t stride_small = 0;
  std::int64_t stride_c = 0;
  std::int64_t c_small = 0;  // elements between C's entries of consecutive small rows
  std::int64_t c_large = 0;  // ... and of consecutive large rows
  std::int64_t row_blocks = 0;
  std::int64_t passes = 0;
  std::int64_t blocks = 0;  // row_blocks x passes x batch entries
  int row_groups = 1;       // 16-row groups per block; warp w takes group w % row_groups
  std::int64_t k_per_warp = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Two ways to keep a warp's loads in flight, measured on the H200
// (docs/production.md, "The small-M path"):
//
// - With 8 rows of the small operand, a ring in shared memory per warp,
//   filled by cp.async: a lane copies its 16 bytes of each row it needs into
//   its own slot and reads back only what it copied, so the ring needs no
//   barrier, no swizzle (consecutive lanes, consecutive 16 bytes) and no
//   registers while the copies are in flight. kRingSteps - 1 steps (1 KiB of
//   the large operand each) stay in flight per warp without a gap between
//   batches: 6.5 KiB of shared memory a warp with its partial sums, 64
//   registers, two blocks of 16 warps per SM.
// - With 16 rows, batches of kBatchSteps load steps held in registers (about
//   116 a thread, one block of 16 warps per SM). A ring of the 16 rows
//   measured slower there (0.71-0.79 of this on 16 x 28672 x 8192 and
//   16 x 14336 x 4096).
constexpr int kRingSteps = 4;
constexpr int kRingSlots = 3;  // per step and lane: the large rows g and g + 8, the small row g
constexpr int kBatchSteps = 4;
template <int kCols>
constexpr int kBlocksPerSm = kCols == 8 ? 2 : 1;
constexpr int kMaxThreads = kSkinnyMaxWarps * 32;

// Shared memory a block of `warps` warps needs: its partial sums, then (8
// rows) the rings.
template <int kCols>
constexpr std::size_t partial_bytes(int warps) {
  return static_cast<std::size_t>(warps) * kSkinnyRows * kCols * sizeof(float);
}
template <int kCols>
constexpr std::size_t smem_bytes(int warps) {
  const std::size_t ring =
      kCols == 8 ? std::size_t{kRingSteps} * kRingSlots * 32 * sizeof(uint4) : 0;
  return partial_bytes<kCols>(warps) + static_cast<std::size_t>(warps) * ring;
}
// sm_90's shared memory per SM (228 KiB, 1 KiB of it reserved per block)
// holds the residency skinny.cpp counts (blocks of one warp: 30 of its 32,
// inside the shape's 10% margin).
constexpr std::size_t kSm90SmemPerSm = 228 * 1024;
static_assert(kBlocksPerSm<8> * (smem_bytes<8>(kSkinnyMaxWarps) + 1024) <= kSm90SmemPerSm);

// The mainloops: this lane's share of the warp's k slice [0, k_len) of the
// rows at w_lo / w_hi (large operand, rows g and g + 8) and x_lo / x_hi
// (small operand), each pointer already at the lane's first k (8 q). A
// lane's 8 elements of a 32-k step are all in the slice or all out (zeros
// in both operands). The lane's k (8q .. 8q+7) are the fragment's k pairs 2q
// and 2q+8 of one MMA, the same positions of the next 16 in the next.
template <typename TIn>
__device__ __forceinline__ void ring_mainloop(float (&acc)[4], uint4* ring, const TIn* w_lo,
                                              const TIn* w_hi, const TIn* x_lo, int q, int k_len) {
  const int steps = (k_len + kSkinnyChunk - 1) / kSkinnyChunk;
  // Step `step` into its slot, one commit group per step (empty past the
  // last, so that kRingSteps - 1 groups are always counted in flight). Out
  // of the slice the copy reads nothing and zero-fills; its address is the
  // row's first element of the slice (valid whatever q is).
  const auto issue = [&](int step) {
    if (step < steps) {
      const int kk = step * kSkinnyChunk;
      const bool in = kk + 8 * q < k_len;
      const int at = in ? kk : -8 * q;
      uint4* const slot = ring + (step % kRingSteps) * kRingSlots * 32;
      // The large operand is read once (L2 only); the small one by every
      // row group of the block (L1).
      ptx::cp_async_16_zfill<false>(slot, w_lo + at, in);
      ptx::cp_async_16_zfill<false>(slot + 32, w_hi + at, in);
      ptx::cp_async_16_zfill<true>(slot + 64, x_lo + at, in);
    }
    ptx::cp_async_commit();
  };
#pragma unroll
  for (int step = 0; step < kRingSteps - 1; ++step) issue(step);
  for (int step = 0; step < steps; ++step) {
    // This lane's copies of `step` have landed; the slot refilled next is
    // the one read a step ago (into registers the MMAs since consumed).
    ptx::cp_async_wait_group<kRingSteps - 2>();
    const uint4* const slot = ring + (step % kRingSteps) * kRingSlots * 32;
    const uint4 lo = slot[0];
    const uint4 hi = slot[32];
    const uint4 xl = slot[64];
    issue(step + kRingSteps - 1);
    ptx::mma_m16n8k16<TIn>(acc, lo.x, hi.x, lo.y, hi.y, xl.x, xl.y);
    ptx::mma_m16n8k16<TIn>(acc, lo.z, hi.z, lo.w, hi.w, xl.z, xl.w);
  }
}

// 16 rows of the small operand: the MMA's M, the large rows its N (acc[0]
// for rows g, acc[1] for rows g + 8).
template <typename TIn>
__device__ __forceinline__ void register_mainloop(float (&acc)[2][4], const TIn* w_lo,
                                                  const TIn* w_hi, const TIn* x_lo, const TIn* x_hi,
                                                  int q, int k_len) {
  constexpr int kStep = kSkinnyChunk * kBatchSteps;
  for (int k = 0; k < k_len; k += kStep) {
    uint4 lo[kBatchSteps];
    uint4 hi[kBatchSteps];
    uint4 xl[kBatchSteps];
    uint4 xh[kBatchSteps];
#pragma unroll
    for (int u = 0; u < kBatchSteps; ++u) {
      const int kk = k + u * kSkinnyChunk;
      const bool in = kk + 8 * q < k_len;
      lo[u] = in ? ptx::ld_global_stream_v4(w_lo + kk) : uint4{};
      hi[u] = in ? ptx::ld_global_stream_v4(w_hi + kk) : uint4{};
      xl[u] = in ? ptx::ld_global_shared_v4(x_lo + kk) : uint4{};
      xh[u] = in ? ptx::ld_global_shared_v4(x_hi + kk) : uint4{};
    }
#pragma unroll
    for (int u = 0; u < kBatchSteps; ++u) {
      ptx::mma_m16n8k16<TIn>(acc[0], xl[u].x, xh[u].x, xl[u].y, xh[u].y, lo[u].x, lo[u].y);
      ptx::mma_m16n8k16<TIn>(acc[0], xl[u].z, xh[u].z, xl[u].w, xh[u].w, lo[u].z, lo[u].w);
      ptx::mma_m16n8k16<TIn>(acc[1], xl[u].x, xh[u].x, xl[u].y, xh[u].y, hi[u].x, hi[u].y);
      ptx::mma_m16n8k16<TIn>(acc[1], xl[u].z, xh[u].z, xl[u].w, xh[u].w, hi[u].z, hi[u].w);
    }
  }
}

// kCols rows of the small operand per block: 8, the MMA's N (the large
// operand's 16 rows are its M), or 16, the MMA's M (the large operand's rows
// its N, 8 per MMA, two MMAs per warp).
template <typename TIn, typename TOut, int kCols>
__global__ void __launch_bounds__(kMaxThreads, kBlocksPerSm<kCols>)
    skinny_kernel(const __grid_constant__ SkinnyParams p) {
  static_assert(kCols == 8 || kCols == 16, "8 or 16 rows of the small operand");
  // Launched plainly (launch_instance below), so the wait returns at once;
  // the trigger lets a dependent after it (tiles, a repack) be scheduled
  // while these blocks run.
  ptx::griddep_wait();
  ptx::griddep_launch_dependents();
  extern __shared__ float4 smem_raw[];
  // [K slice][block row][kCols]: each warp's 16 x kCols partial sums, sized
  // for the launch's warps (launch_instance) so that small blocks stay many
  // per SM.
  float* const partial = reinterpret_cast<float*>(smem_raw);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warps = static_cast<int>(blockDim.x) / 32;
  const int g = lane / 4;
  const int q = lane % 4;
  // The warps of one K slice (consecutive warps) take the block's row groups,
  // reading the same rows of the small operand at about the same time: one
  // read of them from L2, the others from L1.
  const int rows_per_block = kSkinnyRows * p.row_groups;
  const int row_group = warp % p.row_groups;
  const int k_slice = warp / p.row_groups;
  const int k_slices = warps / p.row_groups;
  // This warp's slice of K, [k_begin, k_begin + k_len); k_len is a multiple
  // of 8 (K and k_per_warp are), at most k_per_warp (32-bit).
  const std::int64_t k_begin = k_slice * p.k_per_warp;
  const int k_len = static_cast<int>(max(std::int64_t{0}, min(p.k - k_begin, p.k_per_warp)));
  const auto* large_base = static_cast<const TIn*>(p.large);
  const auto* small_base = static_cast<const TIn*>(p.small);

  for (std::int64_t block = blockIdx.x; block < p.blocks; block += gridDim.x) {
    const std::int64_t row_block = block % p.row_blocks;
    const std::int64_t pass = block / p.row_blocks % p.passes;
    const std::int64_t batch = block / p.row_blocks / p.passes;
    const std::int64_t block_row0 = row_block * rows_per_block;
    const std::int64_t row0 = block_row0 + kSkinnyRows * row_group;
    const std::int64_t col0 = pass * kCols;
    // Rows past the edge read the last row instead: their products land in
    // rows or columns of D that are never stored.
    const TIn* const large = large_base + batch * p.stride_large;
    const TIn* const small = small_base + batch * p.stride_small;
    const std::int64_t k_lane = k_begin + 8 * q;
    const TIn* const w_lo = large + min(row0 + g, p.large_rows - 1) * p.ld_large + k_lane;
    const TIn* const w_hi = large + min(row0 + g + 8, p.large_rows - 1) * p.ld_large + k_lane;
    const TIn* const x_lo = small + min(col0 + g, p.small_rows - 1) * p.ld_small + k_lane;
    const TIn* const x_hi = small + min(col0 + g + 8, p.small_rows - 1) * p.ld_small + k_lane;

    // kCols == 8: one accumulator, D(large row, small row). kCols == 16:
    // one per 8 large rows, D(small row, large row).
    float acc[kCols / 8][4] = {};
    if constexpr (kCols == 8) {
      // This warp's ring: [step][slot][lane] of 16 bytes, after the
      // block's partial sums.
      uint4* const ring = reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem_raw) +
                                                   partial_bytes<kCols>(warps)) +
                          warp * kRingSteps * kRingSlots * 32 + lane;
      ring_mainloop<TIn>(acc[0], ring, w_lo, w_hi, x_lo, q, k_len);
    } else {
      register_mainloop<TIn>(acc, w_lo, w_hi, x_lo, x_hi, q, k_len);
    }

    // mine[large row][small row], this warp's 16 large rows.
    float* const mine = partial + (k_slice * rows_per_block + kSkinnyRows * row_group) * kCols;
    if constexpr (kCols == 8) {
      mine[g * kCols + 2 * q] = acc[0][0];
      mine[g * kCols + 2 * q + 1] = acc[0][1];
      mine[(g + 8) * kCols + 2 * q] = acc[0][2];
      mine[(g + 8) * kCols + 2 * q + 1] = acc[0][3];
    } else {
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const int row = 8 * t + 2 * q;
        mine[row * kCols + g] = acc[t][0];
        mine[(row + 1) * kCols + g] = acc[t][1];
        mine[row * kCols + g + 8] = acc[t][2];
        mine[(row + 1) * kCols + g + 8] = acc[t][3];
      }
    }
    __syncthreads();
    // Consecutive threads along C's contiguous direction.
    const bool rows_contiguous = p.c_large == 1;
    TOut* const c = static_cast<TOut*>(p.c) + batch * p.stride_c;
    for (int e = static_cast<int>(threadIdx.x); e < rows_per_block * kCols;
         e += static_cast<int>(blockDim.x)) {
      const int row = rows_contiguous ? e % rows_per_block : e / kCols;
      const int col = rows_contiguous ? e / rows_per_block : e % kCols;
      const std::int64_t r = block_row0 + row;
      const std::int64_t s = col0 + col;
      if (r >= p.large_rows || s >= p.small_rows) continue;
      // In K-slice order: the same bits however the warps were scheduled.
      float sum = 0.0f;
      for (int slice = 0; slice < k_slices; ++slice) {
        sum += partial[(slice * rows_per_block + row) * kCols + col];
      }
      TOut* const out = c + s * p.c_small + r * p.c_large;
      float v = p.alpha * sum;
      if (p.beta != 0.0f) v += p.beta * to_float(*out);
      *out = from_float<TOut>(v);
    }
    __syncthreads();
  }
}

template <typename TIn, typename TOut>
Status launch_instance(const SkinnyParams& p, const SkinnyShape& shape, std::int64_t max_blocks,
                       cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(std::min(shape.blocks, max_blocks)));
  const auto kernel =
      shape.cols == 8 ? &skinny_kernel<TIn, TOut, 8> : &skinny_kernel<TIn, TOut, 16>;
  const std::size_t smem =
      shape.cols == 8 ? smem_bytes<8>(shape.warps) : smem_bytes<16>(shape.warps);
  // A plain launch, not a dependent one: the grid is sized to leave every
  // block resident with 10% of the slots to spare (skinny_shape), and the
  // block scheduler spreads such a grid over every SM only when it launches
  // onto an idle device; started early, under the tail of the kernel
  // before, its blocks would land on the SMs that free first (our reading,
  // not profiled). Measured on the H200: the llm set's large-weight M = 1
  // and 16 shapes 2-3% slower as dependents, the 4096 x 4096 ones 10%
  // faster (bench/results/h200/2026-12-02-pdl-*.csv).
  return launch_kernel(kernel, "prod-skinny", grid, shape.warps * 32, smem, 1, stream, p);
}

// What the kernel's loads assume; the registry's constraints ask the same.
Status check_operands(const GemmArgs& args) {
  const auto reason = [&]() -> std::string {
    if (args.m < 1 || args.n < 1 || args.k < 1) return "M, N and K must be at least 1";
    if (args.a.layout != Layout::kRowMajor || args.b.layout != Layout::kColMajor) {
      return "A must be row-major and B column-major (K-contiguous)";
    }
    if (args.k % 8 != 0 || args.a.ld % 8 != 0 || args.b.ld % 8 != 0) {
      return "K, lda and ldb must be multiples of 8";
    }
    if (args.batch_count > 1 && (args.a.stride % 8 != 0 || args.b.stride % 8 != 0)) {
      return "the batch strides of A and B must be multiples of 8";
    }
    if (reinterpret_cast<std::uintptr_t>(args.a.ptr) % 16 != 0 ||
        reinterpret_cast<std::uintptr_t>(args.b.ptr) % 16 != 0) {
      return "A and B must be 16-byte aligned";
    }
    return {};
  }();
  if (reason.empty()) return Status::success();
  return {StatusCode::kInvalidValue, "prod-skinny: " + reason};
}

// The 8-row instance's shared-memory limit, for a block of every warp.
template <typename TIn, typename TOut>
Status allow_ring_smem() {
  return allow_dynamic_smem(reinterpret_cast<const void*>(&skinny_kernel<TIn, TOut, 8>),
                            smem_bytes<8>(kSkinnyMaxWarps), "prod-skinny");
}

// f(in, out), the dtype tags of args' A and C, for 16-bit inputs;
// kNotSupported for others.
template <typename F>
Status visit_instance(const GemmArgs& args, F&& f) {
  return visit_dtype(args.a.dtype, [&](auto in) {
    using TIn = typename decltype(in)::type;
    return visit_dtype(args.c.dtype, [&](auto out) {
      if constexpr (std::is_same_v<TIn, float>) {
        return Status{StatusCode::kNotSupported, "prod-skinny: inputs are not 16-bit"};
      } else {
        return f(in, out);
      }
    });
  });
}

}  // namespace

Status prepare_skinny(const GemmArgs& args, const SkinnyShape& shape) {
  if (shape.cols != 8) return Status::success();  // its partial sums stay under 48 KiB
  return visit_instance(args, [](auto in, auto out) {
    return allow_ring_smem<typename decltype(in)::type, typename decltype(out)::type>();
  });
}

Status launch_skinny(const GemmArgs& args, const SkinnyShape& shape, std::int64_t max_blocks) {
  if (Status s = check_operands(args); !s.ok()) return s;
  if (max_blocks < 1) return {StatusCode::kInvalidValue, "prod-skinny: max_blocks must be >= 1"};
  SkinnyParams p;
  const bool a_small = shape.small_is_a;
  const bool batched = args.batch_count > 1;
  p.large = a_small ? args.b.ptr : args.a.ptr;
  p.small = a_small ? args.a.ptr : args.b.ptr;
  p.c = args.c.ptr;
  p.large_rows = shape.large;
  p.small_rows = shape.small;
  p.k = args.k;
  p.ld_large = a_small ? args.b.ld : args.a.ld;
  p.ld_small = a_small ? args.a.ld : args.b.ld;
  p.stride_large = batched ? (a_small ? args.b.stride : args.a.stride) : 0;
  p.stride_small = batched ? (a_small ? args.a.stride : args.b.stride) : 0;
  p.stride_c = batched ? args.c.stride : 0;
  // C(m, n): column-major at m + n ldc, row-major at m ldc + n.
  const std::int64_t c_m = args.c.layout == Layout::kColMajor ? 1 : args.c.ld;
  const std::int64_t c_n = args.c.layout == Layout::kColMajor ? args.c.ld : 1;
  p.c_small = a_small ? c_m : c_n;
  p.c_large = a_small ? c_n : c_m;
  p.row_blocks = shape.row_blocks;
  p.passes = shape.passes;
  p.blocks = shape.blocks;
  p.row_groups = shape.row_groups;
  p.k_per_warp = shape.k_per_warp;
  p.alpha = args.alpha;
  p.beta = args.beta;
  return visit_instance(args, [&](auto in, auto out) {
    return launch_instance<typename decltype(in)::type, typename decltype(out)::type>(
        p, shape, max_blocks, args.stream);
  });
}

}  // namespace tcgemm::kernels::prod

namespace tcgemm::kernels {

Status launch_prod_skinny(const GemmArgs& args) {
  tcgemm::prod::DeviceModel model;
  if (Status s = prod::device_model(args, &model); !s.ok()) return s;
  const tcgemm::prod::SkinnyShape shape = tcgemm::prod::skinny_shape(args, model.sm_count);
  if (Status s = prod::prepare_skinny(args, shape); !s.ok()) return s;
  return prod::launch_skinny(args, shape, prod::skinny_max_blocks(model));
}

std::string describe_prod_skinny(const GemmArgs& args) {
  tcgemm::prod::DeviceModel model;
  if (!prod::device_model(args, &model).ok()) return "shape unknown (no device to size it by)";
  return tcgemm::prod::to_string(tcgemm::prod::skinny_shape(args, model.sm_count));
}

}  // namespace tcgemm::kernels
