#include "runner.h"

#include <tcgemm/registry.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <utility>

namespace tcgemm::bench {
namespace {

using testing::DeviceBuffer;

// cudaMalloc returns 256-byte aligned memory; carving every buffer set at that
// alignment gives each set the alignment of a fresh allocation (TMA needs 16).
constexpr std::size_t kSetAlignment = 256;
// BENCHMARK.md: rotate buffer sets until together they exceed 4x the L2.
constexpr std::int64_t kL2Multiple = 4;
// BENCHMARK.md: launches under ~50 us are batched between one event pair,
// here until a sample lasts about 0.5 ms.
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
  CudaEvent() { TCGEMM_CHECK_CUDA(cudaEventCreate(&event_)); }
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
    TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms;
  }
};

// Waits for the stream and turns an asynchronous error (from a kernel just
// launched) into a DeviceFault instead of an abort, so the report survives.
void sync_or_throw(cudaStream_t stream, const std::string& what) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) throw DeviceFault(what + ": " + cudaGetErrorString(err));
}

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
    std::string message = std::string("cublasGemmEx: ") + cublasGetStatusString(s);
    // cuBLAS lacks some dtype pairs the API has (bf16 inputs to fp16 output).
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return {Launch::Kind::kSkipped, std::move(message)};
    return {Launch::Kind::kError, std::move(message)};
  };
}

// The problem's operands `sets` times over, one pool per operand. Set 0 is
// the verified one; timing walks through all sets so that no launch finds its
// inputs in L2 from an earlier one.
class Workspace {
 public:
  Workspace(const Problem& p, std::int64_t l2_bytes, std::uint64_t seed, cudaStream_t stream)
      : problem_(p),
        c_bytes_(matrix_bytes(p.m, p.n, p.layouts.c, p.ldc, p.output)),
        a_stride_(round_up(matrix_bytes(p.m, p.k, p.layouts.a, p.lda, p.input), kSetAlignment)),
        b_stride_(round_up(matrix_bytes(p.k, p.n, p.layouts.b, p.ldb, p.input), kSetAlignment)),
        c_stride_(round_up(c_bytes_, kSetAlignment)) {
    // Sizes are >= 1 (the CLI insists), so every stride is >= kSetAlignment.
    const std::size_t set_bytes = a_stride_ + b_stride_ + c_stride_;
    const auto rotate_bytes = static_cast<std::size_t>(kL2Multiple * l2_bytes);
    sets_ = set_bytes > rotate_bytes ? 1 : static_cast<int>(rotate_bytes / set_bytes + 1);
    const auto sets = static_cast<std::size_t>(sets_);
    a_ = DeviceBuffer(a_stride_ * sets);
    b_ = DeviceBuffer(b_stride_ * sets);
    c_ = DeviceBuffer(c_stride_ * sets);
    // fill_normal streams of different seeds are unrelated, so every operand
    // of every set holds its own values.
    testing::fill_normal(a_.get(), p.input, elements(a_, p.input), seed, stream);
    testing::fill_normal(b_.get(), p.input, elements(b_, p.input), seed + 1, stream);
    testing::fill_normal(c_.get(), p.output, elements(c_, p.output), seed + 2, stream);
  }

  int sets() const { return sets_; }
  std::size_t c_bytes() const { return c_bytes_; }  // one C, padding included

  GemmArgs args(int set, cudaStream_t stream) const {
    const auto at = [set](const DeviceBuffer& pool, std::size_t stride) {
      return static_cast<std::byte*>(pool.get()) + static_cast<std::size_t>(set) * stride;
    };
    return make_args(problem_, at(a_, a_stride_), at(b_, b_stride_), at(c_, c_stride_), stream);
  }

 private:
  static std::int64_t elements(const DeviceBuffer& pool, DType dtype) {
    return static_cast<std::int64_t>(pool.bytes() / size_of(dtype));
  }

  Problem problem_;
  std::size_t c_bytes_;
  std::size_t a_stride_;
  std::size_t b_stride_;
  std::size_t c_stride_;
  int sets_ = 1;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer c_;
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
      TCGEMM_CHECK_CUDA(
          cudaMemcpyAsync(c0_.get(), args.c.ptr, c_bytes, cudaMemcpyDeviceToDevice, stream));
    }
    testing::reference_gemm(args, static_cast<float*>(ref_.get()), stream);
    sync_or_throw(stream, "reference GEMM");
  }

  void verify(const Launcher& launch, Result& result) {
    if (!run_once(launch, result)) return;
    const testing::ErrorStats stats = testing::compare(args_, ref(), stream_);
    result.error = stats;
    TCGEMM_CHECK_CUDA(
        cudaMemcpyAsync(first_.get(), args_.c.ptr, c_bytes_, cudaMemcpyDeviceToDevice, stream_));
    if (!run_once(launch, result)) return;
    const bool repeatable = testing::bitwise_equal(args_.c.ptr, first_.get(), c_bytes_);

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
      TCGEMM_CHECK_CUDA(
          cudaMemcpyAsync(args_.c.ptr, c0_.get(), c_bytes_, cudaMemcpyDeviceToDevice, stream_));
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
                                            const Workspace& workspace, const RunOptions& options,
                                            cudaStream_t stream) {
  std::vector<TimingOutcome> out(launchers.size());
  int next_set = 0;
  const auto enqueue = [&](std::size_t i, int launches, const EventPair& events) {
    TCGEMM_CHECK_CUDA(cudaEventRecord(events.start.get(), stream));
    for (int r = 0; r < launches; ++r) {
      const Launch outcome = launchers[i](workspace.args(next_set, stream));
      next_set = (next_set + 1) % workspace.sets();
      if (outcome.kind != Launch::Kind::kOk) {
        out[i].error = outcome.message;
        return false;
      }
    }
    TCGEMM_CHECK_CUDA(cudaEventRecord(events.stop.get(), stream));
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
  TCGEMM_CHECK_CUDA(cudaSetDevice(device.device));
  TCGEMM_CHECK_CUDA(cudaStreamCreate(&stream_));
  if (const cublasStatus_t s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cublasCreate: ") + cublasGetStatusString(s));
  }
}

Runner::~Runner() {
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
}

void Runner::run(const Problem& problem, std::vector<Result>& results) {
  const std::size_t first_row = results.size();
  const Workspace workspace(problem, device_.l2_bytes, options_.seed, stream_);
  const GemmArgs checked = workspace.args(0, stream_);

  // Every row exists before anything runs, so a DeviceFault leaves the
  // problem's rows in the report ("not run" where it never got to).
  std::vector<std::pair<std::size_t, Launcher>> candidates;
  const DeviceCaps caps{device_.compute_capability};
  const auto add_row = [&](std::string_view kernel) {
    Result& row = results.emplace_back();
    row.problem = problem;
    row.kernel = kernel;
    row.status = "not run";
    row.l2_sets = workspace.sets();
    return results.size() - 1;
  };
  for (const KernelInfo& kernel : registry()) {
    if (!kernel_selected(kernel.name, options_.kernel_filters)) continue;
    const std::size_t row = add_row(kernel.name);
    if (std::string reason = check_constraints(kernel.constraints, checked, caps);
        !reason.empty()) {
      results[row].status = "skipped: " + reason;
      continue;
    }
    candidates.emplace_back(row, tcgemm_launcher(kernel));
  }
  const std::size_t cublas_row = add_row(kCublasName);
  candidates.emplace_back(cublas_row, cublas_launcher(cublas_));

  {
    Verifier verifier(checked, workspace.c_bytes(), stream_);
    for (const auto& [row, launch] : candidates) verifier.verify(launch, results[row]);
  }  // frees the reference and the copies of C: timing needs only the workspace

  std::vector<std::size_t> timed_rows;
  std::vector<Launcher> timed;
  for (const auto& [row, launch] : candidates) {
    if (results[row].status != "ok") continue;
    timed_rows.push_back(row);
    timed.push_back(launch);
  }
  const std::vector<TimingOutcome> outcomes = time_interleaved(timed, workspace, options_, stream_);
  const std::optional<unsigned> sm_clock = clocks_.read().sm_mhz;

  for (std::size_t i = 0; i < timed_rows.size(); ++i) {
    Result& r = results[timed_rows[i]];
    r.timing = outcomes[i].timing;
    if (!outcomes[i].error.empty()) {
      r.status = "error: while timing: " + outcomes[i].error;
      r.failed = true;
    }
  }
  const std::optional<Timing> cublas_timing = results[cublas_row].timing;
  for (std::size_t row = first_row; row < results.size(); ++row) {
    Result& r = results[row];
    r.sm_clock_mhz = sm_clock;
    if (r.timing && cublas_timing) r.cublas_ms = cublas_timing->median_ms;
  }
}

}  // namespace tcgemm::bench
