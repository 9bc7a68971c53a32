#include "runner.h"

#include <tcgemm/registry.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <new>
#include <thread>
#include <utility>

namespace tcgemm::bench {
namespace {

using testing::DeviceBuffer;

// cudaMalloc returns 256-byte aligned memory; carving every buffer set at that
// alignment gives each set the alignment of a fresh allocation (TMA needs 16).
constexpr std::size_t kSetAlignment = 256;
// Rotate buffer sets until together they exceed 4x the L2.
constexpr std::int64_t kL2Multiple = 4;
// Launches under ~50 us are batched between one event pair, here until a
// sample lasts about 0.5 ms.
constexpr double kShortLaunchMs = 0.05;
constexpr double kMinSampleMs = 0.5;
// Bounds the batch when the estimate is near the events' ~0.5 us resolution.
constexpr int kMaxLaunchesPerSample = 10000;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

class CudaEvent {
 public:
  CudaEvent() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~CudaEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

struct EventPair {
  CudaEvent start;
  CudaEvent stop;

  double elapsed_ms() const {
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    return ms;
  }
};

// Waits for the stream and turns an asynchronous error (from a kernel just
// launched) into a DeviceFault instead of an abort, so the report survives.
void sync_or_throw(cudaStream_t stream, const std::string& what) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaGetLastError();
  check_cuda(err, what);
}

// A launch that returned an error may leave it pending as the runtime's last
// error (a cuBLAS workspace that did not fit, say). The row already reports
// it; clear it so the next sync_or_throw() does not take it for a fault of
// the next kernel. A sticky error survives this and is reported there.
void clear_pending_error() { static_cast<void>(cudaGetLastError()); }

// What one launch attempt came to.
struct Launch {
  enum class Kind { kOk, kSkipped, kError };
  Kind kind = Kind::kOk;
  std::string message;
};
using Launcher = std::function<Launch(const GemmArgs&)>;

// What a tcgemm::gemm status comes to. gemm() refuses any device but sm_90,
// also for a kernel whose constraints name no architecture: that is a skip,
// not a kernel failure. `not_supported_skips`: kNotSupported is a skip too
// (the dispatcher has no kernel for the problem; a registry kernel's
// constraints were checked before it was launched, so there it is an error).
Launch launch_outcome(const Status& s, bool not_supported_skips) {
  if (s.ok()) return {};
  clear_pending_error();
  const std::string message = std::string(to_string(s.code)) + ": " + s.message;
  if (s.code == StatusCode::kArchMismatch) return {Launch::Kind::kSkipped, s.message};
  if (s.code == StatusCode::kNotSupported && not_supported_skips) {
    return {Launch::Kind::kSkipped, message};
  }
  return {Launch::Kind::kError, message};
}

Launcher registry_launcher(const KernelInfo& kernel) {
  return [&kernel](const GemmArgs& args) {
    return launch_outcome(gemm(args, GemmOptions{.kernel = kernel.name}),
                          /*not_supported_skips=*/false);
  };
}

Launcher dispatcher_launcher() {
  return
      [](const GemmArgs& args) { return launch_outcome(gemm(args), /*not_supported_skips=*/true); };
}

// The cuBLAS call testing::cublas_gemm makes for `args`.
std::string_view cublas_call(const GemmArgs& args) {
  return args.batch_count == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx";
}

Launcher cublas_launcher(cublasHandle_t handle) {
  return [handle](const GemmArgs& args) -> Launch {
    const cublasStatus_t s = testing::cublas_gemm(handle, args);
    if (s == CUBLAS_STATUS_SUCCESS) return {};
    clear_pending_error();
    std::string message = std::string(cublas_call(args)) + ": " + cublasGetStatusString(s);
    // cuBLAS lacks some dtype pairs the API has (bf16 inputs to fp16 output).
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return {Launch::Kind::kSkipped, std::move(message)};
    return {Launch::Kind::kError, std::move(message)};
  };
}

// How a problem's operands are laid out in device memory: one C's bytes, the
// distance between consecutive buffer sets in each operand's pool, and how
// many sets timing rotates through. Each set holds every batch entry of each
// operand, after the problem's base offset. Pure arithmetic; check_size() has
// made sure none of it overflows.
struct SetPlan {
  std::size_t c_bytes = 0;  // from C's base pointer to the end of its last entry, padding included
  std::size_t a_stride = 0;
  std::size_t b_stride = 0;
  std::size_t c_stride = 0;
  int sets = 1;
};

SetPlan plan_sets(const Problem& p, std::int64_t l2_bytes) {
  const auto bytes = [&p](Operand operand) {
    return static_cast<std::size_t>(*operand_bytes(p, operand));
  };
  SetPlan plan;
  plan.c_bytes = bytes(Operand::kC) - static_cast<std::size_t>(p.offset) * size_of(p.output);
  plan.a_stride = round_up(bytes(Operand::kA), kSetAlignment);
  plan.b_stride = round_up(bytes(Operand::kB), kSetAlignment);
  plan.c_stride = round_up(bytes(Operand::kC), kSetAlignment);
  // Sizes are >= 1 (the CLI insists), so every stride is >= kSetAlignment.
  const std::size_t set_bytes = plan.a_stride + plan.b_stride + plan.c_stride;
  const auto rotate_bytes = static_cast<std::size_t>(kL2Multiple * l2_bytes);
  plan.sets = set_bytes > rotate_bytes ? 1 : static_cast<int>(rotate_bytes / set_bytes + 1);
  return plan;
}

// The problem's operands plan.sets times over, one pool per operand. Set 0 is
// the verified one; timing walks through all sets so that no launch finds its
// inputs in L2 from an earlier one. Throws testing::DeviceAllocError when a
// pool does not fit.
class OperandSets {
 public:
  OperandSets(const Problem& p, const SetPlan& plan, std::uint64_t seed, cudaStream_t stream)
      : problem_(p), plan_(plan) {
    const auto sets = static_cast<std::size_t>(plan.sets);
    a_ = DeviceBuffer(plan.a_stride * sets);
    b_ = DeviceBuffer(plan.b_stride * sets);
    c_ = DeviceBuffer(plan.c_stride * sets);
    fill(seed, stream);
  }

  // New values in every set: A from `seed`, B from seed + 1, C from seed + 2.
  // fill_normal streams of different seeds are unrelated, so every operand
  // of every set holds its own values.
  void fill(std::uint64_t seed, cudaStream_t stream) {
    testing::fill_normal(a_.get(), problem_.input, elements(a_, problem_.input), seed, stream);
    testing::fill_normal(b_.get(), problem_.input, elements(b_, problem_.input), seed + 1, stream);
    testing::fill_normal(c_.get(), problem_.output, elements(c_, problem_.output), seed + 2,
                         stream);
  }

  int sets() const { return plan_.sets; }
  std::size_t c_bytes() const { return plan_.c_bytes; }

  GemmArgs args(int set, cudaStream_t stream) const {
    const auto at = [set](const DeviceBuffer& pool, std::size_t stride) {
      return static_cast<std::byte*>(pool.get()) + static_cast<std::size_t>(set) * stride;
    };
    return make_args(problem_, at(a_, plan_.a_stride), at(b_, plan_.b_stride),
                     at(c_, plan_.c_stride), stream);
  }

 private:
  static std::int64_t elements(const DeviceBuffer& pool, DType dtype) {
    return static_cast<std::int64_t>(pool.bytes() / size_of(dtype));
  }

  Problem problem_;
  SetPlan plan_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer c_;
};

// A problem's contenders made ready to run: a launcher for each, except a
// registry kernel whose constraints refuse the problem (its reason instead),
// and the GEMM workspace (GemmArgs::workspace) they share: the largest that
// any of them asks for this problem.
struct Lineup {
  std::vector<std::optional<Launcher>> launchers;  // one per contender
  std::vector<std::string> skip_reasons;           // one per contender; "" where it launches
  std::size_t workspace_bytes = 0;
};

Lineup line_up(std::span<const Contender> contenders, const GemmArgs& args, const DeviceCaps& caps,
               cublasHandle_t cublas) {
  Lineup lineup;
  const auto need_workspace = [&lineup](std::size_t bytes) {
    lineup.workspace_bytes = std::max(lineup.workspace_bytes, bytes);
  };
  for (const Contender& contender : contenders) {
    std::optional<Launcher>& launcher = lineup.launchers.emplace_back();
    std::string& reason = lineup.skip_reasons.emplace_back();
    switch (contender.kind) {
      case Contender::Kind::kRegistry: {
        const KernelInfo& kernel = *contender.kernel;
        reason = check_constraints(kernel.constraints, args, caps);
        if (!reason.empty()) break;
        launcher = registry_launcher(kernel);
        // A workspace function assumes check_constraints passed.
        if (kernel.workspace_bytes != nullptr) need_workspace(kernel.workspace_bytes(args));
        break;
      }
      case Contender::Kind::kDispatcher:
        launcher = dispatcher_launcher();
        need_workspace(workspace_size(args));  // what the user is told to give gemm()
        break;
      case Contender::Kind::kCublas:
        launcher = cublas_launcher(cublas);
        break;
    }
  }
  return lineup;
}

// Result::config: what `contender` runs on `args` (workspace attached, so the
// dispatcher is asked about the very call it gets).
std::string describe_contender(const Contender& contender, const GemmArgs& args) {
  if (contender.kind == Contender::Kind::kCublas) return std::string(cublas_call(args));
  const Description d = contender.kind == Contender::Kind::kDispatcher
                            ? describe(args)
                            : describe(args, GemmOptions{.kernel = contender.name});
  if (!d.status.ok()) return {};
  if (d.config.empty()) return d.kernel;
  if (d.kernel.empty()) return d.config;  // a BLAS quick return: no GEMM kernel ran
  return d.kernel + ": " + d.config;
}

// The GEMM workspace of every tcgemm launch on one problem: one buffer of
// Lineup::workspace_bytes, zeroed once. A kernel leaves it reusable (the
// API's contract), so the verified and the timed runs of every kernel share
// it. Throws testing::DeviceAllocError when it does not fit.
class GemmWorkspace {
 public:
  GemmWorkspace(std::size_t bytes, cudaStream_t stream) {
    buffer_ = DeviceBuffer(bytes);
    if (bytes > 0) {
      check_cuda(cudaMemsetAsync(buffer_.get(), 0, bytes, stream),
                 "cudaMemsetAsync (zero the GEMM workspace)");
    }
  }

  // `args` with the workspace in it.
  GemmArgs attach(GemmArgs args) const {
    args.workspace = buffer_.get();
    args.workspace_bytes = buffer_.bytes();
    return args;
  }

 private:
  DeviceBuffer buffer_;
};

// The checked runs on set 0: reference once, then for each launcher two runs
// from the same starting C, compared with the reference and with each other.
// The verification toolkit checks one matrix at a time, so a batch is
// referenced and compared entry by entry, and every entry must pass
// (BatchErrorStats).
class Verifier {
 public:
  Verifier(const GemmArgs& args, std::size_t c_bytes, cudaStream_t stream)
      : args_(args),
        c_bytes_(c_bytes),
        stream_(stream),
        ref_(sizeof(float) * static_cast<std::size_t>(args.m * args.n * args.batch_count)),
        first_(c_bytes) {
    // With beta != 0 the reference reads set 0's random C: keep that C0 to
    // restore before every checked run.
    if (args.beta != 0.0f) {
      c0_ = DeviceBuffer(c_bytes);
      check_cuda(cudaMemcpyAsync(c0_.get(), args.c.ptr, c_bytes, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync (keep C0)");
    }
    for (std::int64_t entry = 0; entry < args.batch_count; ++entry) {
      testing::reference_gemm(batch_entry(args, entry), entry_ref(entry), stream);
    }
    sync_or_throw(stream, "reference GEMM");
  }

  // What two runs from the same starting C came to.
  struct Checked {
    BatchErrorStats stats;    // the first run against the reference
    bool repeatable = false;  // the second run gave the same bits (all entries)
  };

  // The two runs; nullopt, with result's status set, when the launcher
  // skipped or failed.
  std::optional<Checked> check(const Launcher& launch, Result& result) {
    if (!run_once(launch, result)) return std::nullopt;
    Checked checked;
    for (std::int64_t entry = 0; entry < args_.batch_count; ++entry) {
      add_entry(checked.stats,
                testing::compare(batch_entry(args_, entry), entry_ref(entry), stream_), entry);
    }
    check_cuda(
        cudaMemcpyAsync(first_.get(), args_.c.ptr, c_bytes_, cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpyAsync (keep the first run's C)");
    if (!run_once(launch, result)) return std::nullopt;
    checked.repeatable = testing::bitwise_equal(args_.c.ptr, first_.get(), c_bytes_);
    return checked;
  }

  void verify(const Launcher& launch, Result& result) {
    const std::optional<Checked> checked = check(launch, result);
    if (!checked) return;
    const BatchErrorStats& stats = checked->stats;
    const bool repeatable = checked->repeatable;
    result.error = stats;

    if (stats.nonfinite > 0) {
      result.status = "FAIL(nonfinite)";
    } else if (!(stats.rel_fro < testing::tolerance_for(args_.c.dtype))) {
      result.status = "FAIL(rel_err)";
    } else if (!repeatable) {
      result.status = "FAIL(repeat)";
    } else {
      result.status = "ok";
    }
    result.failed = result.status != "ok";
  }

 private:
  // Entry `entry` of the reference: M x N, column-major, ld = M.
  float* entry_ref(std::int64_t entry) const {
    return static_cast<float*>(ref_.get()) + entry * args_.m * args_.n;
  }

  // C back to its checked-run start: NaN poison, or C0 when beta != 0.
  void reset_c() {
    if (c0_.get() != nullptr) {
      check_cuda(
          cudaMemcpyAsync(args_.c.ptr, c0_.get(), c_bytes_, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (restore C0)");
    } else {
      testing::fill_poison(args_.c.ptr, args_.c.dtype,
                           static_cast<std::int64_t>(c_bytes_ / size_of(args_.c.dtype)), stream_);
    }
  }

  // One launch to completion; false (with the status set) when it did not run.
  bool run_once(const Launcher& launch, Result& result) {
    reset_c();
    const Launch outcome = launch(args_);
    if (outcome.kind != Launch::Kind::kOk) {
      const bool skipped = outcome.kind == Launch::Kind::kSkipped;
      result.status = (skipped ? "skipped: " : "error: ") + outcome.message;
      result.failed = !skipped;
      return false;
    }
    try {
      sync_or_throw(stream_, result.kernel);
    } catch (const DeviceFault& fault) {
      result.status = std::string("error: ") + fault.what();
      result.failed = true;
      throw;
    }
    return true;
  }

  GemmArgs args_;
  std::size_t c_bytes_;
  cudaStream_t stream_;
  DeviceBuffer ref_;
  DeviceBuffer first_;
  DeviceBuffer c0_;
};

struct TimingOutcome {
  std::optional<Timing> timing;
  std::string error;  // a launch failed while timing
};

Timing summarize(std::vector<double> ms, int launches_per_sample) {
  std::sort(ms.begin(), ms.end());
  const std::size_t mid = ms.size() / 2;
  const double median = ms.size() % 2 == 1 ? ms[mid] : 0.5 * (ms[mid - 1] + ms[mid]);
  return {median, ms.front(), ms.back(), launches_per_sample};
}

// Interleaved timing: each iteration takes one sample of every launcher in
// turn (ours, ..., cuBLAS), so clock drift and neighbours' load hit all alike.
// Events are read only after the whole loop is enqueued, so the host stays
// ahead of the GPU and no launch gap enters a sample.
std::vector<TimingOutcome> time_interleaved(const std::vector<Launcher>& launchers,
                                            const OperandSets& operands,
                                            const GemmWorkspace& workspace,
                                            const RunOptions& options, cudaStream_t stream) {
  std::vector<TimingOutcome> out(launchers.size());
  int next_set = 0;
  const auto enqueue = [&](std::size_t i, int launches, const EventPair& events) {
    check_cuda(cudaEventRecord(events.start.get(), stream), "cudaEventRecord");
    for (int r = 0; r < launches; ++r) {
      const Launch outcome = launchers[i](workspace.attach(operands.args(next_set, stream)));
      next_set = (next_set + 1) % operands.sets();
      if (outcome.kind != Launch::Kind::kOk) {
        out[i].error = outcome.message;
        return false;
      }
    }
    check_cuda(cudaEventRecord(events.stop.get(), stream), "cudaEventRecord");
    return true;
  };

  // Warm-up, which also measures each launch roughly to size its samples.
  std::vector<int> per_sample(launchers.size(), 1);
  for (std::size_t i = 0; i < launchers.size(); ++i) {
    const EventPair warmup;
    if (!enqueue(i, options.warmup, warmup)) continue;
    sync_or_throw(stream, "warm-up");
    const double estimate_ms = warmup.elapsed_ms() / options.warmup;
    if (estimate_ms < kShortLaunchMs) {
      per_sample[i] = estimate_ms * kMaxLaunchesPerSample <= kMinSampleMs
                          ? kMaxLaunchesPerSample
                          : static_cast<int>(std::ceil(kMinSampleMs / estimate_ms));
    }
  }

  std::vector<std::vector<EventPair>> samples(launchers.size());
  for (auto& s : samples) s.reserve(static_cast<std::size_t>(options.iters));
  for (int iter = 0; iter < options.iters; ++iter) {
    for (std::size_t i = 0; i < launchers.size(); ++i) {
      if (!out[i].error.empty()) continue;
      if (!enqueue(i, per_sample[i], samples[i].emplace_back())) samples[i].pop_back();
    }
  }
  sync_or_throw(stream, "timing loop");

  for (std::size_t i = 0; i < launchers.size(); ++i) {
    if (!out[i].error.empty()) continue;
    std::vector<double> ms;
    for (const EventPair& sample : samples[i]) ms.push_back(sample.elapsed_ms() / per_sample[i]);
    out[i].timing = summarize(std::move(ms), per_sample[i]);
  }
  return out;
}

}  // namespace

Runner::Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks)
    : device_(device),
      options_(std::move(options)),
      clocks_(clocks),
      contenders_(select_contenders(options_.kernel_filters)) {
  check_cuda(cudaSetDevice(device.device), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
  if (const cublasStatus_t s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS) {
    cudaStreamDestroy(stream_);  // the destructor does not run for a throwing constructor
    throw DeviceFault(std::string("cublasCreate: ") + cublasGetStatusString(s));
  }
}

Runner::~Runner() {
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
}

void Runner::run(const Problem& problem, std::vector<Result>& results) {
  // Every row exists before anything is allocated or run, so a failure
  // leaves the problem's rows in the report ("not run" where it never got to).
  const std::size_t first_row = results.size();
  const int l2_sets = plan_sets(problem, device_.l2_bytes).sets;
  for (const Contender& contender : contenders_) {
    Result& row = results.emplace_back();
    row.problem = problem;
    row.kind = contender.kind;
    row.kernel = contender.name;
    row.status = "not run";
    row.l2_sets = l2_sets;
  }
  const std::span<Result> rows = std::span<Result>(results).subspan(first_row);

  // Out of memory ends this problem only: the buffers allocated so far are
  // freed on the way out and the next problem starts afresh.
  const auto fail_unfinished = [&rows](const std::string& status) {
    for (Result& r : rows) {
      if (r.status != "not run") continue;
      r.status = status;
      r.failed = true;
    }
  };
  try {
    measure(problem, rows);
  } catch (const testing::DeviceAllocError& e) {
    // Any other code than out-of-memory means the context is unusable.
    if (e.error() != cudaErrorMemoryAllocation) throw DeviceFault(e.what());
    fail_unfinished("error: out of memory: cudaMalloc of " + std::to_string(e.bytes()) +
                    " bytes failed");
  } catch (const std::bad_alloc&) {
    // The repeat check copies C to the host twice.
    fail_unfinished("error: out of host memory");
  }
}

void Runner::run_hazard(const Problem& problem, int runs, std::vector<HazardReport>& reports,
                        const HazardProgress& progress) {
  const std::size_t first_report = reports.size();
  for (const Contender& contender : contenders_) {
    HazardReport& report = reports.emplace_back();
    report.problem = problem;
    report.kind = contender.kind;
    report.kernel = contender.name;
  }
  const std::span<HazardReport> rows = std::span<HazardReport>(reports).subspan(first_report);

  const auto fail_unfinished = [&rows](const std::string& status) {
    for (HazardReport& r : rows) {
      if (r.status != "not run" && r.status != "ran") continue;
      r.status = "error: " + status;
      r.failed = true;
    }
  };
  try {
    hazard_runs(problem, runs, rows, progress);
  } catch (const testing::DeviceAllocError& e) {
    if (e.error() != cudaErrorMemoryAllocation) throw DeviceFault(e.what());
    fail_unfinished("out of memory: cudaMalloc of " + std::to_string(e.bytes()) + " bytes failed");
  } catch (const std::bad_alloc&) {
    fail_unfinished("out of host memory");
  }
}

void Runner::hazard_runs(const Problem& problem, int runs, std::span<HazardReport> reports,
                         const HazardProgress& progress) {
  // One buffer set: nothing is timed, so L2 does not matter.
  SetPlan plan = plan_sets(problem, device_.l2_bytes);
  plan.sets = 1;
  OperandSets operands(problem, plan, hazard_seed(options_.seed, 0), stream_);
  const GemmArgs operand_args = operands.args(0, stream_);
  Lineup lineup =
      line_up(contenders_, operand_args, DeviceCaps{device_.compute_capability}, cublas_);
  const GemmWorkspace workspace(lineup.workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  // A report whose launcher is gone has been skipped or has failed.
  std::vector<std::optional<Launcher>>& launchers = lineup.launchers;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (launchers[i]) {
      reports[i].config = describe_contender(contenders_[i], args);
    } else {
      reports[i].status = "skipped: " + lineup.skip_reasons[i];
    }
  }

  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = hazard_seed(options_.seed, run);
    if (run > 0) operands.fill(seed, stream_);
    Verifier verifier(args, operands.c_bytes(), stream_);  // this run's reference
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (!launchers[i]) continue;
      Result outcome;  // the Verifier's statuses for a launch that did not run
      outcome.kernel = reports[i].kernel;
      std::optional<Verifier::Checked> checked;
      try {
        checked = verifier.check(*launchers[i], outcome);
      } catch (const DeviceFault&) {
        reports[i].status = outcome.status;
        reports[i].failed = true;
        throw;
      }
      if (!checked) {
        reports[i].status = outcome.status;
        reports[i].failed = outcome.failed;
        launchers[i].reset();
        continue;
      }
      reports[i].status = "ran";
      reports[i].runs.push_back(HazardRun{
          .run = run,
          .seed = seed,
          .rel_err = checked->stats.rel_fro,
          .max_abs = checked->stats.max_abs,
          .nonfinite = checked->stats.nonfinite,
          .rerun_differs = !checked->repeatable,
      });
    }
    progress(run, reports);
  }
}

void Runner::measure(const Problem& problem, std::span<Result> rows) {
  const OperandSets operands(problem, plan_sets(problem, device_.l2_bytes), options_.seed, stream_);
  const GemmArgs operand_args = operands.args(0, stream_);
  const Lineup lineup =
      line_up(contenders_, operand_args, DeviceCaps{device_.compute_capability}, cublas_);
  const GemmWorkspace workspace(lineup.workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  std::vector<std::pair<std::size_t, Launcher>> candidates;
  for (std::size_t row = 0; row < rows.size(); ++row) {
    if (!lineup.launchers[row]) {
      rows[row].status = "skipped: " + lineup.skip_reasons[row];
      continue;
    }
    rows[row].config = describe_contender(contenders_[row], args);
    candidates.emplace_back(row, *lineup.launchers[row]);
  }

  {
    Verifier verifier(args, operands.c_bytes(), stream_);
    for (const auto& [row, launch] : candidates) verifier.verify(launch, rows[row]);
  }  // frees the reference and the copies of C: timing needs the operands and workspace only

  std::vector<std::size_t> timed_rows;
  std::vector<Launcher> timed;
  for (const auto& [row, launch] : candidates) {
    if (rows[row].status != "ok") continue;
    timed_rows.push_back(row);
    timed.push_back(launch);
  }
  const auto record = [](Result& r, const TimingOutcome& outcome) {
    r.timing = outcome.timing;
    if (!outcome.error.empty()) {
      r.status = "error: while timing: " + outcome.error;
      r.failed = true;
    }
  };
  if (!options_.sequential_rest_ms) {
    const std::vector<TimingOutcome> outcomes =
        time_interleaved(timed, operands, workspace, options_, stream_);
    const std::optional<unsigned> sm_clock = clocks_.read().sm_mhz;
    for (std::size_t i = 0; i < timed_rows.size(); ++i) record(rows[timed_rows[i]], outcomes[i]);
    for (Result& r : rows) r.sm_clock_mhz = sm_clock;
  } else {
    // The diagnostic protocol: each kernel alone, after the GPU has idled;
    // each row is filled as soon as its block ends, so a later fault keeps it.
    for (std::size_t i = 0; i < timed_rows.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(*options_.sequential_rest_ms));
      Result& r = rows[timed_rows[i]];
      record(r, time_interleaved({timed[i]}, operands, workspace, options_, stream_).front());
      r.sm_clock_mhz = clocks_.read().sm_mhz;
    }
  }
  // cuBLAS is always the last row.
  const std::optional<Timing> cublas_timing = rows.back().timing;
  for (Result& r : rows) {
    if (r.timing && cublas_timing) r.cublas_ms = cublas_timing->median_ms;
  }
}

}  // namespace tcgemm::bench
