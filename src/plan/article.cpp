#include "plan/article.h"

#include <algorithm>
#include <array>

namespace tcgemm::plan {
namespace {

using i64 = std::int64_t;

// Tables 1-3 exactly as the article prints them (columns MMA_M, MMA_N, MMA_K,
// MMA per warp, Block per MP, Thread per block, Warp per block, Reg per block,
// Local mem per block, feasibility).
constexpr std::array<ArticleRow, 9> kTable1{{
    {16, 16, 16, 8, 1, 1024, 8, 22528, 8192, true},
    {16, 16, 16, 8, 2, 1024, 8, 22528, 8192, true},
    {16, 16, 16, 8, 3, 1024, 8, 22528, 8192, true},
    {16, 16, 16, 8, 4, 1024, 8, 22528, 8192, true},
    {16, 16, 16, 8, 5, 1024, 8, 22528, 8192, false},
    {16, 16, 16, 8, 6, 1024, 8, 22528, 8192, false},
    {16, 16, 16, 8, 12, 512, 4, 14336, 6144, false},
    {16, 16, 16, 8, 24, 256, 2, 10240, 4096, false},
    {16, 16, 16, 8, 48, 128, 1, 8192, 3072, false},
}};
constexpr std::array<ArticleRow, 9> kTable2{{
    {32, 32, 16, 4, 1, 1024, 8, 38912, 16384, true},
    {32, 32, 16, 4, 2, 1024, 8, 38912, 16384, true},
    {32, 32, 16, 4, 3, 1024, 8, 38912, 16384, false},
    {32, 32, 16, 4, 4, 1024, 8, 38912, 16384, false},
    {32, 32, 16, 4, 5, 1024, 8, 38912, 16384, false},
    {32, 32, 16, 4, 6, 1024, 8, 38912, 16384, false},
    {32, 32, 16, 4, 12, 512, 4, 22528, 8192, false},
    {32, 32, 16, 4, 24, 256, 2, 14336, 4096, false},
    {32, 32, 16, 4, 48, 128, 1, 10240, 2048, false},
}};
constexpr std::array<ArticleRow, 1> kTable3{{
    {32, 32, 16, 8, 1, 1024, 8, 77824, 16384, true},
}};

constexpr std::array<ArticleTable, 3> kTables{{
    {1, "8 MMAs of 16x16x16 per warp", 4, 2, 32, kTable1},
    {2, "4 MMAs of 32x32x16 per warp", 2, 2, 16, kTable2},
    {3, "the configuration finally chosen: 8 MMAs of 32x32x16 per warp", 4, 2, 16, kTable3},
}};

constexpr i64 kUnitBytes = 2;       // the Local mem column counts 2-byte units
constexpr i64 kFloatUnits = 4 / 2;  // an fp32 C element is two of those units

}  // namespace

std::span<const ArticleTable> article_tables() { return kTables; }

ArticleInputs article_inputs(const ArticleTable& table, const ArticleRow& row) {
  return {row.mma_m,         row.mma_n,         row.mma_k,  table.warp_mmas_m,
          table.warp_mmas_n, row.blocks_per_mp, table.depth};
}

TileConfig article_tile_config(const DeviceSpec& spec, const ArticleInputs& in) {
  TileConfig c;
  c.mma_m = in.mma_m;
  c.mma_n = in.mma_n;
  c.mma_k = in.mma_k;
  c.warp_mmas_m = in.warp_mmas_m;
  c.warp_mmas_n = in.warp_mmas_n;
  c.blocks_per_sm = in.blocks_per_mp;
  // The article gives each block as many threads as the per-MP thread limit
  // leaves, up to the per-block limit, in whole warps.
  const int share = spec.max_threads_per_sm / in.blocks_per_mp / spec.warp_size * spec.warp_size;
  const int threads = std::min(spec.max_threads_per_block, share);
  arrange_warps(c, std::max(1, threads / spec.warp_size));
  c.stages = 1;
  c.bk = in.depth;
  c.c_stage_tiles = 1;  // each warp stages one MMA tile of C (the final code's result[])
  c.c_union = true;
  c.a_frags = 1;  // the text's load order: one A fragment, all of the warp's B
  c.b_frags = -1;
  return c;
}

ArticleFigures article_figures(const DeviceSpec& spec, const ArticleInputs& in) {
  const TileConfig c = article_tile_config(spec, in);
  ArticleFigures f;
  f.mma_per_warp = c.mmas_per_warp();
  f.warps_per_block = c.warps();
  f.threads_per_block = f.warps_per_block * spec.warp_size;
  f.bm = c.bm();
  f.bn = c.bn();

  const i64 w = f.warps_per_block;
  const i64 mpw = c.mmas_per_warp();
  const i64 acc_per_warp = mpw * in.mma_m * in.mma_n;
  const i64 ab_per_warp =
      i64{c.a_frags} * in.mma_m * in.mma_k + i64{c.live_b_frags()} * in.mma_k * in.mma_n;
  f.reg_per_block = w * acc_per_warp + mpw * ab_per_warp;
  f.reg_text = w * (acc_per_warp + ab_per_warp);

  const i64 ab_units = i64{in.depth} * (f.bm + f.bn);
  const i64 c_units = w * in.mma_m * in.mma_n * kFloatUnits;
  f.local_mem = std::max(ab_units, c_units);

  const i64 blocks = in.blocks_per_mp;
  f.feasible = blocks * f.reg_per_block <= spec.regs_per_sm &&
               blocks * f.local_mem * kUnitBytes <= spec.smem_per_sm &&
               blocks * f.threads_per_block <= spec.max_threads_per_sm;
  return f;
}

bool matches(const ArticleFigures& f, const ArticleRow& row) {
  return f.mma_per_warp == row.mma_per_warp && f.threads_per_block == row.threads_per_block &&
         f.warps_per_block == row.warps_per_block && f.reg_per_block == row.reg_per_block &&
         f.local_mem == row.local_mem && f.feasible == row.feasible;
}

std::vector<int> depths_reproducing(const DeviceSpec& spec, const ArticleTable& table,
                                    std::span<const int> candidates) {
  std::vector<int> good;
  for (int depth : candidates) {
    const bool all =
        std::all_of(table.published.begin(), table.published.end(), [&](const ArticleRow& row) {
          ArticleInputs in = article_inputs(table, row);
          in.depth = depth;
          return matches(article_figures(spec, in), row);
        });
    if (all) good.push_back(depth);
  }
  return good;
}

}  // namespace tcgemm::plan
