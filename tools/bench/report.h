// tcgemm-bench's outputs: the device header, the final fixed-width table, and
// the CSV and JSON result files (docs/benchmarking.md, "Result files").
#pragma once

#include "device_info.h"
#include "runner.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
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
};

// GPU, versions, clocks, seed and command, one item per line, no prefix.
std::vector<std::string> header_lines(const RunInfo& info);

void print_table(std::FILE* out, const std::vector<Result>& results);

// One row per result, after the header lines as '#' comments.
void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

// {"device": {...}, "command": ..., "seed": ..., "results": [...]}.
void write_json(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

}  // namespace tcgemm::bench
