// The feasibility planner (src/plan/): the built-in device specs, the S4000
// article's tables 1-3 reproduced row for row by its spreadsheet convention,
// the physical register counts beside them, every limit exactly at its edge,
// and the planner's shared-memory and register figures against code: the
// Hopper ladder's k07 SharedStorage and ptxas's report for a WMMA probe kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "plan/article.h"
#include "plan/device_spec.h"
#include "plan/planner.h"
#include "ptxas_probe/probe_config.h"

namespace {

using namespace tcgemm::plan;

// The plan's check of `limit`; a failure (and a check that is not ok) when
// the plan has none, rather than a read past its checks.
const LimitCheck& check_of(const Plan& p, Limit limit) {
  const auto it = std::find_if(p.checks.begin(), p.checks.end(),
                               [&](const LimitCheck& c) { return c.limit == limit; });
  if (it == p.checks.end()) {
    ADD_FAILURE() << "the plan has no check of limit " << static_cast<int>(limit);
    static const LimitCheck kMissing{limit, "missing", 0, 0, false, ""};
    return kMissing;
  }
  return *it;
}

std::vector<Limit> failed(const Plan& p) {
  std::vector<Limit> limits;
  for (const LimitCheck& c : p.checks) {
    if (!c.ok) limits.push_back(c.limit);
  }
  return limits;
}

// A block with little of anything: one warp, one 16x16x16 MMA, no C staging.
TileConfig tiny() {
  TileConfig c;
  c.warp_mmas_m = 1;
  c.warp_mmas_n = 1;
  c.warps_m = 1;
  c.warps_n = 1;
  c.c_stage_tiles = 0;
  return c;
}

// ---- device specs -------------------------------------------------------------

TEST(DeviceSpec, S4000IsTheArticlesMp22) {
  const DeviceSpec& d = s4000();
  EXPECT_EQ(d.warp_size, 128);
  EXPECT_EQ(d.regs_per_sm, 131072);
  EXPECT_EQ(d.smem_per_sm, 73728);
  EXPECT_EQ(d.max_threads_per_sm, 6144);
  EXPECT_EQ(d.max_threads_per_block, 1024);
  EXPECT_EQ(d.max_regs_per_thread, 256);
  EXPECT_FALSE(d.unverified.empty());
}

TEST(DeviceSpec, S4000Gives256RegistersAt512ThreadsAnd128At1024) {
  EXPECT_EQ(max_regs_per_thread_at(s4000(), 512), 256);
  EXPECT_EQ(max_regs_per_thread_at(s4000(), 1024), 128);
  EXPECT_EQ(max_regs_per_thread_at(s4000(), 128), 256);
}

TEST(DeviceSpec, H100AndH200AreSm90) {
  for (const DeviceSpec* d : {&h100(), &h200()}) {
    EXPECT_EQ(d->warp_size, 32);
    EXPECT_EQ(d->regs_per_sm, 65536);
    EXPECT_EQ(d->max_regs_per_block, 65536);
    EXPECT_EQ(d->max_regs_per_thread, 255);
    EXPECT_EQ(d->reg_alloc_unit, 256);
    EXPECT_EQ(d->reg_sub_partitions, 4);
    EXPECT_EQ(d->smem_per_sm, 233472);         // 228 KB
    EXPECT_EQ(d->smem_per_block_max, 232448);  // 227 KB
    EXPECT_EQ(d->smem_reserved_per_block, 1024);
    EXPECT_EQ(d->smem_alloc_unit, 128);
    EXPECT_EQ(d->max_threads_per_sm, 2048);
    EXPECT_EQ(d->max_threads_per_block, 1024);
    EXPECT_EQ(d->max_blocks_per_sm, 32);
    EXPECT_TRUE(d->unverified.empty());
  }
}

// __launch_bounds__(384, 1) makes ptxas cap the Hopper ladder's kernels at
// 168 registers: 65536 / 12 warps = 5461 per warp, 5376 in units of 256.
TEST(DeviceSpec, Sm90RegisterCapFollowsAllocationUnit) {
  EXPECT_EQ(max_regs_per_thread_at(h200(), 384), 168);
  EXPECT_EQ(max_regs_per_thread_at(h200(), 1024), 64);
  EXPECT_EQ(max_regs_per_thread_at(h200(), 256), 255);
  EXPECT_EQ(max_regs_per_thread_at(h200(), 32), 255);
}

TEST(DeviceSpec, FindsBuiltinsByName) {
  EXPECT_EQ(find_device("s4000"), &s4000());
  EXPECT_EQ(find_device("h100"), &h100());
  EXPECT_EQ(find_device("h200"), &h200());
  EXPECT_EQ(find_device("a100"), nullptr);
  EXPECT_EQ(builtin_devices().size(), 3u);
}

// ---- the article's tables -------------------------------------------------------

TEST(ArticleTables, HaveTheirPublishedRowCounts) {
  const auto tables = article_tables();
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[0].published.size(), 9u);
  EXPECT_EQ(tables[1].published.size(), 9u);
  EXPECT_EQ(tables[2].published.size(), 1u);
}

TEST(ArticleTables, EveryRowReproducedIncludingFeasibility) {
  for (const ArticleTable& table : article_tables()) {
    int r = 0;
    for (const ArticleRow& row : table.published) {
      ++r;
      SCOPED_TRACE("table " + std::to_string(table.number) + " row " + std::to_string(r));
      const ArticleFigures f = article_figures(s4000(), article_inputs(table, row));
      EXPECT_EQ(f.mma_per_warp, row.mma_per_warp);
      EXPECT_EQ(f.threads_per_block, row.threads_per_block);
      EXPECT_EQ(f.warps_per_block, row.warps_per_block);
      EXPECT_EQ(f.reg_per_block, row.reg_per_block);
      EXPECT_EQ(f.local_mem, row.local_mem);
      EXPECT_EQ(f.feasible, row.feasible);
      EXPECT_TRUE(matches(f, row));
    }
  }
}

// The printed TRUE/FALSE columns, spelled out, so that a change to the
// published data cannot silently agree with a change to the formula.
TEST(ArticleTables, FeasibilityColumnsAsPrinted) {
  const auto verdicts = [](const ArticleTable& t) {
    std::vector<bool> v;
    for (const ArticleRow& row : t.published) {
      v.push_back(article_figures(s4000(), article_inputs(t, row)).feasible);
    }
    return v;
  };
  const auto tables = article_tables();
  EXPECT_EQ(verdicts(tables[0]),
            (std::vector<bool>{true, true, true, true, false, false, false, false, false}));
  EXPECT_EQ(verdicts(tables[1]),
            (std::vector<bool>{true, true, false, false, false, false, false, false, false}));
  EXPECT_EQ(verdicts(tables[2]), (std::vector<bool>{true}));
}

// Table 1's local memory needs A/B slabs 32 deep in K, table 2's rows 8-9
// need 16: the article's spreadsheet did not use one depth for all tables,
// and neither reproduces the text's "4 K steps at once" (depth 64).
TEST(ArticleTables, NoSingleSlabDepthReproducesAllThree) {
  const int candidates[] = {16, 32, 48, 64};
  const auto tables = article_tables();
  EXPECT_EQ(depths_reproducing(s4000(), tables[0], candidates), (std::vector<int>{32}));
  EXPECT_EQ(depths_reproducing(s4000(), tables[1], candidates), (std::vector<int>{16}));
  EXPECT_EQ(depths_reproducing(s4000(), tables[2], candidates), (std::vector<int>{16, 32}));
}

// The text's worked example, (2048 + 256 + 512) x 8 warps, scales the A/B
// term with the warps; the spreadsheet scales it with MMA per warp. They
// agree exactly where the two are equal (8 and 8 in tables 1 and 3, 4 and 4
// in table 2's 12-block row).
TEST(ArticleTables, TextFormulaAgreesOnlyWhereWarpsEqualMmaPerWarp) {
  for (const ArticleTable& table : article_tables()) {
    for (const ArticleRow& row : table.published) {
      const ArticleFigures f = article_figures(s4000(), article_inputs(table, row));
      EXPECT_EQ(f.reg_text == f.reg_per_block, f.warps_per_block == f.mma_per_warp)
          << "table " << table.number << ", " << row.blocks_per_mp << " blocks";
    }
  }
  const ArticleFigures first = article_figures(
      s4000(), article_inputs(article_tables()[0], article_tables()[0].published[0]));
  EXPECT_EQ(first.reg_text, (2048 + 256 + 512) * 8);
}

// Physical registers: fp32 accumulators one per register, fp16 two per
// register, a warp's fragments spread over 128 lanes.
//   table 1: (8*16*16 + (16*16 + 2*16*16)/2) / 128 = (2048 + 384) / 128 = 19
//   table 2: (4*32*32 + (32*16 + 2*16*32)/2) / 128 = (4096 + 768) / 128 = 38
//   table 3: (8*32*32 + 768) / 128 = 70
TEST(ArticleTables, PhysicalRegistersPackFp16TwoPerRegister) {
  const auto tables = article_tables();
  const auto physical = [](const ArticleTable& t, const ArticleRow& row) {
    return plan(s4000(), article_tile_config(s4000(), article_inputs(t, row)));
  };
  const Plan t1 = physical(tables[0], tables[0].published[0]);
  EXPECT_EQ(t1.acc_regs, 16);
  EXPECT_EQ(t1.a_regs, 1);
  EXPECT_EQ(t1.b_regs, 2);
  EXPECT_EQ(t1.fragment_regs, 19);
  EXPECT_EQ(t1.regs_per_block, 19 * 1024);
  EXPECT_EQ(physical(tables[0], tables[0].published[8]).regs_per_block, 19 * 128);
  const Plan t2 = physical(tables[1], tables[1].published[0]);
  EXPECT_EQ(t2.fragment_regs, 38);
  EXPECT_EQ(t2.regs_per_block, 38912);  // equal to the article's, by coincidence
  EXPECT_EQ(physical(tables[1], tables[1].published[6]).regs_per_block, 38 * 512);
  const Plan t3 = physical(tables[2], tables[2].published[0]);
  EXPECT_EQ(t3.fragment_regs, 70);
  EXPECT_EQ(t3.regs_per_block, 71680);
  EXPECT_LE(t3.fragment_regs, t3.max_regs_per_thread);  // 128 at 1024 threads
}

// The corrected registers change no verdict: every infeasible row is ruled
// out by shared memory, and the physical shared memory is twice the
// article's 2-byte units.
TEST(ArticleTables, PhysicalVerdictsAgreeAndSharedMemoryBinds) {
  for (const ArticleTable& table : article_tables()) {
    for (const ArticleRow& row : table.published) {
      const ArticleInputs in = article_inputs(table, row);
      const ArticleFigures f = article_figures(s4000(), in);
      const Plan p = plan(s4000(), article_tile_config(s4000(), in));
      SCOPED_TRACE("table " + std::to_string(table.number) + ", " +
                   std::to_string(row.blocks_per_mp) + " blocks");
      EXPECT_EQ(p.fits, f.feasible);
      EXPECT_EQ(p.smem_block, 2 * f.local_mem);
      EXPECT_EQ(p.threads_per_block, f.threads_per_block);
      if (!p.fits) {
        EXPECT_FALSE(check_of(p, Limit::kSmemPerSm).ok);
      }
    }
  }
}

// The article's final kernel (its complete code): BATCH 4, OFFSET 2. Table 3
// says 16384 units = 32768 B; the code declares twice that.
TEST(ArticleTables, FinalKernelSharedMemoryIsTheCodesUnion) {
  TileConfig c;
  c.mma_m = c.mma_n = 32;
  c.mma_k = 16;
  c.bk = 64;
  c.pad_a = 2;
  const Plan p = plan(s4000(), c);
  // half a[4][16][256 + 2]; half b[4][256][16]; float result[2*4*32*32]
  EXPECT_EQ(p.smem_block, (4 * 16 * 258 + 4 * 256 * 16) * 2);
  EXPECT_EQ(p.smem_block, 65792);
  EXPECT_EQ(p.smem_c, 8192 * 4);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.max_blocks_per_sm, 1);
}

// ---- the planner at its limits --------------------------------------------------

TEST(Planner, ArrangesWarpsSquarest) {
  TileConfig c;  // 4x2 MMAs of 16x16: a 64x32 warp tile
  arrange_warps(c, 8);
  EXPECT_EQ(c.bm(), 128);
  EXPECT_EQ(c.bn(), 128);
  arrange_warps(c, 2);
  EXPECT_EQ(c.bm() + c.bn(), 128);
  arrange_warps(c, 1);
  EXPECT_EQ(c.warps_m * c.warps_n, 1);
}

TEST(Planner, ValidateRefusesNonsense) {
  TileConfig c;
  EXPECT_FALSE(validate(c).has_value());
  c.mma_m = 0;
  EXPECT_TRUE(validate(c).has_value());
  c = TileConfig{};
  c.b_frags = -2;
  EXPECT_TRUE(validate(c).has_value());
  c = TileConfig{};
  c.smem_align = 1000;
  EXPECT_TRUE(validate(c).has_value());
  c = TileConfig{};
  c.warps_m = 1 << 20;
  EXPECT_TRUE(validate(c).has_value());
  // Fields each in range whose products would wrap plan()'s arithmetic: a
  // 2^32-byte fragment per thread read as 0 registers, a 2^63-byte stage
  // ring as negative (and both "fit").
  c = TileConfig{};
  c.mma_m = 4096;
  c.mma_n = 1;
  c.mma_k = 2048;
  c.warp_mmas_m = c.warp_mmas_n = c.warps_m = c.warps_n = 1;
  c.ab_bytes = 1;
  c.a_frags = 65536;
  ASSERT_TRUE(validate(c).has_value());
  EXPECT_NE(validate(c)->find("register fragments"), std::string::npos) << *validate(c);
  c = TileConfig{};
  c.mma_m = 2048;
  c.mma_n = c.mma_k = 1;
  c.warp_mmas_m = c.warp_mmas_n = 1;
  c.warps_m = 32;
  c.warps_n = 1;
  c.stages = c.bk = c.pad_a = 65536;
  c.ab_bytes = 16384;
  c.a_frags = c.b_frags = c.c_stage_tiles = 0;
  ASSERT_TRUE(validate(c).has_value());
  EXPECT_NE(validate(c)->find("shared memory"), std::string::npos) << *validate(c);
  // Every field at its largest accepted value with small products elsewhere
  // still plans: the bounds refuse only what could never fit.
  c = TileConfig{};
  c.stages = 64;
  c.bk = 1024;
  EXPECT_FALSE(validate(c).has_value());
  EXPECT_FALSE(plan(s4000(), c).fits);
}

// A slab holds whole MMAs along K: BK is BATCH x MMA_K.
TEST(Planner, SlabDepthIsAMultipleOfTheMmaK) {
  TileConfig c = TileConfig{};
  c.mma_k = 16;
  c.bk = 64;
  EXPECT_FALSE(validate(c).has_value());
  for (const int bk : {1, 7, 24, 72}) {
    c.bk = bk;
    ASSERT_TRUE(validate(c).has_value()) << "bk " << bk;
    EXPECT_NE(validate(c)->find("bk must be a multiple of mma_k"), std::string::npos)
        << *validate(c);
  }
}

TEST(Planner, ThreadsPerSmExactlyAtLimitFits) {
  TileConfig c = tiny();
  c.warps_m = 8;  // 8 warps of 128 = 1024 threads
  c.blocks_per_sm = 6;
  const Plan at = plan(s4000(), c);
  EXPECT_EQ(at.threads_per_sm, 6144);
  EXPECT_TRUE(at.fits) << at.reason;
  c.blocks_per_sm = 7;
  const Plan over = plan(s4000(), c);
  EXPECT_FALSE(over.fits);
  EXPECT_EQ(failed(over), std::vector<Limit>{Limit::kThreadsPerSm});
  EXPECT_EQ(at.max_blocks_per_sm, 6);
}

TEST(Planner, ThreadsPerBlockExactlyAtLimitFits) {
  TileConfig c = tiny();
  c.warps_m = 8;
  EXPECT_TRUE(plan(s4000(), c).fits);
  c.warps_m = 9;  // 1152 threads
  const Plan over = plan(s4000(), c);
  EXPECT_EQ(failed(over), std::vector<Limit>{Limit::kThreadsPerBlock});
  EXPECT_EQ(over.max_blocks_per_sm, 0);
}

TEST(Planner, SharedMemoryExactlyAtS4000LimitFits) {
  // A = (16 + pad) * 16 * 2, B = 16 * 16 * 2 = 512: pad 2272 makes 73728.
  TileConfig c = tiny();
  c.pad_a = 2272;
  const Plan at = plan(s4000(), c);
  EXPECT_EQ(at.smem_block, 73728);
  EXPECT_TRUE(at.fits) << at.reason;
  c.pad_a = 2273;
  const Plan over = plan(s4000(), c);
  EXPECT_EQ(over.smem_block, 73728 + 32);
  EXPECT_EQ(failed(over), (std::vector<Limit>{Limit::kSmemPerBlock, Limit::kSmemPerSm}));
}

TEST(Planner, SharedMemoryExactlyAtSm90BlockLimitFits) {
  // 227 KB declared + 1 KB reserved = 228 KB: one block fills the SM.
  TileConfig c = tiny();
  c.pad_a = 7232;  // (16 + 7232) * 32 + 512 = 232448
  const Plan at = plan(h200(), c);
  EXPECT_EQ(at.smem_block, 232448);
  EXPECT_EQ(at.smem_alloc, 233472);
  EXPECT_TRUE(at.fits) << at.reason;
  EXPECT_EQ(at.max_blocks_per_sm, 1);
  c.pad_a = 7233;
  const Plan over = plan(h200(), c);
  EXPECT_FALSE(over.fits);
  EXPECT_EQ(failed(over), (std::vector<Limit>{Limit::kSmemPerBlock, Limit::kSmemPerSm}));
}

// What a block takes from the SM: its declaration plus the 1 KB the driver
// reserves, in 128-byte units.
TEST(Planner, Sm90SharedMemoryCountsReservationAndUnit) {
  TileConfig c = tiny();
  c.pad_a = 1;  // A = 17 * 16 * 2 = 544, B = 512: 1056 + 1024 = 2080 -> 2176
  const Plan p = plan(h200(), c);
  EXPECT_EQ(p.smem_block, 1056);
  EXPECT_EQ(p.smem_alloc, 2176);
}

TEST(Planner, RegistersPerThreadExactlyAtLimitFits) {
  TileConfig c = tiny();  // 8 + 4 + 4 = 16 fragment registers on a 32-lane warp
  c.overhead_regs = 255 - 16;
  const Plan at = plan(h200(), c);
  EXPECT_EQ(at.fragment_regs, 16);
  EXPECT_EQ(at.regs_per_thread, 255);
  EXPECT_TRUE(at.fits) << at.reason;
  c.overhead_regs += 1;
  const Plan over = plan(h200(), c);
  EXPECT_EQ(failed(over), std::vector<Limit>{Limit::kRegsPerThread});
}

TEST(Planner, RegistersPerBlockRoundToTheAllocationUnit) {
  TileConfig c = tiny();
  c.warps_m = 32;  // 1024 threads
  c.overhead_regs = 64 - 16;
  const Plan at = plan(h200(), c);
  EXPECT_EQ(at.regs_per_warp, 2048);
  EXPECT_EQ(at.regs_per_block, 65536);
  EXPECT_TRUE(at.fits) << at.reason;
  c.overhead_regs += 1;  // 65 registers: 2080 per warp, allocated as 2304
  const Plan over = plan(h200(), c);
  EXPECT_EQ(over.regs_per_warp, 2304);
  EXPECT_EQ(over.max_regs_per_thread, 64);
  EXPECT_EQ(failed(over),
            (std::vector<Limit>{Limit::kRegsPerThread, Limit::kRegsPerBlock, Limit::kRegsPerSm}));
}

TEST(Planner, RegistersPerSmExactlyAtLimitFits) {
  // 8 warps of 128 lanes at 32 registers: 32768 per block, 4 blocks fill it.
  TileConfig c = tiny();
  c.warps_m = 8;
  c.overhead_regs = 32 - 4;  // s4000 fragments: 2 + 1 + 1
  c.blocks_per_sm = 4;
  const Plan at = plan(s4000(), c);
  EXPECT_EQ(at.regs_per_block, 32768);
  EXPECT_TRUE(at.fits) << at.reason;
  c.overhead_regs += 1;
  const Plan over = plan(s4000(), c);
  EXPECT_EQ(failed(over), std::vector<Limit>{Limit::kRegsPerSm});
}

// 1-warp blocks at 192 registers: 6144 per warp; 9 blocks need 55296 of
// 65536, but each sub-partition (16384) holds only 2 such warps: 8 blocks.
TEST(Planner, RegistersAreAllocatedPerSubPartition) {
  TileConfig c = tiny();
  c.overhead_regs = 192 - 16;
  c.blocks_per_sm = 8;
  EXPECT_TRUE(plan(h200(), c).fits);
  c.blocks_per_sm = 9;
  const Plan over = plan(h200(), c);
  EXPECT_EQ(failed(over), std::vector<Limit>{Limit::kRegsPerSm});
  EXPECT_LE(check_of(over, Limit::kRegsPerSm).need, 65536);
  EXPECT_NE(over.reason.find("sub-partition"), std::string::npos) << over.reason;
  EXPECT_EQ(over.max_blocks_per_sm, 8);
}

TEST(Planner, BlocksPerSmExactlyAtLimitFits) {
  TileConfig c = tiny();
  c.blocks_per_sm = 32;
  EXPECT_TRUE(plan(h200(), c).fits);
  c.blocks_per_sm = 33;
  EXPECT_EQ(failed(plan(h200(), c)), std::vector<Limit>{Limit::kBlocksPerSm});
}

// ---- the planner against code -----------------------------------------------------

// src/kernels/hopper/k07_ptx_mbarrier.cu's SharedStorage<bf16>, member for
// member: 4 stages of A (128x64) and B (256x64), full and empty mbarriers per
// stage, aligned to 1024 (and kSmemBytes adds 1024 to align the dynamic base).
struct alignas(1024) K07SharedStorageMirror {
  std::uint16_t a[4][128 * 64];
  std::uint16_t b[4][256 * 64];
  std::uint64_t full[4];
  std::uint64_t empty[4];
};

TileConfig hopper_k07() {
  TileConfig c;
  // Two consumer warpgroups of wgmma m64n256k16: 8 warps, each owning 16
  // rows of 256 accumulators; one producer warpgroup (4 warps) without.
  c.mma_m = 16;
  c.mma_n = 256;
  c.mma_k = 16;
  c.warp_mmas_m = 1;
  c.warp_mmas_n = 1;
  c.warps_m = 8;
  c.warps_n = 1;
  c.extra_warps = 4;
  c.stages = 4;
  c.bk = 64;
  c.c_stage_tiles = 0;  // the epilogue writes from registers
  c.a_frags = 0;        // wgmma reads A and B from shared memory
  c.b_frags = 0;
  c.barriers_per_stage = 2;
  c.smem_align = 1024;
  return c;
}

TEST(Planner, HopperK07SharedMemoryMatchesItsSharedStorage) {
  const Plan p = plan(h200(), hopper_k07());
  EXPECT_EQ(p.bm, 128);
  EXPECT_EQ(p.bn, 256);
  EXPECT_EQ(p.threads_per_block, 384);
  EXPECT_EQ(p.smem_a + p.smem_b, 4 * (128 + 256) * 64 * 2);
  EXPECT_EQ(p.smem_barriers, 4 * 2 * 8);
  EXPECT_EQ(p.smem_block, static_cast<std::int64_t>(sizeof(K07SharedStorageMirror)) + 1024);
  EXPECT_EQ(p.smem_block, 198656);
  EXPECT_EQ(p.acc_regs, 128);  // 64x256 fp32 per warpgroup / 128 threads
  EXPECT_LE(p.fragment_regs, max_regs_per_thread_at(h200(), 384));  // 168
  EXPECT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.max_blocks_per_sm, 1);
}

struct PtxasEntry {
  int registers = -1;
  int smem = -1;
};

// ptxas -v: "Compiling entry function 'NAME' for 'sm_90a'" ... "Used N
// registers, used B barriers, S bytes smem, ...". The smem field is absent
// when the kernel declares none.
PtxasEntry parse_ptxas(const std::string& report, const std::string& kernel) {
  PtxasEntry entry;
  const std::string start = "Compiling entry function '" + kernel + "'";
  const std::size_t at = report.find(start);
  if (at == std::string::npos) return entry;
  const std::size_t next = report.find("Compiling entry function", at + start.size());
  const std::string section = report.substr(at, next == std::string::npos ? next : next - at);
  std::smatch m;
  if (std::regex_search(section, m, std::regex(R"(Used (\d+) registers)"))) {
    entry.registers = std::stoi(m[1].str());
  }
  entry.smem = 0;
  if (std::regex_search(section, m, std::regex(R"((\d+) bytes smem)"))) {
    entry.smem = std::stoi(m[1].str());
  }
  return entry;
}

TEST(Planner, ParsesPtxasReports) {
  const std::string report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 512 bytes smem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 400 bytes cmem[0]\n";
  EXPECT_EQ(parse_ptxas(report, "k1").registers, 40);
  EXPECT_EQ(parse_ptxas(report, "k1").smem, 512);
  EXPECT_EQ(parse_ptxas(report, "k2").registers, 168);
  EXPECT_EQ(parse_ptxas(report, "k2").smem, 0);
  EXPECT_EQ(parse_ptxas(report, "k3").registers, -1);
}

TileConfig probe_config() {
  namespace p = tcgemm::probe;
  TileConfig c;
  c.mma_m = p::kMmaM;
  c.mma_n = p::kMmaN;
  c.mma_k = p::kMmaK;
  c.warp_mmas_m = p::kWarpMmasM;
  c.warp_mmas_n = p::kWarpMmasN;
  c.warps_m = p::kWarpsM;
  c.warps_n = p::kWarpsN;
  c.bk = p::kBK;
  c.pad_a = p::kPadA;
  c.a_frags = 1;  // the probe's loop: one A fragment and one B fragment
  c.b_frags = 1;  // in flight per MMA, as the source is written
  return c;
}

// The build compiles tests/host/ptxas_probe/wmma_probe.cu with -Xptxas -v and
// keeps the report; the planner's shared memory for the same config must be
// what ptxas allocated, and its fragment registers a lower bound of what
// ptxas used (the compiler keeps more fragments live when it hoists loads).
TEST(Planner, WmmaProbeMatchesPtxasReport) {
  // Next to this binary (a build directory carried to another machine keeps
  // it), else where the build wrote it.
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  std::ifstream file;
  if (!error) file.open(self.parent_path() / TCGEMM_PTXAS_PROBE_REPORT_NAME);
  if (!file) file.open(TCGEMM_PTXAS_PROBE_REPORT);
  ASSERT_TRUE(file) << "no ptxas report at " << TCGEMM_PTXAS_PROBE_REPORT;
  std::stringstream text;
  text << file.rdbuf();
  const PtxasEntry ptxas = parse_ptxas(text.str(), tcgemm::probe::kKernelName);
  ASSERT_GT(ptxas.registers, 0) << text.str();

  const Plan p = plan(h200(), probe_config());
  EXPECT_EQ(p.threads_per_block, tcgemm::probe::kThreads);
  EXPECT_EQ(ptxas.smem, p.smem_block);
  EXPECT_GE(ptxas.registers, p.fragment_regs);
  // nvcuda::wmma declares fp16 A/B fragments with 16 halves per lane.
  TileConfig declared = probe_config();
  declared.fragment_copies = 2;
  EXPECT_GE(ptxas.registers, plan(h200(), declared).fragment_regs);
  EXPECT_LE(ptxas.registers, max_regs_per_thread_at(h200(), p.threads_per_block));

  // Plugging ptxas's count back in gives the residency the launch would get:
  // the register file over whole warps' allocations (rounded up to 256
  // registers on sm_90), counted here independently of the planner.
  TileConfig measured = probe_config();
  measured.overhead_regs = ptxas.registers - p.fragment_regs;
  const Plan real = plan(h200(), measured);
  EXPECT_TRUE(real.fits) << real.reason;
  const int warp_regs = (ptxas.registers * 32 + 255) / 256 * 256;
  const int warps = p.threads_per_block / 32;
  EXPECT_LE(real.max_blocks_per_sm, 65536 / (warp_regs * warps));
  RecordProperty("ptxas_registers", ptxas.registers);
  RecordProperty("ptxas_smem", ptxas.smem);
  RecordProperty("planner_fragment_registers", p.fragment_regs);
}

}  // namespace
