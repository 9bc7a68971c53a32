// tcgemm-tune's GPU side: every candidate Choice of one problem verified
// against the reference GEMM and timed with tcgemm-bench's method
// (tools/bench/measure.h: L2-rotated operand sets, one zeroed workspace,
// interleaved CUDA events, the median of the samples), the heuristic's choice
// among them (docs/tuning.md).
#pragma once

#include "device_info.h"
#include "shapes.h"
#include "table.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string_view>

#include "kernels/prod/problem.h"

namespace tcgemm::tune {

struct TuneOptions {
  Method method;
  std::uint64_t seed = 0;  // of the random inputs (A, B, C from seed, seed + 1, seed + 2)
};

// Called as a problem's work goes ("verify 3/12", "time 12 candidates").
using TuneProgress = std::function<void(std::string_view activity)>;

// Whether the small-M path's registry constraints accept `args` on a device
// of `compute_capability`: where it is a candidate, and what the dispatcher
// runs without a table entry.
bool skinny_applies(const GemmArgs& args, int compute_capability);

class Tuner {
 public:
  // Creates a stream on `device.device` and reads the heuristic's device
  // model. Throws bench::DeviceFault when either fails.
  Tuner(const bench::DeviceInfo& device, TuneOptions options);
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // The candidates are the family's choices (prod::candidates) and, where
  // its registry constraints accept the problem, the small-M path
  // ("prod-skinny"). Verifies each candidate once against the reference GEMM
  // (a candidate that fails keeps its status and is not timed), times the
  // verified ones interleaved, method.warmup launches then method.reps
  // samples each (long_reps when one launch of the heuristic's choice takes
  // over long_ms), and returns the problem's measurement: the fastest
  // verified candidate as `tuned`, and the heuristic's with its time from
  // the same loop. The heuristic is what the dispatcher runs without a table
  // entry: the small-M path where it applies, else prod::select's choice.
  // With method.max_candidates > 0, only that many of the family's choices
  // of least estimate_cycles are run, and the heuristic's always. The problem must
  // have passed bench's check_leading_dimensions, check_size and
  // check_arguments. Throws testing::DeviceAllocError when the problem does
  // not fit in device memory (nothing is left allocated), and
  // bench::DeviceFault when a launch broke the CUDA context.
  TunedShape tune(const bench::Problem& problem, const TuneProgress& progress);

 private:
  const bench::DeviceInfo& device_;
  TuneOptions options_;
  prod::DeviceModel model_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace tcgemm::tune
