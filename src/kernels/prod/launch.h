// The production family's launch entry points below the registry's (which
// take a config index, kernels.h): run one exact Choice, for tcgemm-tune and
// the tuned table, and read the device facts the heuristic weighs.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <string_view>

#include "kernels/prod/params.h"
#include "kernels/prod/problem.h"
#include "kernels/prod/repack.h"
#include "kernels/prod/split_k.h"

namespace tcgemm::kernels::prod {

// The current device as the heuristic sees it (cudaDeviceGetAttribute).
Status device_model(tcgemm::prod::DeviceModel* model);

// The current device as a call of `args` may use it: device_model with at
// most args.sm_count SMs (tcgemm::prod::budgeted).
Status device_model(const GemmArgs& args, tcgemm::prod::DeviceModel* model);

// The choice a registry entry of the family makes for `args`: `config` as
// kernels.h's launch_prod takes it (a table row, kAutoConfig or
// kInvariantConfig). Reads the device (and the tuned table).
Status resolve_choice(const GemmArgs& args, int config, tcgemm::prod::Choice* choice);

// The `config` argument of the family's registry entry named `kernel_name`
// ("prod", "prod-invariant", "prod-128x256", ...); false for other kernels.
bool config_of_kernel(std::string_view kernel_name, int* config);

// Runs `args` with exactly `choice` (its config and K split), as gemm would
// otherwise; validate(args) must have passed and M, N, K > 0. A choice whose
// config does not fit the device fails at the launch (kCudaError).
// allow_stream_k: as for prepare.
Status launch_choice(const GemmArgs& args, tcgemm::prod::Choice choice,
                     bool allow_stream_k = true);

// The sizes past what a launch of `choice` indexes (kNotSupported naming
// the limit, else success): tiles per batch entry past the tile order's
// range, aligned copies of A and B over 2^62 bytes, a copied operand's
// batch stride past 2^40 bytes (TMA's limit), batch_count x K splits past
// the 32-bit batch coordinate. prepare() refuses with it, and
// workspace_choice() is 0 where it fails.
Status size_limits(const tcgemm::prod::Problem& problem, tcgemm::prod::Choice choice);

// The workspace launch_choice(args, choice) uses (kernels.h's workspace_prod).
std::size_t workspace_choice(const GemmArgs& args, tcgemm::prod::Choice choice,
                             bool allow_stream_k = true);

// A launch with everything but its addresses worked out: the instance (its
// shared-memory limit set, its grid sized), the tensor maps encoded, the
// repack and split-K jobs sized. What a GemmPlan holds; enqueue() gives it
// the addresses of one run. Canonical operand 0 is the caller's A, 1 its B
// (the other way round when `swapped`).
struct PreparedLaunch {
  Launch launch{};
  const Instance* instance = nullptr;
  bool swapped = false;
  bool tma_operand[2] = {true, true};  // streamed by TMA from the caller's memory (else repacked)
  // A repacked operand's copy, addresses set per run; empty (copies nothing)
  // for an operand TMA streams from the caller's memory.
  RepackJob jobs[2];
  std::size_t repack_offset[2] = {0, 0};
  bool tma_c = false;           // C stored by TMA (its map's address set per run)
  bool split = false;           // K split: partial sums, then the reduction
  bool split_in_place = false;  // a tile's last split sums it (else a second kernel)
  bool stream_k = false;        // the last round spread stream-K (Params::sk_*)
  std::size_t partials_offset = 0;
  SplitKReduction reduction;
  // Scratch bytes the launch uses past kReservedWorkspaceBytes (0: none).
  std::size_t scratch_bytes = 0;
};

// False when the environment variable TCGEMM_DISABLE_STREAM_K is set (read
// once): unsplit launches then keep a partial last round data-parallel
// (problem.h's stream_k_tail), for A/B timing.
bool stream_k_enabled();

// Everything that can fail before a launch (a clear status, nothing
// enqueued): validate(args) must have passed, M, N, K > 0. Pointers in args
// matter only for the alignment they have (problem.h's canonicalize).
// With allow_stream_k false a partial last round stays data-parallel (no
// stream-K scratch): the batch-invariant mode, whose tiles must all be
// summed the same way whatever M is.
Status prepare(const GemmArgs& args, tcgemm::prod::Choice choice, PreparedLaunch* prepared,
               bool allow_stream_k = true);

// The caller's pointers and scalars for one run of a prepared launch.
struct RunOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Enqueues the prepared launch on `stream`: the repacks, the GEMM and any
// split-K reduction. `workspace` holds kReservedWorkspaceBytes +
// prepared.scratch_bytes (nullptr when that is 0), its split-K flags zero;
// no allocation, synchronization or device query, so a CUDA graph can
// capture it. The operands must have the alignment the prepared ones had.
Status enqueue(const PreparedLaunch& prepared, const RunOperands& run, void* workspace,
               cudaStream_t stream);

}  // namespace tcgemm::kernels::prod
