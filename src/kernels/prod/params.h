// What the host hands a production kernel launch: the three tensor maps and
// the problem's scalars. Shared by the launch code (launch.cpp) and the
// kernel (kernel.cuh).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string_view>

#include <tcgemm/tcgemm.h>

#include "kernels/prod/config.h"

namespace tcgemm::kernels::prod {

using tcgemm::prod::Major;

// How an instance stores C, in the kernel's coordinates (after any C^T =
// B^T A^T swap): column-major or row-major (a flipped choice, problem.h's
// Choice::flipped: the orientation opposite to the one C's layout gives),
// each through TMA stores where TMA can address C, otherwise without them.
enum class CStore : std::uint8_t {
  kTma = 0,          // column-major, staged with stmatrix and stored by TMA
  kColMajor = 1,     // column-major without TMA (16-bit: staged, 16-byte chunks; fp32: registers)
  kRowMajor = 2,     // row-major, registers to global memory (masked)
  kTmaRowMajor = 3,  // row-major, staged with stmatrix and stored by TMA
};
inline constexpr int kCStores = 4;

// The kernel's scalar parameters (one __grid_constant__ struct).
struct Params {
  // C, batch entry 0: column-major, or row-major for a CStore::kRowMajor or
  // kTmaRowMajor instance (ldc is then the distance between rows).
  void* c = nullptr;
  std::int64_t ldc = 0;
  std::int64_t stride_c = 0;
  std::int64_t m = 0;
  std::int64_t n = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::int64_t tiles_m = 0;  // per batch entry
  std::int64_t tiles_n = 0;
  std::int64_t batch_count = 1;
  int k_tiles = 0;
  // The K split (problem.h's Choice). The kernel's work units are tile pairs
  // of a cluster (batch entries one after another, a Hilbert curve inside
  // each); the first whole_units of them run over all of K, each later one as
  // k_splits pieces of k_tiles_per_split k-tiles (the last piece may have
  // fewer), the pieces of a unit next to each other in the persistent
  // order. k_splits == 1: every unit whole.
  int k_splits = 1;
  int k_tiles_per_split = 0;
  std::int64_t whole_units = 0;
  // With k_splits > 1 and split_flags set, the kernel reduces in place
  // (split_unit_fixup in kernel.cuh): every piece but a tile's last split
  // writes its fp32 partial sums into its slot (one BM x BN tile per split
  // tile and split) and raises its flag; the last split waits for the
  // others' flags, lowers them again, adds their sums into its accumulators
  // and stores C (c, ldc, stride_c, alpha, beta are the caller's) through
  // the instance's epilogue. Without flags (every unit split), c is dense
  // fp32 slices, entry batch * k_splits + split, and the reduction is a
  // second kernel (split_k.h).
  float* partials = nullptr;
  unsigned* split_flags = nullptr;
  // The stream-K tail of an unsplit launch (problem.h's stream_k_tail;
  // sk_iters == 0: none): units [0, sk_dp_units) run whole, round-robin over
  // the clusters; the k-tiles of the rest, sk_iters in all, are spread
  // evenly over every cluster, worker w being cluster clusters - 1 - w
  // (sched::StreamKSchedule). A piece that ends a cluster's share of a unit
  // writes its partial sums to that CTA's slot of `partials` (one BM x BN
  // tile per CTA of the grid) and raises its flag in `split_flags`; the
  // cluster holding the unit's first k-tile adds them and stores C.
  std::int64_t sk_dp_units = 0;
  std::int64_t sk_iters = 0;
  // 1 when the operand has a matrix per batch entry (a 3-D tensor map, the
  // batch index its third coordinate); 0 when one matrix serves them all (a
  // 2-D map).
  std::int32_t a_batched = 0;
  std::int32_t b_batched = 0;
  std::int32_t c_batched = 0;
};

struct Launch {
  CUtensorMap map_a;
  CUtensorMap map_b;
  CUtensorMap map_c;
  Params params;
  cudaStream_t stream = nullptr;
  std::string_view name;
  unsigned ctas = 0;  // the persistent grid, set by Instance::prepare
  int sm_limit = 0;   // at most this many SMs' CTAs (GemmArgs::sm_count; 0: all)
  // A K split of the last wave only (problem.h's Choice::split_tail):
  // Instance::prepare sets params.whole_units to the whole waves the
  // resident clusters run.
  bool split_tail = false;
  // An unsplit launch with workspace for a stream-K tail (problem.h's
  // stream_k_tail): Instance::prepare sets params.sk_* when the resident
  // clusters leave a last round worth spreading.
  bool stream_k = false;
};

// One instantiated kernel (kernel.cuh, compiled in instances_*.cu): prepare
// binds the device context and sizes the grid before anything is enqueued,
// launch enqueues it. launch.cpp looks them up by (config, A and B
// major-ness, epilogue, input and output dtype).
struct Instance {
  Status (*prepare)(Launch& launch) = nullptr;
  Status (*launch)(const Launch& launch) = nullptr;
};

// The instances of one (input, output) dtype pair, by config, A and B
// major-ness and how C is stored.
using InstanceTable = std::array<Instance, tcgemm::prod::kConfigCount * 4 * kCStores>;

constexpr int instance_index(int config, Major a, Major b, CStore store) {
  return ((config * 2 + static_cast<int>(a)) * 2 + static_cast<int>(b)) * kCStores +
         static_cast<int>(store);
}

// The six tables, one per instances_<in>_<out>.cu.
const InstanceTable& instances_bf16_bf16();
const InstanceTable& instances_bf16_fp16();
const InstanceTable& instances_bf16_fp32();
const InstanceTable& instances_fp16_bf16();
const InstanceTable& instances_fp16_fp16();
const InstanceTable& instances_fp16_fp32();

}  // namespace tcgemm::kernels::prod
