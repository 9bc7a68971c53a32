// Verification and timing of every selected kernel and cuBLAS on one problem,
// as docs/benchmarking.md describes: seeded normal inputs, poisoned C,
// comparison of every element with the reference GEMM, a bitwise repeat
// check, then interleaved event timing on L2-rotated buffers.
#pragma once

#include "cuda_check.h"
#include "device_info.h"
#include "hazard.h"
#include "shapes.h"
#include "testing/testing.h"

#include <tcgemm/registry.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::bench {

// The name of cuBLAS's row in every report.
inline constexpr std::string_view kCublasName = "cublas";

struct Timing {
  double median_ms = 0.0;  // per launch
  double min_ms = 0.0;
  double max_ms = 0.0;
  int launches_per_sample = 1;
};

// One row of the report: one kernel (or cuBLAS) on one problem.
struct Result {
  Problem problem;
  std::string kernel;
  // "ok", "FAIL(rel_err)", "FAIL(nonfinite)", "FAIL(repeat)", "skipped: <why>"
  // or "error: <what>".
  std::string status;
  bool failed = false;  // verification failed or the run errored: exit status 1
  std::optional<testing::ErrorStats> error;
  std::optional<Timing> timing;          // only kernels that verified are timed
  std::optional<double> cublas_ms;       // cuBLAS's median in the same run (interleaved unless
                                         // --sequential)
  std::optional<unsigned> sm_clock_mhz;  // read right after the problem's timing loop
                                         // (--sequential: after this kernel's own block;
                                         // unset for its rows not timed)
  int l2_sets = 1;                       // buffer sets rotated through while timing
};

// One kernel's report in --hazard-runs mode, on one problem.
struct HazardReport {
  Problem problem;
  std::string kernel;
  // "ran", "skipped: <why>", "error: <what>" (the runs before the error are
  // kept) or "not run" (the mode stopped on a CUDA error first).
  std::string status = "not run";
  bool failed = false;  // a launch or the device failed: exit status 1
  std::vector<HazardRun> runs;
};

// Called after every hazard run with the problem's reports so far.
using HazardProgress = std::function<void(int run, std::span<const HazardReport> reports)>;

struct RunOptions {
  int warmup = 5;  // launches per kernel before timing
  int iters = 30;  // timed samples per kernel
  std::uint64_t seed = 0;
  std::vector<std::string> kernel_filters;  // substrings; empty selects every kernel
  // Unset: the standard interleaved timing. Set: the sequential diagnostic
  // (--sequential): each kernel is timed in a block of its own after this
  // many milliseconds of idle GPU, and its clock is read after its block.
  std::optional<int> sequential_rest_ms;
};

// True when `name` contains one of the filters (or there are none).
bool kernel_selected(std::string_view name, const std::vector<std::string>& filters);

class Runner {
 public:
  Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Appends rows for every selected registry kernel (skipped ones included),
  // then cuBLAS, to `results`. The problem must have passed
  // check_leading_dimensions() and check_size(). All device memory is
  // released before it returns. When the problem does not fit in device (or host) memory, its
  // unfinished rows say "error: out of memory ..." and the runner stays
  // usable for the next problem. Throws DeviceFault when the CUDA context
  // fails, with the problem's rows kept.
  void run(const Problem& problem, std::vector<Result>& results);

  // --hazard-runs: appends a report for every selected registry kernel, then
  // one for cuBLAS (the control: a correct GEMM checked the same way), and
  // runs each of them `runs` times, run i on fresh inputs from seed
  // hazard_seed(options.seed, i): every run is compared with the reference
  // GEMM of its inputs and with an immediate re-run on the same inputs
  // (docs/benchmarking.md, "Hazard mode"). Nothing is timed. Out of memory
  // ends the problem's reports with an error, as in run(); throws DeviceFault
  // when the CUDA context fails, with the reports so far kept.
  void run_hazard(const Problem& problem, int runs, std::vector<HazardReport>& reports,
                  const HazardProgress& progress);

 private:
  // run()'s work once the rows exist: `kernels[i]` is rows[i]'s registry
  // kernel, nullptr for cuBLAS.
  void measure(const Problem& problem, std::span<const KernelInfo* const> kernels,
               std::span<Result> rows);
  // run_hazard()'s work once the reports exist, as measure() for run().
  void hazard_runs(const Problem& problem, int runs, std::span<const KernelInfo* const> kernels,
                   std::span<HazardReport> reports, const HazardProgress& progress);

  const DeviceInfo& device_;
  RunOptions options_;
  const ClockReader& clocks_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace tcgemm::bench
