// Verification and timing of every selected kernel and cuBLAS on one problem,
// as BENCHMARK.md prescribes: seeded normal inputs, poisoned C, comparison of
// every element with the reference GEMM, a bitwise repeat check, then
// interleaved event timing on L2-rotated buffers.
#pragma once

#include "device_info.h"
#include "shapes.h"
#include "testing/testing.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
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
  std::optional<double> cublas_ms;       // cuBLAS's median in the same interleaved loop
  std::optional<unsigned> sm_clock_mhz;  // read right after this problem's timing loop
  int l2_sets = 1;                       // buffer sets rotated through while timing
};

struct RunOptions {
  int warmup = 5;  // launches per kernel before timing
  int iters = 30;  // timed samples per kernel
  std::uint64_t seed = 0;
  std::vector<std::string> kernel_filters;  // substrings; empty selects every kernel
};

// True when `name` contains one of the filters (or there are none).
bool kernel_selected(std::string_view name, const std::vector<std::string>& filters);

// A CUDA error surfaced after a launch. Such errors (an illegal address, say)
// usually leave the context unusable, so the run stops with what it has.
class DeviceFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Runner {
 public:
  Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Appends rows for every selected registry kernel (skipped ones included),
  // then cuBLAS, to `results`. All device memory is released before it
  // returns. Throws DeviceFault, with the rows appended so far kept.
  void run(const Problem& problem, std::vector<Result>& results);

 private:
  const DeviceInfo& device_;
  RunOptions options_;
  const ClockReader& clocks_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace tcgemm::bench
