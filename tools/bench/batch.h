// Strided batches on the verification side. The verification toolkit's
// reference GEMM and comparison read one matrix (batch entry 0), so the bench
// checks a batch entry by entry: this is the host-side arithmetic of that, one
// entry as a GEMM of its own and the error statistics of a batch from its
// entries'. No CUDA calls; unit-tested on the CPU
// (tests/host/test_bench_shapes.cpp).
#pragma once

#include "testing/testing.h"

#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm::bench {

// Entry `entry` of args' batch as a GEMM of its own: each base pointer
// advanced by entry * stride elements of its operand (an operand of stride 0
// stays where it is: one matrix shared by every entry), batch_count 1.
GemmArgs batch_entry(const GemmArgs& args, std::int64_t entry);

// The error statistics of a whole batch. Every entry must pass on its own: a
// norm over all entries would let a wrong entry among many through (one of
// 65536 entries left at zero gives a batch-wide relative error of 0.004, under
// the 1e-2 tolerance). So rel_fro is the worst entry's (NaN counts as worst),
// max_abs and its row and column the largest over all entries, nonfinite
// and mismatches the totals. For one entry these are that entry's statistics.
struct BatchErrorStats : testing::ErrorStats {
  std::int64_t rel_fro_entry = -1;  // the entry rel_fro comes from; -1 before any
  std::int64_t max_abs_entry = -1;  // the entry max_abs occurs in; -1 while none has one
};

// Folds entry `entry`'s statistics into `batch`. Entries are added in
// increasing order, so that a tie keeps the lower entry, as compare() keeps
// the lower index.
void add_entry(BatchErrorStats& batch, const testing::ErrorStats& stats, std::int64_t entry);

}  // namespace tcgemm::bench
