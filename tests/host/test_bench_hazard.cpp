// tcgemm-bench's hazard mode, its host-side arithmetic (tools/bench/hazard.h):
// the per-run seeds, the verdict on a run, and the statistics of the report.
#include "hazard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace {

using tcgemm::bench::format_hazard_run;
using tcgemm::bench::format_hazard_summary;
using tcgemm::bench::hazard_seed;
using tcgemm::bench::HazardRun;
using tcgemm::bench::is_wrong;
using tcgemm::bench::summarize_hazard;

constexpr double kTolerance = 1e-2;

HazardRun run_with(double rel_err, std::int64_t nonfinite = 0, bool differs = false,
                   std::uint64_t seed = 0) {
  HazardRun r;
  r.seed = seed;
  r.rel_err = rel_err;
  r.max_abs = rel_err * 100.0;
  r.nonfinite = nonfinite;
  r.rerun_differs = differs;
  return r;
}

TEST(HazardSeed, RunZeroUsesTheBaseSeed) {
  EXPECT_EQ(hazard_seed(12345, 0), 12345u);
  EXPECT_EQ(hazard_seed(0, 0), 0u);
}

TEST(HazardSeed, EveryRunGetsThreeGeneratorStreamsOfItsOwn) {
  // A, B and C of a run come from seed, seed + 1, seed + 2: no stream may be
  // shared between two runs, also where the seeds wrap around 2^64.
  for (const std::uint64_t base : {std::uint64_t{0}, std::uint64_t{3134229763},
                                   std::numeric_limits<std::uint64_t>::max() - 40}) {
    std::set<std::uint64_t> streams;
    constexpr int kRuns = 50;
    for (int run = 0; run < kRuns; ++run) {
      const std::uint64_t seed = hazard_seed(base, run);
      for (std::uint64_t s = 0; s < 3; ++s) streams.insert(seed + s);
    }
    EXPECT_EQ(streams.size(), 3u * kRuns) << "base " << base;
  }
}

TEST(HazardVerdict, WrongIsNonFiniteOrRelErrAtOrAboveTheTolerance) {
  EXPECT_FALSE(is_wrong(run_with(2e-4), kTolerance));
  EXPECT_TRUE(is_wrong(run_with(1e-2), kTolerance));
  EXPECT_TRUE(is_wrong(run_with(0.4), kTolerance));
  EXPECT_TRUE(is_wrong(run_with(2e-4, /*nonfinite=*/1), kTolerance));
  EXPECT_TRUE(is_wrong(run_with(std::nan("")), kTolerance));
  // A run that differs from its re-run but is within tolerance is not wrong:
  // the report counts it separately.
  EXPECT_FALSE(is_wrong(run_with(2e-4, 0, /*differs=*/true), kTolerance));
}

TEST(HazardVerdict, AnInexactSmallIntegerRunIsWrongWhateverTheRelErr) {
  // A race that corrupts a few elements moves the relative error of a large
  // C by less than the tolerance; the small-integer run sees every element.
  HazardRun run = run_with(2e-4);
  run.exact_mismatches = 3;
  EXPECT_TRUE(is_wrong(run, kTolerance));
  const auto s = summarize_hazard(std::vector<HazardRun>{run, run_with(2e-4)}, kTolerance);
  EXPECT_EQ(s.wrong, 1);
  EXPECT_EQ(s.wrong_exact, 1);
  EXPECT_EQ(s.wrong_rel_err, 0);
  EXPECT_NE(format_hazard_summary("k", s, kTolerance).find("1 inexact on small integers"),
            std::string::npos);
  EXPECT_NE(format_hazard_run("k", run, kTolerance).find("        3  identical  WRONG"),
            std::string::npos)
      << format_hazard_run("k", run, kTolerance);
}

TEST(HazardVerdict, CublasInexactElementsAreShownNotCounted) {
  // The control is taken as cuBLAS computes it, as in the timing mode.
  HazardRun run = run_with(2e-4);
  run.exact_mismatches = 12;
  run.exact_binds = false;
  EXPECT_FALSE(is_wrong(run, kTolerance));
  EXPECT_NE(format_hazard_run("cublas", run, kTolerance).find("       12  identical  ok"),
            std::string::npos)
      << format_hazard_run("cublas", run, kTolerance);
}

TEST(HazardSummary, CountsWrongRunsByKindAndRerunsThatDiffered) {
  const std::vector<HazardRun> runs = {
      run_with(2e-4),
      run_with(1.5e-3, 0, true),
      run_with(0.42, 17, true),
      run_with(0.05, 0, false),
      run_with(3e-4, 0, true),
  };
  const auto s = summarize_hazard(runs, kTolerance);
  EXPECT_EQ(s.runs, 5);
  EXPECT_EQ(s.wrong, 2);
  EXPECT_EQ(s.wrong_nonfinite, 1);
  EXPECT_EQ(s.wrong_rel_err, 1);
  EXPECT_EQ(s.rerun_differed, 3);
}

TEST(HazardSummary, MedianAndWorstRelErrWithTheWorstRunsSeed) {
  std::vector<HazardRun> runs = {run_with(4e-4, 0, false, 10), run_with(1e-4, 0, false, 13),
                                 run_with(0.3, 0, false, 16), run_with(2e-4, 0, false, 19)};
  auto s = summarize_hazard(runs, kTolerance);
  EXPECT_DOUBLE_EQ(s.median_rel_err, 0.5 * (2e-4 + 4e-4));  // even count: the two middle ones
  EXPECT_DOUBLE_EQ(s.worst_rel_err, 0.3);
  EXPECT_EQ(s.worst_seed, 16u);
  EXPECT_DOUBLE_EQ(s.worst_max_abs, 30.0);
  runs.push_back(run_with(5e-4, 0, false, 22));
  s = summarize_hazard(runs, kTolerance);
  EXPECT_DOUBLE_EQ(s.median_rel_err, 4e-4);  // odd count: the middle one
}

TEST(HazardSummary, NanRelErrIsTheWorst) {
  const std::vector<HazardRun> runs = {run_with(0.9, 0, false, 1),
                                       run_with(std::nan(""), 0, false, 4),
                                       run_with(2e-4, 0, false, 7)};
  const auto s = summarize_hazard(runs, kTolerance);
  EXPECT_TRUE(std::isnan(s.worst_rel_err));
  EXPECT_EQ(s.worst_seed, 4u);
  EXPECT_DOUBLE_EQ(s.median_rel_err, 0.9);  // NaN sorts above everything
  EXPECT_EQ(s.wrong, 2);
}

TEST(HazardSummary, NoRunsIsAllZero) {
  const auto s = summarize_hazard({}, kTolerance);
  EXPECT_EQ(s.runs, 0);
  EXPECT_EQ(s.wrong, 0);
  EXPECT_EQ(s.median_rel_err, 0.0);
  EXPECT_EQ(format_hazard_summary("wmma-09", s, kTolerance), "wmma-09: no runs");
}

TEST(HazardReport, RowAndSummarySayWhatWasFound) {
  HazardRun r = run_with(0.42, 17, true, 3134229766);
  r.run = 1;
  const std::string row = format_hazard_run("wmma-09", r, kTolerance);
  for (const char* part : {"wmma-09", " 2 ", "3134229766", "4.20e-01", "17", "differs", "WRONG"}) {
    EXPECT_NE(row.find(part), std::string::npos) << part << " in '" << row << "'";
  }
  const std::vector<HazardRun> runs = {run_with(2e-4, 0, false, 1), r};
  const std::string summary =
      format_hazard_summary("wmma-09", summarize_hazard(runs, kTolerance), kTolerance);
  for (const char* part : {"wmma-09: 2 runs", "1 wrong (1 with non-finite elements, 0 with rel_err",
                           "1 differed", "worst 4.20e-01 (seed 3134229766)"}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " in '" << summary << "'";
  }
}

}  // namespace
