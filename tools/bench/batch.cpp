#include "batch.h"

#include <cmath>
#include <cstddef>

namespace tcgemm::bench {
namespace {

// Bytes from entry 0 of an operand to entry `entry`.
std::size_t entry_offset(std::int64_t stride, DType dtype, std::int64_t entry) {
  return static_cast<std::size_t>(entry * stride) * size_of(dtype);
}

const void* entry_pointer(const MatrixRef& ref, std::int64_t entry) {
  return static_cast<const std::byte*>(ref.ptr) + entry_offset(ref.stride, ref.dtype, entry);
}

void* entry_pointer(const MutableMatrixRef& ref, std::int64_t entry) {
  return static_cast<std::byte*>(ref.ptr) + entry_offset(ref.stride, ref.dtype, entry);
}

// rel_fro `candidate` is worse than `current`: larger, or NaN where current is not.
bool worse(double candidate, double current) {
  if (std::isnan(current)) return false;
  return std::isnan(candidate) || candidate > current;
}

}  // namespace

GemmArgs batch_entry(const GemmArgs& args, std::int64_t entry) {
  GemmArgs one = args;
  one.a.ptr = entry_pointer(args.a, entry);
  one.b.ptr = entry_pointer(args.b, entry);
  one.c.ptr = entry_pointer(args.c, entry);
  one.batch_count = 1;
  return one;
}

void add_entry(BatchErrorStats& batch, const testing::ErrorStats& stats, std::int64_t entry) {
  if (batch.rel_fro_entry < 0 || worse(stats.rel_fro, batch.rel_fro)) {
    batch.rel_fro = stats.rel_fro;
    batch.rel_fro_entry = entry;
  }
  // max_row < 0: every element of the entry was non-finite, so it has no max_abs.
  if (stats.max_row >= 0 && (batch.max_abs_entry < 0 || stats.max_abs > batch.max_abs)) {
    batch.max_abs = stats.max_abs;
    batch.max_row = stats.max_row;
    batch.max_col = stats.max_col;
    batch.max_abs_entry = entry;
  }
  batch.nonfinite += stats.nonfinite;
  batch.mismatches += stats.mismatches;
}

}  // namespace tcgemm::bench
