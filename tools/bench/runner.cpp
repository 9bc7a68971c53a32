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

std::size_t matrix_bytes(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t ld,
                         DType dtype) {
  return static_cast<std::size_t>(testing::span_elements(rows, cols, layout, ld)) * size_of(dtype);
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

Launcher tcgemm_launcher(const KernelInfo& kernel) {
  return [&kernel](const GemmArgs& args) -> Launch {
    const Status s = gemm(args, GemmOptions{.kernel = kernel.name});
    if (s.ok()) return {};
    clear_pending_error();
    // gemm() refuses any device but sm_90, also for a kernel whose constraints
    // name no architecture: that is a skip, not a kernel failure.
    if (s.code == StatusCode::kArchMismatch) return {Launch::Kind::kSkipped, s.message};
    return {Launch::Kind::kError, std::string(to_string(s.code)) + ": " + s.message};
  };
}

Launcher cublas_launcher(cublasHandle_t handle) {
  return [handle](const GemmArgs& args) -> Launch {
    const cublasStatus_t s = testing::cublas_gemm(handle, args);
    if (s == CUBLAS_STATUS_SUCCESS) return {};
    clear_pending_error();
    std::string message = std::string("cublasGemmEx: ") + cublasGetStatusString(s);
    // cuBLAS lacks some dtype pairs the API has (bf16 inputs to fp16 output).
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return {Launch::Kind::kSkipped, std::move(message)};
    return {Launch::Kind::kError, std::move(message)};
  };
}

// How a problem's operands are laid out in device memory: one C's bytes, the
// distance between consecutive buffer sets in each operand's pool, and how
// many sets timing rotates through. Pure arithmetic; check_size() has made
// sure none of it overflows.
struct SetPlan {
  std::size_t c_bytes = 0;  // one C, padding included
  std::size_t a_stride = 0;
  std::size_t b_stride = 0;
  std::size_t c_stride = 0;
  int sets = 1;
};

SetPlan plan_sets(const Problem& p, std::int64_t l2_bytes) {
  SetPlan plan;
  plan.c_bytes = matrix_bytes(p.m, p.n, p.layouts.c, p.ldc, p.output);
  plan.a_stride = round_up(matrix_bytes(p.m, p.k, p.layouts.a, p.lda, p.input), kSetAlignment);
  plan.b_stride = round_up(matrix_bytes(p.k, p.n, p.layouts.b, p.ldb, p.input), kSetAlignment);
  plan.c_stride = round_up(plan.c_bytes, kSetAlignment);
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

// The GEMM workspace (GemmArgs::workspace) of every tcgemm launch on one
// problem: one buffer, the largest that `kernels` ask for this problem
// (cuBLAS, nullptr, and kernels without a workspace function ask for none),
// zeroed once. A kernel leaves it reusable (the API's contract), so the
// verified and the timed runs of every kernel share it. Throws
// testing::DeviceAllocError when it does not fit.
class GemmWorkspace {
 public:
  // `kernels` must all accept `args` (check_constraints passed): that is what
  // a workspace function assumes.
  GemmWorkspace(std::span<const KernelInfo* const> kernels, const GemmArgs& args,
                cudaStream_t stream) {
    std::size_t bytes = 0;
    for (const KernelInfo* kernel : kernels) {
      if (kernel != nullptr && kernel->workspace_bytes != nullptr) {
        bytes = std::max(bytes, kernel->workspace_bytes(args));
      }
    }
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
class Verifier {
 public:
  Verifier(const GemmArgs& args, std::size_t c_bytes, cudaStream_t stream)
      : args_(args),
        c_bytes_(c_bytes),
        stream_(stream),
        ref_(sizeof(float) * static_cast<std::size_t>(args.m * args.n)),
        first_(c_bytes) {
    // With beta != 0 the reference reads set 0's random C: keep that C0 to
    // restore before every checked run.
    if (args.beta != 0.0f) {
      c0_ = DeviceBuffer(c_bytes);
      check_cuda(cudaMemcpyAsync(c0_.get(), args.c.ptr, c_bytes, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync (keep C0)");
    }
    testing::reference_gemm(args, static_cast<float*>(ref_.get()), stream);
    sync_or_throw(stream, "reference GEMM");
  }

  // What two runs from the same starting C came to.
  struct Checked {
    testing::ErrorStats stats;  // the first run against the reference
    bool repeatable = false;    // the second run gave the same bits
  };

  // The two runs; nullopt, with result's status set, when the launcher
  // skipped or failed.
  std::optional<Checked> check(const Launcher& launch, Result& result) {
    if (!run_once(launch, result)) return std::nullopt;
    Checked checked;
    checked.stats = testing::compare(args_, ref(), stream_);
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
    const testing::ErrorStats& stats = checked->stats;
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
  const float* ref() const { return static_cast<const float*>(ref_.get()); }

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

bool kernel_selected(std::string_view name, const std::vector<std::string>& filters) {
  return filters.empty() || std::any_of(filters.begin(), filters.end(), [name](const auto& f) {
           return name.find(f) != std::string_view::npos;
         });
}

Runner::Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks)
    : device_(device), options_(std::move(options)), clocks_(clocks) {
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
  std::vector<const KernelInfo*> kernels;
  const auto add_row = [&](std::string_view name, const KernelInfo* kernel) {
    Result& row = results.emplace_back();
    row.problem = problem;
    row.kernel = name;
    row.status = "not run";
    row.l2_sets = l2_sets;
    kernels.push_back(kernel);
  };
  for (const KernelInfo& kernel : registry()) {
    if (kernel_selected(kernel.name, options_.kernel_filters)) add_row(kernel.name, &kernel);
  }
  add_row(kCublasName, nullptr);
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
    measure(problem, kernels, rows);
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
  std::vector<const KernelInfo*> kernels;
  const auto add_report = [&](std::string_view name, const KernelInfo* kernel) {
    HazardReport& report = reports.emplace_back();
    report.problem = problem;
    report.kernel = name;
    kernels.push_back(kernel);
  };
  for (const KernelInfo& kernel : registry()) {
    if (kernel_selected(kernel.name, options_.kernel_filters)) add_report(kernel.name, &kernel);
  }
  add_report(kCublasName, nullptr);
  const std::span<HazardReport> rows = std::span<HazardReport>(reports).subspan(first_report);

  const auto fail_unfinished = [&rows](const std::string& status) {
    for (HazardReport& r : rows) {
      if (r.status != "not run" && r.status != "ran") continue;
      r.status = "error: " + status;
      r.failed = true;
    }
  };
  try {
    hazard_runs(problem, runs, kernels, rows, progress);
  } catch (const testing::DeviceAllocError& e) {
    if (e.error() != cudaErrorMemoryAllocation) throw DeviceFault(e.what());
    fail_unfinished("out of memory: cudaMalloc of " + std::to_string(e.bytes()) + " bytes failed");
  } catch (const std::bad_alloc&) {
    fail_unfinished("out of host memory");
  }
}

void Runner::hazard_runs(const Problem& problem, int runs,
                         std::span<const KernelInfo* const> kernels,
                         std::span<HazardReport> reports, const HazardProgress& progress) {
  // One buffer set: nothing is timed, so L2 does not matter.
  SetPlan plan = plan_sets(problem, device_.l2_bytes);
  plan.sets = 1;
  OperandSets operands(problem, plan, hazard_seed(options_.seed, 0), stream_);
  const GemmArgs operand_args = operands.args(0, stream_);

  // A report whose launcher is gone has been skipped or has failed.
  std::vector<std::optional<Launcher>> launchers(reports.size());
  std::vector<const KernelInfo*> runnable;  // what the GEMM workspace is sized for
  const DeviceCaps caps{device_.compute_capability};
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (kernels[i] == nullptr) {
      launchers[i] = cublas_launcher(cublas_);
    } else if (std::string reason = check_constraints(kernels[i]->constraints, operand_args, caps);
               !reason.empty()) {
      reports[i].status = "skipped: " + reason;
    } else {
      launchers[i] = tcgemm_launcher(*kernels[i]);
      runnable.push_back(kernels[i]);
    }
  }
  const GemmWorkspace workspace(runnable, operand_args, stream_);
  const GemmArgs args = workspace.attach(operand_args);

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

void Runner::measure(const Problem& problem, std::span<const KernelInfo* const> kernels,
                     std::span<Result> rows) {
  const OperandSets operands(problem, plan_sets(problem, device_.l2_bytes), options_.seed, stream_);
  const GemmArgs operand_args = operands.args(0, stream_);

  std::vector<std::pair<std::size_t, Launcher>> candidates;
  std::vector<const KernelInfo*> runnable;  // what the GEMM workspace is sized for
  const DeviceCaps caps{device_.compute_capability};
  std::size_t cublas_row = 0;
  for (std::size_t row = 0; row < rows.size(); ++row) {
    const KernelInfo* kernel = kernels[row];
    if (kernel == nullptr) {
      cublas_row = row;
      candidates.emplace_back(row, cublas_launcher(cublas_));
    } else if (std::string reason = check_constraints(kernel->constraints, operand_args, caps);
               !reason.empty()) {
      rows[row].status = "skipped: " + reason;
    } else {
      candidates.emplace_back(row, tcgemm_launcher(*kernel));
      runnable.push_back(kernel);
    }
  }
  const GemmWorkspace workspace(runnable, operand_args, stream_);

  {
    Verifier verifier(workspace.attach(operand_args), operands.c_bytes(), stream_);
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
  const std::optional<Timing> cublas_timing = rows[cublas_row].timing;
  for (Result& r : rows) {
    if (r.timing && cublas_timing) r.cublas_ms = cublas_timing->median_ms;
  }
}

}  // namespace tcgemm::bench
