// Pieces every Hopper ladder step shares, written once: the TN operand tensor
// maps, the register-to-global epilogue for wgmma accumulators, the
// dynamic-shared-memory setup, and the dtype fan-out of a launcher.
//
// Every step reads A row-major (M x K) and B column-major (K x N), i.e. both
// K-major, so one TMA view serves both: `K` contiguous elements per line, one
// line per row of A or column of B.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/numeric.cuh"
#include "sched/tile_order.h"
#include "tensor_map.h"

namespace tcgemm::kernels::hopper {

using kernels::allow_dynamic_smem;
using kernels::launch_kernel;
using kernels::max_active_clusters;

// Where and how the epilogue writes: C column-major M x N with leading
// dimension ldc, C = alpha * acc + beta * C (C read only when beta != 0).
struct EpilogueParams {
  void* c;
  std::int64_t ldc;
  std::int64_t m;
  std::int64_t n;
  float alpha;
  float beta;
};

inline EpilogueParams epilogue_params(const GemmArgs& args) {
  return {args.c.ptr, args.c.ld, args.m, args.n, args.alpha, args.beta};
}

// Writes one warpgroup's 64 x kN block of wgmma accumulators whose top-left
// element is C(row0, col0), masked at the M and N edges. Fragment layout as in
// ptx/wgmma.cuh: chunk j holds rows r, r + 8 and columns c, c + 1.
// kTuned (ladder step 9) visits each column's two rows back to back, so
// consecutive stores land 16 bytes apart in the same column of a column-major
// C, and stores write-through (st.global.wt, __stwt) to leave L2 to A and B.
template <typename TOut, int kN, bool kTuned = false>
__device__ __forceinline__ void store_accumulators(const float (&acc)[kN / 2],
                                                   const EpilogueParams& p, std::int64_t row0,
                                                   std::int64_t col0) {
  const int lane = threadIdx.x % 32;
  const int warp_in_group = (threadIdx.x % 128) / 32;
  const std::int64_t row = row0 + warp_in_group * 16 + lane / 4;
  TOut* c = static_cast<TOut*>(p.c);
  // Fragment element v of a chunk: row offset 8 * (v / 2), column offset v % 2.
  constexpr int kPlainOrder[4] = {0, 1, 2, 3};
  constexpr int kColumnOrder[4] = {0, 2, 1, 3};
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int v = kTuned ? kColumnOrder[i] : kPlainOrder[i];
      const std::int64_t r = row + (v / 2) * 8;
      const std::int64_t col = col0 + j * 8 + 2 * (lane % 4) + v % 2;
      if (r < p.m && col < p.n) {
        TOut* out = c + col * p.ldc + r;
        float value = p.alpha * acc[4 * j + v];
        if (p.beta != 0.0f) value += p.beta * to_float(*out);
        if constexpr (kTuned) {
          __stwt(out, from_float<TOut>(value));
        } else {
          *out = from_float<TOut>(value);
        }
      }
    }
  }
}

// Whether a warp-specialized CTA of one producer warpgroup and `consumers`
// consumer warpgroups (launched with __launch_bounds__(threads, 1)) can run
// setmaxnreg.dec to producer_regs and setmaxnreg.inc to consumer_regs.
// setmaxnreg moves registers between a CTA's warpgroups and cannot add any:
// the CTA holds what it was launched with, 65536 / threads per thread rounded
// down to the allocation granule of 8 (168 for 384 threads), and an .inc
// waits until .dec calls have freed what it asks for. Asking for more hangs
// the kernel (docs/hopper-notes.md: 32 / 240 on 384 x 168 did, on the H200).
constexpr bool setmaxnreg_fits(int consumers, int producer_regs, int consumer_regs) {
  constexpr int kWarpgroup = 128;
  const int threads = (1 + consumers) * kWarpgroup;
  const int launch_regs = 65536 / threads / 8 * 8;
  return kWarpgroup * (producer_regs + consumers * consumer_regs) <= threads * launch_regs;
}

// Position in a ring of kStages shared-memory slots, carried across k-tiles
// and, in persistent kernels, across output tiles: the slot index and the
// parity of the current pass around the ring (the mbarrier phase to wait on).
template <int kStages>
struct RingPosition {
  int slot = 0;
  std::uint32_t phase = 0;

  __device__ __forceinline__ void advance() {
    if (++slot == kStages) {
      slot = 0;
      phase ^= 1;
    }
  }
};

// Encodes the A and B tensor maps of a TN problem: boxes of box_k x box_m
// (A) and box_k x box_n (B) elements, 128-byte swizzle.
Status make_tn_tensor_maps(const GemmArgs& args, std::uint32_t box_k, std::uint32_t box_m,
                           std::uint32_t box_n, CUtensorMap* map_a, CUtensorMap* map_b);

// How many CTAs a ladder step launches: one per output tile, or one per SM
// looping over tiles (persistent).
enum class Grid { kOnePerTile, kOnePerSm };

// The launch steps 2-7 share. Their kernels take (map_a, map_b, epilogue,
// tiles_m, tiles_n, k_tiles) for Cfg's BM x BN x BK tile and Cfg::kThreads
// threads. Raises the kernel's shared-memory limit (which also binds the
// context cuTensorMapEncodeTiled needs), encodes A's and B's maps with boxes
// BK x BM and BK x BN, and launches the grid `grid` asks for.
template <typename Cfg, typename... Params>
Status launch_tn_step(void (*kernel)(Params...), std::string_view name, const GemmArgs& args,
                      std::size_t smem_bytes, Grid grid) {
  const std::int64_t tiles_m = sched::ceil_div(args.m, Cfg::BM);
  const std::int64_t tiles_n = sched::ceil_div(args.n, Cfg::BN);
  Status status = allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem_bytes, name);
  if (!status.ok()) return status;
  std::int64_t ctas = tiles_m * tiles_n;
  if (grid == Grid::kOnePerSm) {
    int sms = 0;
    if (status = multiprocessor_count(&sms); !status.ok()) return status;
    ctas = std::min<std::int64_t>(sms, ctas);
  }
  constexpr std::int64_t kMaxGridX = (std::int64_t{1} << 31) - 1;
  if (ctas > kMaxGridX) {
    return {StatusCode::kNotSupported,
            std::string(name) + ": more output tiles than one grid holds"};
  }
  CUtensorMap map_a;
  CUtensorMap map_b;
  status = make_tn_tensor_maps(args, Cfg::BK, Cfg::BM, Cfg::BN, &map_a, &map_b);
  if (!status.ok()) return status;
  return launch_kernel(kernel, name, dim3(static_cast<unsigned>(ctas)), Cfg::kThreads, smem_bytes,
                       /*cluster_x=*/1, args.stream, map_a, map_b, epilogue_params(args), tiles_m,
                       tiles_n, static_cast<int>(sched::ceil_div(args.k, Cfg::BK)));
}

// Calls launch.template operator()<TIn, TOut>() for the problem's input and
// output dtypes (inputs are bf16 or fp16: the registry constraints ensure it).
template <typename Launch>
Status visit_tn_types(const GemmArgs& args, Launch&& launch) {
  return visit_dtype(args.a.dtype, [&](auto in_tag) {
    return visit_dtype(args.c.dtype, [&](auto out_tag) {
      using TIn = typename decltype(in_tag)::type;
      using TOut = typename decltype(out_tag)::type;
      if constexpr (std::is_same_v<TIn, float>) {
        return Status{StatusCode::kNotSupported, "Hopper kernels take bf16 or fp16 inputs"};
      } else {
        return launch.template operator()<TIn, TOut>();
      }
    });
  });
}

}  // namespace tcgemm::kernels::hopper
