// The problems a tcgemm-tune run covers: --shapes sets and --shape MxNxK
// entries crossed with --dtype and --layouts, each checked as tcgemm-bench
// checks its problems, duplicates (the same key from two sets) dropped. Plain
// host C++, unit-tested on the CPU (tests/host/test_tune_table.cpp).
#pragma once

#include "shapes.h"
#include "table.h"

#include <tcgemm/tcgemm.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::tune {

struct ProblemList {
  std::vector<bench::Problem> problems;  // alpha = 1, beta = 0
  std::vector<ShapeKey> keys;            // keys[i] = key_of(problems[i]); all distinct
  std::string error;                     // the first problem the bench's checks refuse, or ""
};

// Every shape for every dtype (a shape with a dtype of its own, as the
// batched set's, once with that dtype) and layout, in that nesting: dtype,
// then layout, then shape. `output` unset: C has the input dtype.
ProblemList make_problems(std::span<const bench::Shape> shapes, std::span<const DType> dtypes,
                          std::optional<DType> output,
                          std::span<const bench::OperandLayouts> layouts);

}  // namespace tcgemm::tune
