// How tcgemm's tools verify and time GEMM launches, as docs/benchmarking.md
// describes: L2-rotated operand sets, one shared GEMM workspace, checked runs
// against the reference GEMM on NaN-poisoned C, and interleaved CUDA-event
// timing. tcgemm-bench (runner.cpp) and tcgemm-tune (tools/tune) both build
// on these pieces, so the tuned table and the bench's ratios come from one
// method.
#pragma once

#include "batch.h"
#include "contenders.h"
#include "cuda_check.h"
#include "sampling.h"
#include "shapes.h"
#include "testing/testing.h"

#include <tcgemm/tcgemm.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tcgemm::bench {

struct Timing {
  double median_ms = 0.0;  // per launch
  double min_ms = 0.0;
  double max_ms = 0.0;
  int launches_per_sample = 1;
};

// One row of the report: one kernel (or cuBLAS) on one problem.
struct Result {
  Problem problem;
  Contender::Kind kind = Contender::Kind::kRegistry;
  std::string kernel;
  // "ok", "FAIL(rel_err)", "FAIL(nonfinite)", "FAIL(exact)", "FAIL(repeat)", "skipped: <why>"
  // or "error: <what>".
  std::string status;
  // What the row runs: tcgemm::describe()'s kernel and config
  // ("<kernel>: <config>"), or the cuBLAS call. Set before the row's first
  // launch, so an error row names what failed; empty for a skipped row.
  std::string config;
  bool failed = false;                   // verification failed or the run errored: exit status 1
  std::optional<BatchErrorStats> error;  // over every batch entry
  // Elements of C (every entry) the small-integer run left inexact; nullopt
  // where that run does not apply (Verifier).
  std::optional<std::int64_t> exact_mismatches;
  std::optional<Timing> timing;          // only kernels that verified are timed
  std::optional<double> cublas_ms;       // cuBLAS's median in the same run (interleaved unless
                                         // --sequential)
  std::optional<unsigned> sm_clock_mhz;  // read right after the problem's timing loop
                                         // (--sequential: after this kernel's own block;
                                         // unset for its rows not timed)
  int l2_sets = 1;                       // buffer sets rotated through while timing
};

// What one launch attempt came to.
struct Launch {
  enum class Kind { kOk, kSkipped, kError };
  Kind kind = Kind::kOk;
  std::string message;
};
// Enqueues one GEMM on args.stream; never synchronizes.
using Launcher = std::function<Launch(const GemmArgs&)>;

// What a tcgemm status comes to. gemm() refuses any device but sm_90, also
// for a kernel whose constraints name no architecture: that is a skip, not a
// kernel failure. `not_supported_skips`: kNotSupported is a skip too (the
// dispatcher has no kernel for the problem; a registry kernel's constraints
// were checked before it was launched, so there it is an error). Clears a
// pending CUDA error the failed launch left.
Launch launch_outcome(const Status& s, bool not_supported_skips);

// Waits for the stream and turns an asynchronous error (from a kernel just
// launched) into a DeviceFault instead of an abort, so the report survives.
void sync_or_throw(cudaStream_t stream, const std::string& what);

// A launch that returned an error may leave it pending as the runtime's last
// error (a cuBLAS workspace that did not fit, say). The row already reports
// it; clear it so the next sync_or_throw() does not take it for a fault of
// the next kernel. A sticky error survives this and is reported there.
void clear_pending_error();

// How a problem's operands are laid out in device memory: one C's bytes, the
// distance between consecutive buffer sets in each operand's pool, and how
// many sets timing rotates through. Each set holds every batch entry of each
// operand, after the problem's base offset. Pure arithmetic; check_size() has
// made sure none of it overflows.
struct SetPlan {
  // From each operand's base pointer to the end of its last entry, padding
  // included.
  std::size_t a_bytes = 0;
  std::size_t b_bytes = 0;
  std::size_t c_bytes = 0;
  std::size_t a_stride = 0;
  std::size_t b_stride = 0;
  std::size_t c_stride = 0;
  int sets = 1;
};

// Timed buffers rotate until together they exceed this many times the L2,
// so that no launch finds its operands there (tcgemm-bench's operand sets,
// tcgemm-host-overhead's copies).
inline constexpr std::int64_t kL2Multiple = 4;

// Enough sets that together they exceed kL2Multiple x the L2 (`l2_bytes`),
// or 1 when one set already does.
SetPlan plan_sets(const Problem& p, std::int64_t l2_bytes);

// The problem's operands plan.sets times over, one pool per operand. Set 0 is
// the verified one; timing walks through all sets so that no launch finds its
// inputs in L2 from an earlier one. Throws testing::DeviceAllocError when a
// pool does not fit.
class OperandSets {
 public:
  OperandSets(const Problem& p, const SetPlan& plan, std::uint64_t seed, cudaStream_t stream);

  // New values in every set: A from `seed`, B from seed + 1, C from seed + 2.
  // fill_normal streams of different seeds are unrelated, so every operand
  // of every set holds its own values.
  void fill(std::uint64_t seed, cudaStream_t stream);

  int sets() const { return plan_.sets; }
  std::size_t a_bytes() const { return plan_.a_bytes; }
  std::size_t b_bytes() const { return plan_.b_bytes; }
  std::size_t c_bytes() const { return plan_.c_bytes; }

  // The GEMM on set `set` (0 .. sets() - 1), no workspace attached.
  GemmArgs args(int set, cudaStream_t stream) const;

 private:
  Problem problem_;
  SetPlan plan_;
  testing::DeviceBuffer a_;
  testing::DeviceBuffer b_;
  testing::DeviceBuffer c_;
};

// The GEMM workspace of every tcgemm launch on one problem: one buffer of
// `bytes`, zeroed once. A kernel leaves it reusable (the API's contract), so
// the verified and the timed runs of every kernel share it. Throws
// testing::DeviceAllocError when it does not fit.
class GemmWorkspace {
 public:
  GemmWorkspace(std::size_t bytes, cudaStream_t stream);

  // `args` with the workspace in it.
  GemmArgs attach(GemmArgs args) const;

 private:
  testing::DeviceBuffer buffer_;
};

// The checked runs on set 0: the reference once, then for each launcher a run
// (two with the repeat check) from the same starting C, compared with the
// reference (and with each other). The verification toolkit checks one matrix
// at a time, so a batch is referenced and compared entry by entry, and every
// entry must pass (BatchErrorStats). Where the problem's alpha and beta allow
// it (testing::exact_on_small_integers), each launcher also runs once on operands of small
// integers, in buffers of their own laid out as set 0's (the same offsets
// from a 256-byte boundary, leading dimensions and strides, so the launch
// takes the same path): there every fp32 sum is exact, and every element of
// C must equal the reference rounded to C's dtype. The relative error alone
// would pass a wrong region of up to about 1e-4 of C (a whole 128 x 256
// tile of zeros in a 16384 x 28672 output).
class Verifier {
 public:
  // `args` (`sets`' set 0, workspace attached); `exact_seed`: the
  // small-integer operands' (the run's seed, so that each hazard run gets its
  // own).
  Verifier(const GemmArgs& args, const OperandSets& sets, cudaStream_t stream,
           std::uint64_t exact_seed);

  // What the checked runs came to.
  struct Checked {
    BatchErrorStats stats;    // the first run against the reference
    bool repeatable = false;  // the second run gave the same bits (all entries); true unchecked
    // The small-integer run: elements of C (every entry) that are not the
    // rounded exact reference, unwritten ones included; nullopt where the
    // exact check does not apply, or its buffers did not fit in memory.
    std::optional<std::int64_t> exact_mismatches;
  };

  // The runs: with `repeat`, a second one from the same starting C, compared
  // bitwise with the first; then the small-integer run where it applies.
  // nullopt, with result's status set, when the launcher skipped or failed.
  // Throws DeviceFault (result's status set) when the launch broke the
  // context.
  std::optional<Checked> check(const Launcher& launch, Result& result, bool repeat = true);

  // check(), then result's status: "ok", "FAIL(nonfinite)", "FAIL(rel_err)"
  // (the output dtype's tolerance), "FAIL(exact)" or, with `repeat`,
  // "FAIL(repeat)"; result.failed unless "ok". The cuBLAS row is the
  // baseline, timed as cuBLAS computes: its exact_mismatches are reported,
  // never a failure (cuBLAS's default math mode may reduce in the output's
  // precision: 8191 x 8192 x 8192 bf16 tn is not exact on cuBLAS 13.1).
  void verify(const Launcher& launch, Result& result, bool repeat = true);

 private:
  // One set of checked operands: the GEMM, its reference (M x N per entry,
  // column-major, ld = M) and, when beta != 0, the C it starts from.
  struct Operands {
    GemmArgs args;
    testing::DeviceBuffer ref;
    testing::DeviceBuffer c0;
    float* entry_ref(std::int64_t entry) const;
  };
  // The small-integer copy of set 0 and its own buffers.
  struct ExactOperands : Operands {
    testing::DeviceBuffer a;
    testing::DeviceBuffer b;
    testing::DeviceBuffer c;
  };

  // Allocates and fills exact_'s buffers, laid out as args' operands (`sets`'
  // sizes).
  void place_exact_operands(const GemmArgs& args, const OperandSets& sets, std::uint64_t seed);
  // C back to its checked-run start: NaN poison, or C0 when beta != 0.
  void reset_c(const Operands& operands);
  // One launch to completion on `operands`; false (with the status set) when
  // it did not run.
  bool run_once(const Launcher& launch, Result& result, const Operands& operands);

  std::size_t c_bytes_;
  cudaStream_t stream_;
  Operands set0_;
  std::optional<ExactOperands> exact_;
  testing::DeviceBuffer first_;
};

struct TimingOutcome {
  std::optional<Timing> timing;
  std::string error;  // a launch failed while timing
};

// Interleaved timing: `warmup` launches of each launcher (at least 1), which
// also size the samples (launches_per_sample: one way for all launchers),
// then `iters` iterations, each taking one sample of every launcher in turn,
// so clock drift and neighbours' load hit all alike. Each launch uses the
// next operand set. Events are read only after the whole loop is enqueued,
// so the host stays ahead of the GPU and no launch gap enters a sample. One
// outcome per launcher: the median, min and max per-launch time, or the
// error a launch returned.
std::vector<TimingOutcome> time_interleaved(std::span<const Launcher> launchers,
                                            const OperandSets& operands,
                                            const GemmWorkspace& workspace, int warmup, int iters,
                                            cudaStream_t stream);

}  // namespace tcgemm::bench
