// The S4000 article's feasibility tables (shared/seeds/s4000-wmma-hgemm.zh.txt,
// section 3.1, tables 1-3) as published, and the spreadsheet convention that
// reproduces them, reverse-engineered from the rows (docs/planner.md derives
// it). The published numbers are kept only to compare against: every figure
// the CLI prints for the article is computed by article_figures().
//
// The convention, per row (elements, not bytes, unless said):
//   threads/block = min(1024, 6144 / blocks per MP), warps = threads / 128
//   Reg/block     = warps * MPW * M*N                 (fp32 accumulators)
//                 + MPW * (M*K + WTN * K*N)           (1 A + WTN B fragments,
//                   one register per fp16 element, multiplied by MMA per warp,
//                   not by warps per block)
//   Local mem     = max(depth * (BM + BN), warps * M*N * 2)   in 2-byte units:
//                   A/B slabs of `depth` K (fp16), in a union with one fp32 MMA
//                   tile per warp of C staging (2 units per float)
//   feasible      = blocks * Reg <= 131072 and blocks * 2 * Local <= 73728
//                   (and blocks * threads <= 6144, true by construction)
// with MPW = MMA per warp = WTM * WTN (the warp's MMA grid, 4x2 in tables 1
// and 3, 2x2 in table 2), BM x BN the most nearly square arrangement of the
// warps, and depth = 32 for table 1, 16 for tables 2 and 3: no one depth
// reproduces all three tables (see depths_reproducing).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "plan/device_spec.h"
#include "plan/planner.h"

namespace tcgemm::plan {

// One row as printed in the article.
struct ArticleRow {
  int mma_m, mma_n, mma_k;
  int mma_per_warp;
  int blocks_per_mp;
  int threads_per_block;
  int warps_per_block;
  int reg_per_block;
  int local_mem;  // the article's "Local mem per block" column
  bool feasible;
};

struct ArticleTable {
  int number;                    // 1, 2, 3
  std::string_view caption;      // translated from the article
  int warp_mmas_m, warp_mmas_n;  // the warp's MMA grid (WARP_TILE_M x WARP_TILE_N)
  int depth;                     // K depth of the A/B slabs that reproduces the table
  std::span<const ArticleRow> published;
};

std::span<const ArticleTable> article_tables();

// The inputs of one row.
struct ArticleInputs {
  int mma_m, mma_n, mma_k;
  int warp_mmas_m, warp_mmas_n;
  int blocks_per_mp;
  int depth;
};

ArticleInputs article_inputs(const ArticleTable& table, const ArticleRow& row);

// One row by the article's spreadsheet convention.
struct ArticleFigures {
  int mma_per_warp = 0;
  int threads_per_block = 0;
  int warps_per_block = 0;
  int bm = 0, bn = 0;
  std::int64_t reg_per_block = 0;  // the spreadsheet's Reg per block
  std::int64_t reg_text = 0;       // the text's worked formula, (C + A + B per warp) x warps
  std::int64_t local_mem = 0;      // 2-byte units
  bool feasible = false;
};

// `spec` supplies the limits (the article's: s4000()).
ArticleFigures article_figures(const DeviceSpec& spec, const ArticleInputs& in);

// The same row as a TileConfig for plan(): the physical model (fp16 packed two
// per register, per-thread = per-warp / warp size, allocation granularity).
TileConfig article_tile_config(const DeviceSpec& spec, const ArticleInputs& in);

// Whether the row's figures equal the published ones (every column).
bool matches(const ArticleFigures& figures, const ArticleRow& row);

// The depths (among `candidates`) with which every row of `table` reproduces.
std::vector<int> depths_reproducing(const DeviceSpec& spec, const ArticleTable& table,
                                    std::span<const int> candidates);

}  // namespace tcgemm::plan
