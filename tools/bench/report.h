// tcgemm-bench's outputs: the device header, the final fixed-width table, and
// the CSV and JSON result files (docs/benchmarking.md, "Result files").
#pragma once

#include "device_info.h"
#include "runner.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace tcgemm::bench {

// What every result file carries besides the rows.
struct RunInfo {
  DeviceInfo device;
  Clocks clocks_start;
  std::optional<Clocks> clocks_end;  // absent until the run is over
  std::uint64_t seed = 0;
  std::string command;
  // How the kernels were timed: "interleaved" (the standard), or the
  // --sequential diagnostic with its rest, whose ratios are not same-run
  // interleaved ones.
  std::string timing = "interleaved";
};

// GPU, versions, clocks, timing, seed and command, one item per line, no prefix.
std::vector<std::string> header_lines(const RunInfo& info);

void print_table(std::FILE* out, const std::vector<Result>& results);

// --hazard-runs: what the mode does (`runs` per kernel), once.
void print_hazard_intro(std::FILE* out, int runs);
// --hazard-runs: one problem's reports: a line naming the problem, one row per
// run of every kernel, and one summary per kernel (skipped and failed kernels
// with their status).
void print_hazard_problem(std::FILE* out, std::span<const HazardReport> reports);

// One row per result, after the header lines as '#' comments.
void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

// {"device": {...}, "command": ..., "seed": ..., "results": [...]}.
void write_json(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

}  // namespace tcgemm::bench
