// Verification and timing of every selected kernel, the dispatcher and cuBLAS
// on one problem, as docs/benchmarking.md describes: seeded normal inputs,
// poisoned C, comparison of every element of every batch entry with the
// reference GEMM, a bitwise repeat check, then interleaved event timing on
// L2-rotated buffers (the pieces: measure.h).
#pragma once

#include "batch.h"
#include "contenders.h"
#include "cuda_check.h"
#include "device_info.h"
#include "hazard.h"
#include "measure.h"
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

// One kernel's report in --hazard-runs mode, on one problem.
struct HazardReport {
  Problem problem;
  Contender::Kind kind = Contender::Kind::kRegistry;
  std::string kernel;
  // "ran", "skipped: <why>", "error: <what>" (the runs before the error are
  // kept) or "not run" (the mode stopped on a CUDA error first).
  std::string status = "not run";
  std::string config;   // as Result::config
  bool failed = false;  // a launch or the device failed: exit status 1
  std::vector<HazardRun> runs;
};

// Called after every hazard run with the problem's reports so far.
using HazardProgress = std::function<void(int run, std::span<const HazardReport> reports)>;

struct RunOptions {
  int warmup = 5;  // launches per kernel before timing
  int iters = 30;  // timed samples per kernel
  std::uint64_t seed = 0;
  std::vector<std::string> kernel_filters;  // select_contenders()' filters; empty selects all
  // Unset: the standard interleaved timing. Set: the sequential diagnostic
  // (--sequential): each kernel is timed in a block of its own after this
  // many milliseconds of idle GPU, and its clock is read after its block.
  std::optional<int> sequential_rest_ms;
};

class Runner {
 public:
  Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Appends a row for every contender (skipped ones included) to `results`.
  // The problem must have passed check_leading_dimensions(), check_size()
  // and check_arguments(). All device memory is released before it returns.
  // When the problem does not fit in device (or host) memory, its unfinished
  // rows say "error: out of memory ..." and the runner stays usable for the
  // next problem. Throws DeviceFault when the CUDA context
  // fails, with the problem's rows kept.
  void run(const Problem& problem, std::vector<Result>& results);

  // --hazard-runs: appends a report for every contender (cuBLAS is the
  // control: a correct GEMM checked the same way), and runs each of them
  // `runs` times, run i on fresh inputs from seed hazard_seed(options.seed, i): every run is
  // compared with the reference GEMM of its inputs and with an immediate re-run on the same inputs
  // (docs/benchmarking.md, "Hazard mode"). Nothing is timed. Out of memory
  // ends the problem's reports with an error, as in run(); throws DeviceFault
  // when the CUDA context fails, with the reports so far kept.
  void run_hazard(const Problem& problem, int runs, std::vector<HazardReport>& reports,
                  const HazardProgress& progress);

 private:
  // run()'s work once the rows exist: rows[i] is contenders_[i]'s.
  void measure(const Problem& problem, std::span<Result> rows);
  // run_hazard()'s work once the reports exist, as measure() for run().
  void hazard_runs(const Problem& problem, int runs, std::span<HazardReport> reports,
                   const HazardProgress& progress);

  const DeviceInfo& device_;
  RunOptions options_;
  const ClockReader& clocks_;
  std::vector<Contender> contenders_;  // every problem's rows, in order
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace tcgemm::bench
