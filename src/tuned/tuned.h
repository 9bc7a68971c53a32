// The tuned table: the production family's measured best Choice for exact
// problems on exact GPUs, written by tcgemm-tune (docs/tuning.md) into
// data/tuned/<gpu>.json and embedded in the library at configure time
// (cmake/tuned_table.cmake generates a constexpr array of Entry from those
// files; no JSON parser at run time). The dispatcher asks it first and falls
// back on the heuristic (prod::select) for every problem it does not hold.
// Plain C++ apart from lookup_current_device(); the key matching is
// unit-tested on the CPU (tests/host/test_tuned.cpp).
#pragma once

#include <tcgemm/tcgemm.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/prod/problem.h"

namespace tcgemm::tuned {

// One row of the table: the problem (as the caller passes it) and the choice
// measured fastest for it.
struct Entry {
  std::string_view device;   // cudaDeviceProp::name of the GPU it was measured on
  DType in = DType::kBF16;   // A and B
  DType out = DType::kBF16;  // C
  Layout a = Layout::kRowMajor;
  Layout b = Layout::kColMajor;
  Layout c = Layout::kColMajor;
  // How canonicalize() feeds the caller's A and B (repacked when not
  // TMA-aligned) and which epilogue it gives C: ld, base and stride
  // alignment are part of the key through these.
  prod::OperandPath a_path = prod::OperandPath::kTma;
  prod::OperandPath b_path = prod::OperandPath::kTma;
  prod::EpiloguePath epilogue = prod::EpiloguePath::kTmaStore;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch_count = 1;
  std::string_view config;  // a prod::kConfigs name ("prod-128x256")
  int k_splits = 1;
  bool split_tail = false;  // the split covers the last wave only (prod::Choice::split_tail)
  bool flipped = false;     // the orientation opposite to C's layout (prod::Choice::flipped)
};

// The key of an entry, in the order the table is sorted by.
constexpr auto key(const Entry& e) {
  return std::tuple(e.device, e.in, e.out, e.a, e.b, e.c, e.m, e.n, e.k, e.batch_count, e.a_path,
                    e.b_path, e.epilogue);
}

constexpr bool key_less(const Entry& x, const Entry& y) { return key(x) < key(y); }

// The generated table's entries sorted by key (the generated source sorts at
// compile time).
template <std::size_t N>
constexpr std::array<Entry, N> sorted(std::array<Entry, N> entries) {
  std::sort(entries.begin(), entries.end(), key_less);
  return entries;
}

// False when two entries share a key: the generated source static_asserts
// it, so two files measuring the same problem on the same GPU fail the build.
template <std::size_t N>
constexpr bool keys_unique(const std::array<Entry, N>& sorted_entries) {
  for (std::size_t i = 1; i < N; ++i) {
    if (key(sorted_entries[i - 1]) == key(sorted_entries[i])) return false;
  }
  return true;
}

// How canonicalize(args) feeds the caller's A and B and stores C: the part of
// the key that carries alignment (ld, base pointer, batch stride, M % 8 for
// the TMA store). In the caller's terms: `a` is the caller's A also when a
// row-major C swaps the operands. Needs M, N, K >= 1.
struct OperandPaths {
  prod::OperandPath a = prod::OperandPath::kTma;
  prod::OperandPath b = prod::OperandPath::kTma;
  prod::EpiloguePath epilogue = prod::EpiloguePath::kTmaStore;

  constexpr bool operator==(const OperandPaths&) const = default;
};
OperandPaths operand_paths(const GemmArgs& args);

// The table embedded from data/tuned/*.json (generated source; empty when
// there are none), sorted by key.
std::span<const Entry> embedded_table();

// The index of `name` in prod::kConfigs, or nullopt.
std::optional<int> config_index(std::string_view name);

// The name of the small-M path's registry kernel as a table entry's config:
// the problem measured fastest on it, not on a prod::kConfigs row.
inline constexpr std::string_view kSkinnyKernel = "prod-skinny";

// The entry `table` (sorted by key) holds for `args` on the GPU named
// `device_name` (the match lookup() describes), or nullptr.
const Entry* find(std::span<const Entry> table, std::string_view device_name, const GemmArgs& args);

// The choice `table` (sorted by key) holds for `args` on the GPU named
// `device_name`: an exact match on device name, input and output dtype, the
// layouts of A, B and C, M, N, K, batch_count, and the operand paths and
// epilogue canonicalize(args) gives. nullopt when there is none, or when the
// entry names a config no longer in prod::kConfigs (kSkinnyKernel included:
// no tile choice was fastest) or a k_splits below 1.
// `args` must have passed validate() with M, N, K >= 1. A binary search on
// the key; canonicalize() runs only when the sizes match.
std::optional<prod::Choice> lookup(std::span<const Entry> table, std::string_view device_name,
                                   const GemmArgs& args);

// lookup() in the embedded table.
std::optional<prod::Choice> lookup(std::string_view device_name, const GemmArgs& args);

// A table that lookup_current_device() asks before the embedded one, for
// tools that time what the library would run with a table not yet embedded
// (tcgemm-bench --tuned-table FILE; docs/tuning.md). Set it before any GEMM
// is dispatched, from one thread: lookups do not lock it. `entries` need not
// be sorted; the strings their views point at must outlive every lookup.
// An empty vector removes the override.
void set_table_override(std::vector<Entry> entries);
std::span<const Entry> table_override();

// lookup() for the current CUDA device (cudaGetDevice): in the override
// table first, then in the embedded one. The device's name is read once per
// device ordinal (cudaGetDeviceProperties), thread-safely; with both tables
// empty no CUDA call is made. nullopt when the device cannot be queried (the
// runtime's last error is then cleared), and for a call an SM budget limits
// (args.sm_count below the device's SM count: the table's times are of the
// whole device).
std::optional<prod::Choice> lookup_current_device(const GemmArgs& args);

}  // namespace tcgemm::tuned
