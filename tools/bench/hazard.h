// tcgemm-bench --hazard-runs N: what a kernel with a data race really does.
// One verified run proves nothing about such a kernel, so this mode runs each
// selected kernel N times, every run on fresh random inputs, and counts how
// often and how badly the result is wrong (docs/benchmarking.md, "Hazard
// mode"). This header is the mode's host-side arithmetic (seeds, verdicts,
// statistics, the report's lines): no CUDA, unit-tested on the CPU
// (tests/host/test_bench_hazard.cpp). The runs themselves are
// Runner::run_hazard (runner.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tcgemm::bench {

// The seed of run `run` (0-based) from the base seed. The bench fills A, B
// and C from seed, seed + 1 and seed + 2, so seeds 3 apart give every run its
// own three generator streams (modulo 2^64). `tcgemm-bench --seed <seed of
// run i>` reproduces run i's inputs in either mode.
std::uint64_t hazard_seed(std::uint64_t base, int run);

// One run of one kernel on fresh inputs.
struct HazardRun {
  int run = 0;  // 0-based
  std::uint64_t seed = 0;
  double rel_err = 0.0;        // relative Frobenius error over the finite elements
  double max_abs = 0.0;        // largest absolute error over the finite elements
  std::int64_t nonfinite = 0;  // NaN or Inf elements of C
  bool rerun_differs = false;  // an immediate re-run on the same inputs gave other bits
  // Elements of the small-integer run (Verifier) that are not the exact
  // reference rounded to C's dtype; -1 where that run did not happen.
  std::int64_t exact_mismatches = 0;
  // Whether exact_mismatches makes the run wrong: not for cuBLAS, the
  // control, which is taken as cuBLAS computes (the normal mode's rule).
  bool exact_binds = true;
};

// The verdict of the normal mode's check without the repeat part: a run is
// wrong when some element is not finite, the relative error is not below
// the tolerance (a NaN rel_err counts as wrong) or, where it binds, an
// element of the small-integer run is not exact.
bool is_wrong(const HazardRun& run, double tolerance);

struct HazardSummary {
  int runs = 0;
  int wrong = 0;                 // is_wrong()
  int wrong_nonfinite = 0;       // of these, runs with non-finite elements
  int wrong_rel_err = 0;         // ... runs with a too large rel_err, all finite
  int wrong_exact = 0;           // ... and runs wrong only in the small-integer run
  int rerun_differed = 0;        // runs whose immediate re-run differed (wrong or not)
  double worst_rel_err = 0.0;    // largest rel_err (NaN sorts above everything)
  std::uint64_t worst_seed = 0;  // the seed of that run
  double median_rel_err = 0.0;   // mean of the two middle values for an even count
  double worst_max_abs = 0.0;
};

// Statistics over the runs (all zero for none).
HazardSummary summarize_hazard(std::span<const HazardRun> runs, double tolerance);

// The report's lines, without a trailing newline: the column header, one row
// per run, and the one-paragraph summary of a kernel.
std::string hazard_table_header();
std::string format_hazard_run(const std::string& kernel, const HazardRun& run, double tolerance);
std::string format_hazard_summary(const std::string& kernel, const HazardSummary& summary,
                                  double tolerance);

}  // namespace tcgemm::bench
