// The production family's small-M path on the CPU: how skinny_shape covers a
// problem (which operand is the small one, the blocks along each, the K
// slices of a block), and what its registry entry accepts.
#include <gtest/gtest.h>
#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/prod/skinny.h"

namespace {

using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::Layout;
using tcgemm::prod::kSkinnyChunk;
using tcgemm::prod::kSkinnyMaxWarps;
using tcgemm::prod::kSkinnyRows;
using tcgemm::prod::skinny_shape;
using tcgemm::prod::SkinnyShape;

constexpr std::uintptr_t kAligned = 0x100000;

// x @ W^T: A (M x K) row-major, B (K x N) column-major, C column-major.
GemmArgs linear(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {reinterpret_cast<const void*>(kAligned), DType::kBF16, Layout::kRowMajor, k, m * k};
  args.b = {reinterpret_cast<const void*>(64 * kAligned), DType::kBF16, Layout::kColMajor, k, 0};
  args.c = {reinterpret_cast<void*>(1024 * kAligned), DType::kBF16, Layout::kColMajor, m, m * n};
  args.batch_count = batch;
  return args;
}

// The invariants every shape keeps, whatever the problem.
void expect_covers(const GemmArgs& args, const SkinnyShape& s) {
  SCOPED_TRACE(std::to_string(args.m) + "x" + std::to_string(args.n) + "x" +
               std::to_string(args.k) + " batch " + std::to_string(args.batch_count));
  EXPECT_EQ(s.small, std::min(args.m, args.n));
  EXPECT_EQ(s.large, std::max(args.m, args.n));
  EXPECT_EQ(s.small_is_a, args.m <= args.n);
  const std::int64_t cols = s.cols;
  EXPECT_EQ(cols, s.small <= 8 ? 8 : 16);
  EXPECT_GE(s.passes * cols, s.small);
  EXPECT_LT((s.passes - 1) * cols, s.small);
  EXPECT_TRUE(s.row_groups == 1 || s.row_groups == 2);
  if (s.small <= 4) {
    EXPECT_EQ(s.row_groups, 1);
  }
  const std::int64_t rows = kSkinnyRows * s.row_groups;
  EXPECT_GE(s.row_blocks * rows, s.large);
  EXPECT_LT((s.row_blocks - 1) * rows, s.large);
  EXPECT_EQ(s.blocks, s.row_blocks * s.passes * args.batch_count);
  // The K slices: whole load steps, every warp with some of K, all of K.
  EXPECT_GE(s.k_slices, 1);
  EXPECT_EQ(s.warps, s.row_groups * s.k_slices);
  EXPECT_LE(s.warps, kSkinnyMaxWarps);
  EXPECT_EQ(s.k_per_warp % kSkinnyChunk, 0);
  EXPECT_GE(s.k_slices * s.k_per_warp, args.k);
  EXPECT_LT((s.k_slices - 1) * s.k_per_warp, args.k);
}

TEST(ProdSkinny, TheSmallerOfMAndNIsTheSmallOperand) {
  const SkinnyShape a = skinny_shape(linear(16, 4096, 4096), 132);
  EXPECT_TRUE(a.small_is_a);
  EXPECT_EQ(a.small, 16);
  EXPECT_EQ(a.cols, 16);
  EXPECT_EQ(a.passes, 1);
  const SkinnyShape b = skinny_shape(linear(4096, 5, 4096), 132);
  EXPECT_FALSE(b.small_is_a);
  EXPECT_EQ(b.small, 5);
  EXPECT_EQ(b.cols, 8);
  EXPECT_EQ(b.passes, 1);
  EXPECT_EQ(skinny_shape(linear(40, 4096, 4096), 132).passes, 3);
}

// The H200's 132 SMs, two blocks of 16 warps (64 registers a thread)
// resident on each; the rule keeps every block resident at once with 10%
// to spare, with as many K slices as allows (H200 measurements of M = 1,
// docs/production.md).
TEST(ProdSkinny, KSlicesKeepEveryBlockResident) {
  struct Case {
    std::int64_t n, k;
    int slices;
  };
  // 256 blocks: 16 slices (2 blocks a SM) leave 0.9 x 264 = 237.6 slots,
  // fewer than the blocks; 8 slices (4 a SM) leave 475.
  for (const Case& c :
       {Case{4096, 4096, 8}, Case{14336, 4096, 4}, Case{8192, 28672, 4}, Case{28672, 8192, 2}}) {
    const SkinnyShape s = skinny_shape(linear(1, c.n, c.k), 132);
    EXPECT_EQ(s.row_groups, 1);
    EXPECT_EQ(s.row_blocks, c.n / 16);
    EXPECT_EQ(s.k_slices, c.slices) << c.n << "x" << c.k;
    EXPECT_EQ(s.k_per_warp, c.k / c.slices);
  }
  // Too many blocks to be resident even with one slice each: many waves of
  // full blocks.
  const SkinnyShape wide = skinny_shape(linear(1, 1 << 20, 4096), 132);
  EXPECT_EQ(wide.k_slices, 16);
  // A short K: no warp without a load step of its own.
  const SkinnyShape short_k = skinny_shape(linear(8, 64, 40), 132);
  EXPECT_EQ(short_k.k_slices, 2);
  EXPECT_EQ(short_k.k_per_warp, 32);
}

TEST(ProdSkinny, EightRowsTakeTheRowGroupsThatStreamMostAndSpreadBest) {
  // M = 8 against 14336 rows: one row group or two leave 3584 warps; one
  // (896 blocks of 4 warps) puts at most 28 on an SM, two (448 of 8) 32.
  const SkinnyShape tall = skinny_shape(linear(8, 14336, 4096), 132);
  EXPECT_EQ(tall.row_groups, 1);
  EXPECT_EQ(tall.k_slices, 4);
  // Against 5120 rows: 320 blocks of 8 warps (at most 24 an SM) rather than
  // 160 of 16 (32 on 28 SMs, 16 on the rest).
  const SkinnyShape spread = skinny_shape(linear(8, 5120, 5120), 132);
  EXPECT_EQ(spread.row_groups, 1);
  EXPECT_EQ(spread.blocks, 320);
  EXPECT_EQ(spread.k_slices, 8);
  // Against 4096 rows, two groups of 8 slices stream with as many warps
  // (2048) as one group would: two.
  const SkinnyShape even = skinny_shape(linear(8, 4096, 4096), 132);
  EXPECT_EQ(even.row_groups, 2);
  EXPECT_EQ(even.k_slices, 8);
  // Against 1024 rows, two groups would leave 512 warps, one group 1024.
  const SkinnyShape fewer = skinny_shape(linear(8, 1024, 4096), 132);
  EXPECT_EQ(fewer.row_groups, 1);
  EXPECT_EQ(fewer.k_slices, 16);
  // M = 1 reads one row: one group.
  EXPECT_EQ(skinny_shape(linear(1, 14336, 4096), 132).row_groups, 1);
}

TEST(ProdSkinny, SixteenRowBlocksCountOneBlockOf16WarpsPerSm) {
  // M = 16: 16-row blocks, 16 warps resident per SM. Two row groups: 448
  // blocks; 4 slices (2 a SM) leave 237.6 slots, 2 slices (4 a SM) 475.2.
  const SkinnyShape s = skinny_shape(linear(16, 14336, 4096), 132);
  EXPECT_EQ(s.cols, 16);
  EXPECT_EQ(s.row_groups, 2);
  EXPECT_EQ(s.row_blocks, 448);
  EXPECT_EQ(s.k_slices, 2);
  EXPECT_EQ(s.k_per_warp, 2048);
}

TEST(ProdSkinny, DegenerateSizesGiveALaunchableShape) {
  // The launcher refuses these (below); the shape must still be sane.
  for (const GemmArgs& args : {linear(1, 64, 0), linear(1, 1, 8), linear(16, 16, 8)}) {
    const SkinnyShape s = skinny_shape(args, 132);
    EXPECT_GE(s.k_slices, 1);
    EXPECT_GE(s.warps, 1);
    EXPECT_GE(s.k_per_warp, kSkinnyChunk);
  }
}

TEST(ProdSkinny, TheLauncherRefusesWhatItsLoadsCannotRead) {
  // Refused before anything touches the device (no GPU here).
  const GemmArgs good = linear(8, 4096, 4096, 2);
  std::vector<GemmArgs> bad(8, good);
  bad[0].k = 4092;  // K % 8
  bad[1].a.ld = 4100;
  bad[2].b.ld = 4100;
  bad[3].a.stride += 4;
  bad[4].b.ptr = reinterpret_cast<const void*>(64 * kAligned + 8);
  bad[5].a.layout = Layout::kColMajor;
  bad[6].b.layout = Layout::kRowMajor;
  bad[7].k = 0;
  // Each refusal names its own reason.
  const char* const reason[] = {"multiples of 8", "multiples of 8",  "multiples of 8",
                                "batch strides",  "16-byte aligned", "row-major",
                                "row-major",      "at least 1"};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const tcgemm::Status s =
        tcgemm::kernels::prod::launch_skinny(bad[i], skinny_shape(bad[i], 132));
    EXPECT_EQ(s.code, tcgemm::StatusCode::kInvalidValue) << "case " << i << ": " << s.message;
    EXPECT_NE(s.message.find("prod-skinny"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find(reason[i]), std::string::npos) << "case " << i << ": " << s.message;
  }
  const tcgemm::Status no_blocks =
      tcgemm::kernels::prod::launch_skinny(good, skinny_shape(good, 132), 0);
  EXPECT_EQ(no_blocks.code, tcgemm::StatusCode::kInvalidValue);
  EXPECT_NE(no_blocks.message.find("max_blocks"), std::string::npos) << no_blocks.message;
}

TEST(ProdSkinny, CoversEveryProblem) {
  for (std::int64_t m : {1, 7, 8, 9, 16, 17, 33, 64, 65, 200}) {
    for (std::int64_t n : {1, 8, 56, 1032, 4096}) {
      for (std::int64_t k : {8, 32, 264, 4096, 28672}) {
        for (std::int64_t batch : {1, 3}) {
          for (int sms : {1, 132}) {
            const GemmArgs args = linear(m, n, k, batch);
            expect_covers(args, skinny_shape(args, sms));
          }
        }
      }
    }
  }
}

TEST(ProdSkinny, RegistryEntryTakesOnlyWhatTheKernelLoads) {
  const tcgemm::KernelInfo* k = tcgemm::find_kernel("prod-skinny");
  ASSERT_NE(k, nullptr);
  const tcgemm::DeviceCaps sm90{90};
  GemmArgs args = linear(8, 4096, 4096, 3);
  EXPECT_EQ(tcgemm::check_constraints(k->constraints, args, sm90), "");
  for (DType out : {DType::kFP16, DType::kFP32}) {
    GemmArgs o = args;
    o.c.dtype = out;
    EXPECT_EQ(tcgemm::check_constraints(k->constraints, o, sm90), "");
  }
  GemmArgs row_c = args;
  row_c.c.layout = Layout::kRowMajor;
  row_c.c.ld = args.n;
  EXPECT_EQ(tcgemm::check_constraints(k->constraints, row_c, sm90), "");
  // Each of these breaks one rule of the 16-byte loads of K-contiguous rows.
  GemmArgs bad = args;
  bad.a.layout = Layout::kColMajor;
  bad.a.ld = args.m;
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  bad = args;
  bad.b.layout = Layout::kRowMajor;
  bad.b.ld = args.n;
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  bad = args;
  bad.k = 4095;
  bad.a.ld = bad.b.ld = 4095;
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  bad = args;
  bad.a.ld = 4100;
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  bad = args;
  bad.b.ptr = reinterpret_cast<const void*>(64 * kAligned + 8);
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  bad = args;
  bad.a.stride += 2;
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
  // Past 16 rows the tiles measured faster.
  bad = linear(17, 4096, 4096);
  EXPECT_NE(tcgemm::check_constraints(k->constraints, bad, sm90), "");
}

}  // namespace
