// The production family's host side: how a problem maps to what the kernel
// reads (canonicalization, operand major-ness and feed path, epilogue), the
// config table's own rules, the config heuristic, and that the dispatcher
// runs the family for every valid bf16/fp16 problem class.
#include <gtest/gtest.h>
#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "dispatch.h"
#include "kernels/kernels.h"
#include "kernels/prod/config.h"
#include "kernels/prod/launch.h"
#include "kernels/prod/problem.h"
#include "plan/device_spec.h"
#include "plan/prod_plan.h"
#include "tensor_map.h"

namespace {

using tcgemm::DeviceCaps;
using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::Layout;
using tcgemm::prod::EpiloguePath;
using tcgemm::prod::Major;
using tcgemm::prod::OperandPath;

// A fake, 256-byte-aligned device address for pointer-alignment arithmetic
// (never dereferenced).
void* fake_ptr(std::uintptr_t offset_bytes = 0) {
  return reinterpret_cast<void*>(std::uintptr_t{1} << 32 | offset_bytes);
}

// A tight problem with the given storage orders.
GemmArgs problem(std::int64_t m, std::int64_t n, std::int64_t k, Layout a, Layout b, Layout c,
                 DType in = DType::kBF16, DType out = DType::kBF16) {
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {fake_ptr(), in, a, a == Layout::kRowMajor ? k : m, 0};
  args.b = {fake_ptr(), in, b, b == Layout::kRowMajor ? n : k, 0};
  args.c = {fake_ptr(), out, c, c == Layout::kRowMajor ? n : m, 0};
  return args;
}

constexpr Layout kRow = Layout::kRowMajor;
constexpr Layout kCol = Layout::kColMajor;

tcgemm::prod::DeviceModel h200_model();

TEST(ProdConfig, EveryTableRowMeetsTheKernelTemplatesRules) {
  for (const auto& entry : tcgemm::prod::kConfigs) {
    EXPECT_EQ(tcgemm::prod::check(entry.tile), "") << entry.name;
    EXPECT_TRUE(entry.name.starts_with("prod-")) << entry.name;
    EXPECT_GT(entry.throughput_pct, 0) << entry.name;
  }
}

TEST(ProdConfig, CheckRefusesShapesTheKernelCannotRun) {
  tcgemm::prod::TileConfig t = tcgemm::prod::kConfigs[0].tile;
  t.bm = 96;
  EXPECT_NE(tcgemm::prod::check(t), "");
  t = tcgemm::prod::kConfigs[0].tile;
  t.bn = 200;
  EXPECT_NE(tcgemm::prod::check(t), "");
  t = tcgemm::prod::kConfigs[0].tile;
  t.c_cols = 96;
  EXPECT_NE(tcgemm::prod::check(t), "");
  t = tcgemm::prod::kConfigs[1].tile;
  t.deferred_store = true;  // one consumer has no second warpgroup to hide it under
  EXPECT_NE(tcgemm::prod::check(t), "");
  // Up to three consumer warpgroups of 64 rows (prod-128x192 given a
  // third); not four, nor three sharing an SM (setmaxnreg budgets the
  // whole register file).
  t = tcgemm::prod::kConfigs[5].tile;
  ASSERT_EQ(t.bn, 192);
  t.bm = 192;
  t.consumers = 3;
  t.stages = 4;
  t.deferred_store = false;
  EXPECT_EQ(tcgemm::prod::check(t), "");
  t.deferred_store = true;  // the deferred store pairs two consumers
  EXPECT_NE(tcgemm::prod::check(t), "");
  t.deferred_store = false;
  t.ctas_per_sm = 2;
  EXPECT_NE(tcgemm::prod::check(t), "");
  t.bm = 256;
  t.consumers = 4;
  t.ctas_per_sm = 1;
  EXPECT_NE(tcgemm::prod::check(t), "");
}

// BN is one of the wgmma widths the family wraps, and a cluster's CTAs
// each multicast whole 8-row swizzle atoms of a K-major B.
TEST(ProdConfig, BnIsAWrappedWgmmaWidthInWholeSwizzleAtomsPerCta) {
  tcgemm::prod::TileConfig t = tcgemm::prod::kConfigs[2].tile;  // prod-128x128
  ASSERT_EQ(t.bn, 128);
  for (const int bn : tcgemm::prod::kWgmmaWidths) {
    t.bn = bn;
    t.c_cols = bn / 2;
    EXPECT_EQ(tcgemm::prod::check(t), "") << bn;
  }
  for (const int bn : {80, 112, 160, 224, 32}) {
    t.bn = bn;
    t.c_cols = 16;
    EXPECT_NE(tcgemm::prod::check(t), "") << bn;
  }
}

// An MN-major B comes in whole 64-column chunks: a row whose BN is not
// takes B K-major only, every other row both ways.
TEST(ProdConfig, OnlyWholeChunkRowsTakeAnMnMajorB) {
  int k_major_only = 0;
  for (const auto& e : tcgemm::prod::kConfigs) {
    EXPECT_TRUE(tcgemm::prod::takes_b(e.tile, tcgemm::prod::Major::kK)) << e.name;
    const bool whole = e.tile.bn % tcgemm::prod::kChunk == 0;
    EXPECT_EQ(tcgemm::prod::takes_b(e.tile, tcgemm::prod::Major::kMN), whole) << e.name;
    k_major_only += whole ? 0 : 1;
  }
  EXPECT_GE(k_major_only, 1) << "the table has no row of BN off 64 columns (prod-128x96)";
}

// The candidates of a problem are rows that take its B: a K-major-only row
// (prod-128x96) is among them where the kernel's B is K-major, in either
// orientation, and never where it is MN-major.
TEST(ProdSelect, CandidatesAreRowsThatTakeTheProblemsB) {
  const tcgemm::prod::DeviceModel model = h200_model();
  int row96 = -1;
  ASSERT_TRUE(tcgemm::kernels::prod::config_of_kernel("prod-128x96", &row96));
  for (const Layout a : {kRow, kCol}) {
    for (const Layout b : {kRow, kCol}) {
      for (const Layout c : {kRow, kCol}) {
        for (const bool flipped : {false, true}) {
          const auto p =
              tcgemm::prod::canonicalize(problem(256, 6144, 4096, a, b, c), flipped);
          // Written out: the kernel computes C^T = B^T A^T where C is
          // row-major xor flipped, and its B is then A^T.
          const bool swapped = (c == kRow) != flipped;
          const bool k_major_b = swapped ? a == kRow : b == kCol;
          ASSERT_EQ(p.b.major == tcgemm::prod::Major::kK, k_major_b);
          bool has96 = false;
          for (const auto& choice : tcgemm::prod::candidates(p, model)) {
            EXPECT_TRUE(tcgemm::prod::takes_b(tcgemm::prod::kConfigs[choice.config].tile,
                                              p.b.major))
                << tcgemm::prod::kConfigs[choice.config].name;
            has96 = has96 || choice.config == row96;
          }
          EXPECT_EQ(has96, k_major_b) << static_cast<int>(a) << static_cast<int>(b)
                                      << static_cast<int>(c) << flipped;
          const tcgemm::prod::Choice pick = tcgemm::prod::select(p, model);
          EXPECT_TRUE(tcgemm::prod::takes_b(tcgemm::prod::kConfigs[pick.config].tile, p.b.major));
        }
      }
    }
  }
}

// prepare() refuses a row that cannot take the problem's B with
// kNotSupported, before it asks the device anything (so here, without
// one), and takes the same problem with both operands K-contiguous as far
// as that check.
TEST(ProdPrepare, ARowThatTakesBOnlyKMajorRefusesAnMnMajorB) {
  int row96 = -1;
  ASSERT_TRUE(tcgemm::kernels::prod::config_of_kernel("prod-128x96", &row96));
  for (const bool flipped : {false, true}) {
    // B row-major with C column-major, and A column-major with C
    // row-major: MN-major natively; flipped, the other pair.
    const GemmArgs mn_major = flipped ? problem(256, 4096, 4096, kCol, kCol, kCol)
                                      : problem(256, 4096, 4096, kRow, kRow, kCol);
    tcgemm::kernels::prod::PreparedLaunch prepared;
    const tcgemm::Status s = tcgemm::kernels::prod::prepare(
        mn_major, tcgemm::prod::Choice{row96, 1, false, false, flipped}, &prepared);
    EXPECT_EQ(s.code, tcgemm::StatusCode::kNotSupported) << flipped;
    EXPECT_NE(s.message.find("prod-128x96"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("K-major"), std::string::npos) << s.message;
    EXPECT_EQ(prepared.instance, nullptr);
    // The same shape with A row-major and B column-major gets past the check
    // (to the device query, which fails here without a GPU).
    const tcgemm::Status ok = tcgemm::kernels::prod::prepare(
        problem(256, 4096, 4096, kRow, kCol, flipped ? kRow : kCol),
        tcgemm::prod::Choice{row96, 1, false, false, flipped}, &prepared);
    EXPECT_EQ(ok.message.find("K-major"), std::string::npos) << ok.message;
  }
}

TEST(ProdPlan, EveryTableRowFitsTheH100AndH200AtItsCtasPerSm) {
  for (const tcgemm::plan::DeviceSpec* spec : {&tcgemm::plan::h100(), &tcgemm::plan::h200()}) {
    for (const auto& entry : tcgemm::prod::kConfigs) {
      for (int out_bytes : {2, 4}) {
        const tcgemm::plan::ProdPlan p = tcgemm::plan::plan_prod(*spec, entry.tile, out_bytes);
        EXPECT_TRUE(p.fits) << spec->name << " " << entry.name << ": " << p.reason;
        EXPECT_GE(p.ctas_by_smem, entry.tile.ctas_per_sm) << entry.name;
      }
    }
  }
  // The 128 x 256 shape: the ladder's measured budget, 232 registers per
  // consumer thread, exactly what it needs.
  const auto big = tcgemm::plan::plan_prod(tcgemm::plan::h200(), tcgemm::prod::kConfigs[0].tile, 2);
  EXPECT_EQ(big.regs_available, 232);
  EXPECT_EQ(big.consumer_regs_needed, 232);
  // Three consumers: 128 x 40 + 384 x 152 within 512 threads' 128 each;
  // 64 x 192 accumulators (96 a thread) and the overhead fit in 152.
  const auto row = std::find_if(tcgemm::prod::kConfigs.begin(), tcgemm::prod::kConfigs.end(),
                                [](const auto& e) { return e.name == "prod-192x192"; });
  ASSERT_NE(row, tcgemm::prod::kConfigs.end());
  ASSERT_EQ(row->tile.consumers, 3);
  const auto three = tcgemm::plan::plan_prod(tcgemm::plan::h200(), row->tile, 2);
  EXPECT_EQ(three.regs_available, 152);
  EXPECT_EQ(three.consumer_regs_needed, 136);
}

TEST(ProdPlan, RefusesConfigsPastTheSharedMemoryOrRegisterBudget) {
  tcgemm::prod::TileConfig t = tcgemm::prod::kConfigs[0].tile;
  t.stages = 5;  // 5 x 48 KiB of A and B, plus the C buffers: over 227 KiB
  auto p = tcgemm::plan::plan_prod(tcgemm::plan::h200(), t, 2);
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("shared memory"), std::string::npos) << p.reason;
  t = tcgemm::prod::kConfigs[1].tile;
  t.ctas_per_sm = 4;  // 4 x 75 KiB
  p = tcgemm::plan::plan_prod(tcgemm::plan::h200(), t, 2);
  EXPECT_FALSE(p.fits);
  t = tcgemm::prod::kConfigs[1].tile;
  t.bn = 256;
  t.c_cols = 128;
  t.stages = 2;
  t.ctas_per_sm = 2;  // 128 accumulators per thread at 128 registers
  p = tcgemm::plan::plan_prod(tcgemm::plan::h200(), t, 4);
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("registers"), std::string::npos) << p.reason;
}

TEST(ProdConfig, SharedMemoryFitsTheH200OptInLimit) {
  // 227 KiB: cudaDevAttrMaxSharedMemoryPerBlockOptin on sm_90.
  constexpr std::size_t kOptIn = 232448;
  for (const auto& entry : tcgemm::prod::kConfigs) {
    for (int out_bytes : {2, 4}) {
      EXPECT_LE(tcgemm::prod::smem_bytes(entry.tile, out_bytes), kOptIn) << entry.name;
    }
  }
}

TEST(ProdProblem, ColumnMajorCIsKeptAndEachOperandsMajorNessFollowsItsLayout) {
  struct Case {
    Layout a, b;
    Major a_major, b_major;
  };
  for (const Case& c :
       {Case{kRow, kCol, Major::kK, Major::kK}, Case{kCol, kCol, Major::kMN, Major::kK},
        Case{kRow, kRow, Major::kK, Major::kMN}, Case{kCol, kRow, Major::kMN, Major::kMN}}) {
    const auto p = tcgemm::prod::canonicalize(problem(100, 200, 300, c.a, c.b, kCol));
    EXPECT_FALSE(p.swapped);
    EXPECT_EQ(p.a.major, c.a_major);
    EXPECT_EQ(p.b.major, c.b_major);
    EXPECT_EQ(p.args.m, 100);
    EXPECT_EQ(p.args.n, 200);
  }
}

TEST(ProdProblem, RowMajorCIsComputedAsTheTransposeWithOperandsSwapped) {
  // All row-major (torch.matmul's case): C^T (N x M, column-major) = B^T A^T,
  // B^T being B's memory read column-major: N-major as B, it is M-major as A.
  const GemmArgs args = problem(100, 200, 300, kRow, kRow, kRow);
  const auto p = tcgemm::prod::canonicalize(args);
  EXPECT_TRUE(p.swapped);
  EXPECT_EQ(p.args.m, 200);
  EXPECT_EQ(p.args.n, 100);
  EXPECT_EQ(p.args.c.layout, kCol);
  EXPECT_EQ(p.args.c.ld, args.c.ld);
  EXPECT_EQ(p.args.a.ptr, args.b.ptr);
  EXPECT_EQ(p.args.b.ptr, args.a.ptr);
  EXPECT_EQ(p.a.major, Major::kMN);  // B row-major: N contiguous
  EXPECT_EQ(p.b.major, Major::kK);   // A row-major: K contiguous
  EXPECT_EQ(p.a.inner, 200);
  EXPECT_EQ(p.a.outer, 300);
  EXPECT_EQ(p.b.inner, 300);
  EXPECT_EQ(p.b.outer, 100);
}

TEST(ProdProblem, AFlippedProblemRunsTheOtherOrientationWithARowMajorOutput) {
  // Column-major C flipped: C^T = B^T A^T, written row-major (C(i, j) at
  // i + j * ldc is C^T(j, i) at j * ldc + i), by TMA store: C's base and
  // ldc are aligned and the contiguous dimension (the kernel's N, 64) is a
  // multiple of 8.
  const GemmArgs tn = problem(64, 4096, 512, kRow, kCol, kCol);
  const auto p = tcgemm::prod::canonicalize(tn, /*flipped=*/true);
  EXPECT_TRUE(p.swapped);
  EXPECT_TRUE(p.c_row_major);
  EXPECT_EQ(p.args.m, 4096);
  EXPECT_EQ(p.args.n, 64);
  EXPECT_EQ(p.args.c.layout, kRow);
  EXPECT_EQ(p.args.c.ld, tn.c.ld);
  EXPECT_EQ(p.args.a.ptr, tn.b.ptr);
  EXPECT_EQ(p.a.major, Major::kK);  // B column-major: K contiguous
  EXPECT_EQ(p.b.major, Major::kK);  // A row-major: K contiguous
  EXPECT_EQ(p.epilogue, EpiloguePath::kTmaStore);
  EXPECT_EQ(tcgemm::prod::canonicalize(tn).epilogue, EpiloguePath::kTmaStore);
  // 60 rows: the flipped output's contiguous dimension is not whole 16-byte
  // chunks (a TMA store would write past it), so it leaves from registers,
  // as the native one (M % 8 != 0) does.
  GemmArgs tn60 = problem(60, 4096, 512, kRow, kCol, kCol);
  tn60.c.ld = 64;
  EXPECT_EQ(tcgemm::prod::canonicalize(tn60, /*flipped=*/true).epilogue, EpiloguePath::kDirect);
  EXPECT_EQ(tcgemm::prod::canonicalize(tn60).epilogue, EpiloguePath::kDirect);
  // Row-major C flipped: C as given, written row-major.
  const GemmArgs tnr = problem(64, 4096, 512, kRow, kCol, kRow);
  const auto q = tcgemm::prod::canonicalize(tnr, /*flipped=*/true);
  EXPECT_FALSE(q.swapped);
  EXPECT_TRUE(q.c_row_major);
  EXPECT_EQ(q.args.m, 64);
  EXPECT_EQ(q.args.n, 4096);
  EXPECT_EQ(q.args.a.ptr, tnr.a.ptr);
  EXPECT_EQ(q.epilogue, EpiloguePath::kTmaStore);  // N = 4096, ldc = 4096
  // Its rows are the outer dimension, which TMA clips row by row: 60 of
  // them still leave by TMA store.
  EXPECT_EQ(tcgemm::prod::canonicalize(problem(60, 4096, 512, kRow, kCol, kRow), /*flipped=*/true)
                .epilogue,
            EpiloguePath::kTmaStore);
  // Row-major C with ldc = 4097: TMA cannot address it in either orientation.
  GemmArgs tnr_odd = tnr;
  tnr_odd.c.ld = 4097;
  EXPECT_EQ(tcgemm::prod::canonicalize(tnr_odd, /*flipped=*/true).epilogue,
            EpiloguePath::kDirect);
  EXPECT_EQ(tcgemm::prod::canonicalize(tnr_odd).epilogue, EpiloguePath::kDirect);
  // The native problems are what canonicalize gives without the flag.
  EXPECT_FALSE(tcgemm::prod::canonicalize(tn).c_row_major);
  EXPECT_TRUE(tcgemm::prod::canonicalize(tnr).swapped);
  const tcgemm::prod::Choice flipped{0, 1, false, false, /*flipped=*/true};
  EXPECT_TRUE(tcgemm::prod::oriented(tn, flipped).c_row_major);
  const std::string text = tcgemm::prod::to_string(tcgemm::prod::launch_config(p, flipped, h200_model()));
  EXPECT_NE(text.find("flipped"), std::string::npos) << text;
  EXPECT_NE(text.find("epilogue=tma-store"), std::string::npos) << text;
}

TEST(ProdProblem, AlignedOperandsAreStreamedByTmaDirectly) {
  const auto p = tcgemm::prod::canonicalize(problem(4096, 4096, 4096, kRow, kCol, kCol));
  EXPECT_EQ(p.a.path, OperandPath::kTma);
  EXPECT_EQ(p.b.path, OperandPath::kTma);
  EXPECT_EQ(p.epilogue, EpiloguePath::kTmaStore);
  EXPECT_EQ(tcgemm::prod::scratch_bytes(p), 0u);
}

TEST(ProdProblem, AnUnalignedBaseIsRepackedWhateverItsLd) {
  // A shifted TMA view (the aligned address below the base) faults on the
  // H200, so any base off 16 bytes goes through the repack.
  for (std::int64_t pad : {0, 8}) {
    GemmArgs args = problem(4096, 4096, 4096, kRow, kCol, kCol);
    args.a.ld += pad;
    args.a.ptr = fake_ptr(2);  // one element past 16-byte alignment
    const auto p = tcgemm::prod::canonicalize(args);
    EXPECT_EQ(p.a.path, OperandPath::kRepack) << "pad " << pad;
    EXPECT_EQ(p.b.path, OperandPath::kTma);
    EXPECT_EQ(tcgemm::prod::scratch_bytes(p), 4096u * 4096u * 2u);
  }
}

TEST(ProdProblem, MNotAMultipleOf8StoresCFromRegisters) {
  // A TMA store would write up to 7 rows of C's padding past M.
  GemmArgs args = problem(4100, 256, 256, kRow, kCol, kCol);
  args.c.ld = 4104;
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kDirect);
  args.m = 4104;
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kTmaStore);
}

TEST(ProdProblem, AnOddLeadingDimensionIsRepackedIntoAlignedScratch) {
  // 4095 x 4097 x 4093 tight, TN: lda = ldb = 4093, ldc = 4095.
  const GemmArgs args = problem(4095, 4097, 4093, kRow, kCol, kCol);
  const auto p = tcgemm::prod::canonicalize(args);
  EXPECT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_EQ(p.b.path, OperandPath::kRepack);
  EXPECT_EQ(tcgemm::prod::repacked_ld(p.a), 4096);
  EXPECT_EQ(p.epilogue, EpiloguePath::kDirect);  // ldc = 4095: TMA cannot address C
  const std::size_t a_bytes = 4096u * 4095u * 2u;
  const std::size_t b_bytes = 4096u * 4097u * 2u;
  EXPECT_EQ(tcgemm::prod::scratch_bytes(p), (a_bytes + 255) / 256 * 256 + b_bytes);
}

TEST(ProdProblem, ALongRepackedRowStartsOnA128ByteLine) {
  // K = 4100 (lda = 4101, odd: repacked): 4100 rounds to 4160, a whole
  // number of 128-byte lines, not to 4104; short rows only to 16 bytes.
  GemmArgs args = problem(512, 512, 4100, kRow, kCol, kCol);
  args.a.ld = 4101;
  auto p = tcgemm::prod::canonicalize(args);
  ASSERT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_EQ(tcgemm::prod::repacked_ld(p.a), 4160);
  args = problem(512, 512, 33, kRow, kCol, kCol);
  p = tcgemm::prod::canonicalize(args);
  ASSERT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_EQ(tcgemm::prod::repacked_ld(p.a), 40);
  args = problem(512, 512, 2047, kRow, kCol, kCol);
  p = tcgemm::prod::canonicalize(args);
  EXPECT_EQ(tcgemm::prod::repacked_ld(p.a), 2048);  // under 2048: 16 bytes
  args = problem(512, 512, 2049, kRow, kCol, kCol);
  p = tcgemm::prod::canonicalize(args);
  EXPECT_EQ(tcgemm::prod::repacked_ld(p.a), 2112);
}

TEST(ProdProblem, BatchStridesDecideAlignmentAndAZeroStrideSharesOneMatrix) {
  GemmArgs args = problem(64, 64, 64, kRow, kCol, kCol);
  args.batch_count = 3;
  args.a.stride = 64 * 64 + 1;  // odd: entries off 16 bytes
  args.b.stride = 0;            // one B for all entries
  args.c.stride = 64 * 64;
  const auto p = tcgemm::prod::canonicalize(args);
  EXPECT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_FALSE(p.a.shared);
  EXPECT_EQ(tcgemm::prod::repacked_stride(p.a), 64 * 64);
  EXPECT_EQ(p.b.path, OperandPath::kTma);
  EXPECT_TRUE(p.b.shared);
  EXPECT_EQ(tcgemm::prod::repacked_bytes(p.a, 3), 3u * 64 * 64 * 2);
}

TEST(ProdProblem, CGoesDirectWhenFp32OrUnaligned) {
  EXPECT_EQ(tcgemm::prod::canonicalize(
                problem(256, 256, 256, kRow, kCol, kCol, DType::kBF16, DType::kFP32))
                .epilogue,
            EpiloguePath::kDirect);
  GemmArgs args = problem(256, 256, 256, kRow, kCol, kCol);
  args.c.ptr = fake_ptr(2);
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kDirect);
  args = problem(256, 256, 256, kRow, kCol, kCol);
  args.c.ld = 260;
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kDirect);
  args.c.ld = 264;
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kTmaStore);
}

// An H200 as launch.cpp reads it: 132 SMs, 227 KiB of shared memory per
// block, HBM3e at about 2 KiB per SM clock.
tcgemm::prod::DeviceModel h200_model() {
  return {.sm_count = 132, .smem_per_block = 232448, .memory_bytes_per_cycle = 2048.0};
}

const tcgemm::prod::TileConfig& tile_of(const tcgemm::prod::Choice& c) {
  return tcgemm::prod::kConfigs[c.config].tile;
}

// What the dispatcher runs without a table entry: the heuristic over both
// orientations.
tcgemm::prod::Choice pick(const GemmArgs& args, bool invariant = false) {
  return tcgemm::prod::select(args, h200_model(), invariant);
}

std::string_view config_name(const GemmArgs& args) {
  return tcgemm::prod::kConfigs[pick(args).config].name;
}

// The heuristic over both orientations: a problem both orientations tile
// alike keeps the native one (a flip must estimate strictly lower), the
// batch-invariant pick never flips (the orientation would move with M),
// and a flip is only ever chosen with an estimate below the native one's.
TEST(ProdSelect, TheFlippedOrientationIsChosenOnlyWhereItsEstimateIsLower) {
  const tcgemm::prod::DeviceModel model = h200_model();
  for (const GemmArgs& args :
       {problem(4096, 4096, 4096, kRow, kCol, kCol), problem(8192, 8192, 8192, kRow, kRow, kRow),
        problem(2048, 2048, 2048, kCol, kRow, kCol)}) {
    EXPECT_FALSE(tcgemm::prod::select(args, model).flipped) << args.m;
  }
  // A column-major C with a few rows: the flip puts them on the kernel's N,
  // against 128-row tiles of the weights (an H200 estimate; the tuned
  // table, not this, decides the shapes it holds).
  for (const std::int64_t m : {16, 64}) {
    EXPECT_TRUE(tcgemm::prod::select(problem(m, 14336, 4096, kRow, kCol, kCol), model).flipped)
        << m;
  }
  for (const std::int64_t m : {1, 16, 64, 128, 512, 4096}) {
    for (const Layout c : {kCol, kRow}) {
      const GemmArgs args = problem(m, 14336, 4096, kRow, kCol, c);
      EXPECT_FALSE(tcgemm::prod::select(args, model, /*batch_invariant=*/true).flipped) << m;
      const tcgemm::prod::Choice choice = tcgemm::prod::select(args, model);
      const tcgemm::prod::Choice native =
          tcgemm::prod::select(tcgemm::prod::canonicalize(args), model);
      if (choice.flipped) {
        EXPECT_LT(
            tcgemm::prod::estimate_cycles(tcgemm::prod::oriented(args, choice), model, choice),
            tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args), model, native))
            << m;
      } else {
        EXPECT_EQ(choice, native) << m;
      }
    }
  }
}

// Both orientations write the same memory, so C leaves by TMA store in both
// or in neither (select() charges neither orientation for its epilogue):
// over C's layout, dtype, leading dimension, base offset, batch stride and
// its contiguous extent.
TEST(ProdProblem, BothOrientationsStoreCTheSameWay) {
  int tma = 0;
  int direct = 0;
  for (const Layout lc : {kCol, kRow}) {
    for (const DType out : {DType::kBF16, DType::kFP32}) {
      for (const std::int64_t m : {60, 64}) {
        for (const std::int64_t ld_pad : {0, 1, 8}) {
          for (const std::uintptr_t offset : {0, 2}) {
            for (const std::int64_t batch : {1, 3}) {
              GemmArgs args = problem(m, 200, 96, kRow, kCol, lc, DType::kBF16, out);
              args.c.ld += ld_pad;
              args.c.ptr = static_cast<char*>(args.c.ptr) + offset;
              args.batch_count = batch;
              args.a.stride = args.m * args.k;
              args.b.stride = args.k * args.n;
              args.c.stride = (lc == kCol ? args.n : args.m) * args.c.ld;
              const auto native = tcgemm::prod::canonicalize(args).epilogue;
              EXPECT_EQ(tcgemm::prod::canonicalize(args, /*flipped=*/true).epilogue, native)
                  << m << " ld+" << ld_pad << " offset " << offset << " batch " << batch;
              (native == EpiloguePath::kTmaStore ? tma : direct) += 1;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(tma, 0);
  EXPECT_GT(direct, 0);
}

// Where the flipped estimate is the lower, the flip is taken, whatever C's
// size: 256 x 6144 x 4096 with a row-major C, flipped on prod-128x96 (27.4
// us against 30.7 for the native prod-128x128 in the H100's heldout run,
// bench/results/h100/2026-12-06-s20/heldout/), which the register
// epilogue's charge had kept native.
TEST(ProdSelect, AFlipWhoseEstimateIsLowerIsTaken) {
  const tcgemm::prod::DeviceModel model = h200_model();
  const GemmArgs args = problem(256, 6144, 4096, kRow, kCol, kRow);
  const tcgemm::prod::Choice native = tcgemm::prod::select(tcgemm::prod::canonicalize(args), model);
  const tcgemm::prod::Choice flipped =
      tcgemm::prod::select(tcgemm::prod::canonicalize(args, /*flipped=*/true), model);
  ASSERT_LT(tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args, true), model, flipped),
            tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args), model, native));
  const tcgemm::prod::Choice pick = tcgemm::prod::select(args, model);
  EXPECT_TRUE(pick.flipped);
  EXPECT_EQ(tcgemm::prod::kConfigs[pick.config].name, "prod-128x96");
}

// Rows TMA zero-fills where M or N spans at most two tiles cost time
// (estimate_cycles): a few rows belong on a tile's short side, and in a tile
// they fill. prod-128x64 ran 16 x 4096 x 14336 (column-major C) in 92.6 us
// with the 16 rows in its 128-row box and in 55.5 with them in its 64-row
// box; prod-64x256 the other way round, 78.5 against 163.9 (H100,
// bench/results/h100/2026-12-06-s21/retune/). At 96 x 5120 x 13824 the
// estimate without those rows took prod-128x64 natively (77.2 us, 32 rows of
// every A box filled), 1.32x behind the best, prod-128x96 flipped with a
// split of 2 (58.4 us: the 96 rows fill its tile); .../heldout/.
TEST(ProdSelect, ZeroFilledRowsPutAFewRowsOnTheTilesShortSide) {
  const tcgemm::prod::DeviceModel model = h200_model();
  std::map<std::string, int> rows;
  for (const char* name : {"prod-128x64", "prod-64x256", "prod-64x64", "prod-128x96"}) {
    ASSERT_TRUE(tcgemm::kernels::prod::config_of_kernel(name, &rows[name])) << name;
  }
  const auto estimate = [&](const GemmArgs& args, const char* name, bool flipped) {
    return tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args, flipped), model,
                                         {rows.at(name), 1, false, false, flipped});
  };
  const GemmArgs m16 = problem(16, 4096, 14336, kRow, kCol, kCol);
  EXPECT_LT(estimate(m16, "prod-128x64", true), estimate(m16, "prod-128x64", false));
  EXPECT_LT(estimate(m16, "prod-64x256", false), estimate(m16, "prod-64x256", true));
  // A square tile with no cluster fills as many rows either way round.
  EXPECT_DOUBLE_EQ(estimate(m16, "prod-64x64", true), estimate(m16, "prod-64x64", false));
  const GemmArgs m96 = problem(96, 5120, 13824, kRow, kCol, kCol);
  EXPECT_LT(estimate(m96, "prod-128x96", true), estimate(m96, "prod-128x64", true));
  EXPECT_LT(estimate(m96, "prod-128x96", true), estimate(m96, "prod-128x64", false));
  const tcgemm::prod::Choice choice = tcgemm::prod::select(m96, model);
  EXPECT_EQ(tcgemm::prod::kConfigs[choice.config].name, "prod-128x96");
  EXPECT_TRUE(choice.flipped);
}

// The zero-filled rows, counted by hand: the edge unit's rows past M (a
// pair's second CTA past M fills its whole BM-row box) where M spans at most
// two clusters' tiles, and past N where N spans at most two tiles.
TEST(ProdSelect, ZeroFilledRowsAreTheEdgeUnitsWithinTwoUnits) {
  const auto rows = [](const char* name, std::int64_t m, std::int64_t n) {
    int config = -1;
    if (!tcgemm::kernels::prod::config_of_kernel(name, &config)) {
      ADD_FAILURE() << name;
      return -1.0;
    }
    return tcgemm::prod::zero_filled_rows(problem(m, n, 4096, kRow, kCol, kCol),
                                          tcgemm::prod::kConfigs[config].tile);
  };
  // prod-128x128, clusters of 2 along M, BN 128.
  EXPECT_EQ(rows("prod-128x128", 8, 4096), 128);    // the pair's second CTA: all fill
  EXPECT_EQ(rows("prod-128x128", 200, 4096), 56);   // one pair: 256 - 200
  EXPECT_EQ(rows("prod-128x128", 256, 4096), 0);    // one pair, full
  EXPECT_EQ(rows("prod-128x128", 300, 4096), 128);  // two pairs, the last CTA past M
  EXPECT_EQ(rows("prod-128x128", 400, 4096), 112);  // two pairs: 512 - 400
  EXPECT_EQ(rows("prod-128x128", 600, 4096), 0);    // three pairs: left out
  EXPECT_EQ(rows("prod-128x128", 4096, 100), 28);   // one column tile
  EXPECT_EQ(rows("prod-128x128", 4096, 200), 56);   // two: 256 - 200
  EXPECT_EQ(rows("prod-128x128", 4096, 300), 0);    // three: left out
  EXPECT_EQ(rows("prod-128x128", 8, 100), 128 + 28);
  // prod-128x64, no cluster: M within two tiles.
  EXPECT_EQ(rows("prod-128x64", 8, 4096), 120);
  EXPECT_EQ(rows("prod-128x64", 200, 4096), 56);
  EXPECT_EQ(rows("prod-128x64", 300, 4096), 0);
  EXPECT_EQ(rows("prod-128x64", 4096, 96), 32);
  // prod-128x96: 96-wide column tiles.
  EXPECT_EQ(rows("prod-128x96", 4096, 128), 64);
  EXPECT_EQ(rows("prod-128x96", 4096, 96), 0);
}

// Tiles at least twice as wide as N are left out where a narrower one
// exists: their padding costs no estimated time at small N, yet a flipped
// 64 x 14336 x 4096 ran 1.46x the tuned choice on prod-128x128 (H200).
TEST(ProdSelect, NoTileTwiceAsWideAsNIsPickedWhileANarrowerOneExists) {
  const tcgemm::prod::DeviceModel model = h200_model();
  int narrowest = tcgemm::prod::kConfigs[0].tile.bn;
  for (const auto& e : tcgemm::prod::kConfigs) narrowest = std::min(narrowest, e.tile.bn);
  for (const std::int64_t n : {8, 32, 64, 96}) {
    // Problems whose kernel N is n: natively (column-major C: the caller's
    // N; row-major: its M) and flipped (the other way round).
    const tcgemm::prod::Problem problems[] = {
        tcgemm::prod::canonicalize(problem(4096, n, 4096, kRow, kCol, kCol)),
        tcgemm::prod::canonicalize(problem(n, 4096, 4096, kRow, kCol, kRow)),
        tcgemm::prod::canonicalize(problem(n, 14336, 4096, kRow, kCol, kCol), /*flipped=*/true),
        tcgemm::prod::canonicalize(problem(14336, n, 4096, kRow, kCol, kRow), /*flipped=*/true)};
    for (const auto& p : problems) {
      ASSERT_EQ(p.args.n, n);
      const auto& t = tile_of(tcgemm::prod::select(p, model));
      EXPECT_TRUE(t.bn == narrowest || 2 * n > t.bn) << n << " bn " << t.bn;
    }
  }
}

// A tile narrower than 128 columns is not picked where the kernel's M > N
// and N spans more than two of them (A, the larger operand, read from DRAM
// once per column tile): 256 x 4096 x 4096 with a row-major C is the
// kernel's 4096 x 256 natively. With a column-major C (the kernel's 256 x
// 4096) prod-128x96 fills the SMs where 128 x 128 leaves a third idle.
TEST(ProdSelect, NoNarrowTileReadsTheLargerAOnceAColumnOverManyColumns) {
  const tcgemm::prod::DeviceModel model = h200_model();
  const auto native = tcgemm::prod::canonicalize(problem(256, 4096, 4096, kRow, kCol, kRow));
  ASSERT_EQ(native.args.m, 4096);
  const auto& t = tile_of(tcgemm::prod::select(native, model));
  EXPECT_TRUE(t.bn >= 128 || 2 * t.bn >= native.args.n) << t.bn;
  EXPECT_EQ(config_name(problem(256, 4096, 4096, kRow, kCol, kCol)), "prod-128x96");
}

TEST(ProdSelect, LargeProblemsTakeTheLargeTileUnsplitAndTinyBatchesTheSmallOne) {
  for (const GemmArgs& args :
       {problem(4096, 4096, 4096, kRow, kCol, kCol), problem(8192, 8192, 8192, kRow, kRow, kRow),
        problem(16384, 16384, 16384, kCol, kCol, kCol)}) {
    EXPECT_EQ(config_name(args), "prod-128x256") << args.m;
    EXPECT_EQ(pick(args).k_splits, 1) << args.m;
  }
  GemmArgs batched = problem(2048, 2048, 2048, kRow, kCol, kCol);
  batched.batch_count = 8;
  EXPECT_EQ(config_name(batched), "prod-128x256");
  EXPECT_EQ(pick(batched).k_splits, 1);
  GemmArgs tiny = problem(8, 64, 8, kRow, kCol, kCol, DType::kFP16, DType::kFP16);
  tiny.batch_count = 65536;
  EXPECT_EQ(config_name(tiny), "prod-64x64");
}

// Three consumers' 192 x 192 tiles where they save a large share of the
// rounds: 768 x 6144 is 128 of them on 66 clusters of two, one round,
// against 144 tiles of 128 x 256 (the heldout sets timed it ahead there),
// and 3072^3 is 256 (2 rounds) against 288 (3, or a stream-K tail). Where
// it saves less than its lower rate costs (8192^3: 15 rounds against 16)
// the 128 x 256 row keeps the problem (the test above).
TEST(ProdSelect, TheThreeConsumerTileTakesWhatItRunsInFarFewerRounds) {
  for (const GemmArgs& args :
       {problem(768, 6144, 4096, kRow, kCol, kCol), problem(768, 18944, 3584, kRow, kCol, kCol),
        problem(3072, 3072, 3072, kRow, kCol, kCol)}) {
    const tcgemm::prod::Choice choice = pick(args);
    EXPECT_EQ(tcgemm::prod::kConfigs[choice.config].name, "prod-192x192")
        << args.m << "x" << args.n;
    EXPECT_EQ(choice.k_splits, 1) << args.m << "x" << args.n;
  }
}

// GemmArgs::sm_count: the heuristic sees that many SMs, no more.
TEST(ProdSelect, AnSmBudgetIsADeviceOfThatManySms) {
  // Only a budget below the device's SM count binds.
  EXPECT_FALSE(tcgemm::prod::budget_binds(0, 132));
  EXPECT_TRUE(tcgemm::prod::budget_binds(131, 132));
  EXPECT_FALSE(tcgemm::prod::budget_binds(132, 132));
  EXPECT_FALSE(tcgemm::prod::budget_binds(500, 132));
  for (int sms : {0, 132, 500}) {
    EXPECT_EQ(tcgemm::prod::budgeted(h200_model(), sms).sm_count, 132) << sms;
    EXPECT_FALSE(tcgemm::prod::budgeted(h200_model(), sms).budget) << sms;
  }
  EXPECT_EQ(tcgemm::prod::budgeted(h200_model(), 120).sm_count, 120);
  EXPECT_TRUE(tcgemm::prod::budgeted(h200_model(), 120).budget);
  // One CTA per SM under a budget: no row of several per SM is a candidate.
  const auto tiny = tcgemm::prod::canonicalize(problem(8, 64, 8, kRow, kCol, kCol));
  const auto budgeted_candidates = tcgemm::prod::candidates(tiny, tcgemm::prod::budgeted(h200_model(), 16));
  for (const tcgemm::prod::Choice& c : budgeted_candidates) {
    EXPECT_EQ(tile_of(c).ctas_per_sm, 1) << tcgemm::prod::kConfigs[c.config].name;
  }
  // ... and every row of one CTA per SM that the device takes still is (the
  // budget leaves out only the others).
  std::set<int> one_per_sm, kept;
  for (const tcgemm::prod::Choice& c : tcgemm::prod::candidates(tiny, h200_model())) {
    if (tile_of(c).ctas_per_sm == 1) one_per_sm.insert(c.config);
  }
  for (const tcgemm::prod::Choice& c : budgeted_candidates) kept.insert(c.config);
  EXPECT_FALSE(one_per_sm.empty());
  EXPECT_EQ(kept, one_per_sm);
  EXPECT_EQ(tcgemm::prod::budgeted(h200_model(), 120).memory_bytes_per_cycle,
            h200_model().memory_bytes_per_cycle);
  // 2048^3 in 128 x 256 tiles is 128 tiles: one wave of 132 SMs; on 64 the
  // estimate is about twice as long.
  const auto p = tcgemm::prod::canonicalize(problem(2048, 2048, 2048, kRow, kCol, kCol));
  const double whole = tcgemm::prod::estimate_cycles(p, h200_model(), {0, 1});
  const double half =
      tcgemm::prod::estimate_cycles(p, tcgemm::prod::budgeted(h200_model(), 64), {0, 1});
  EXPECT_GT(half, 1.6 * whole);
}

TEST(ProdSelect, SmallMSplitsKOnAThinTileAlongTheSmallDimension) {
  for (std::int64_t m : {1, 16, 64}) {
    for (const Layout c : {kCol, kRow}) {
      // The caller's M is the kernel's M or, swapped (a row-major C, x @ W^T
      // in PyTorch, or a flipped column-major one), its N. Either way a
      // split.
      const GemmArgs args = problem(m, 4096, 4096, kRow, kCol, c);
      const tcgemm::prod::Choice choice = pick(args);
      const tcgemm::prod::Problem p = tcgemm::prod::oriented(args, choice);
      EXPECT_GT(choice.k_splits, 1) << m;
      if (m <= 16) {
        // The thinnest tile along the small dimension.
        EXPECT_EQ(p.args.m == m ? tile_of(choice).bm : tile_of(choice).bn, 64) << m;
      }
    }
  }
  // Enough tiles to fill the device without one: no split.
  EXPECT_EQ(pick(problem(128, 28672, 8192, kRow, kCol, kRow)).k_splits, 1);
}

TEST(ProdSelect, TheSplitsEstimateFallsWhenItFillsIdleSms) {
  const auto p = tcgemm::prod::canonicalize(problem(16, 4096, 4096, kRow, kCol, kCol));
  const int config = tcgemm::prod::select(p, h200_model()).config;
  const double unsplit = tcgemm::prod::estimate_cycles(p, h200_model(), {config, 1});
  const double split = tcgemm::prod::estimate_cycles(p, h200_model(), {config, 4});
  EXPECT_LT(split, unsplit);
  // On a square problem a split only adds partial sums.
  const auto big = tcgemm::prod::canonicalize(problem(8192, 8192, 8192, kRow, kCol, kCol));
  EXPECT_GT(tcgemm::prod::estimate_cycles(big, h200_model(), {0, 2}),
            tcgemm::prod::estimate_cycles(big, h200_model(), {0, 1}));
}

// C read as well as written (beta != 0) never makes the estimate cheaper,
// and where memory decides it changes the choice: at the H200's bandwidth,
// 64 x 14336 x 256 or 256 x 8192 x 256 (what the plan test
// ChoosesWhatDescribeNames counts on).
TEST(ProdSelect, ReadingCCostsItsBytesAndCanChangeTheChoice) {
  tcgemm::prod::DeviceModel model = h200_model();
  model.memory_bytes_per_cycle = 2483.0;
  int changed = 0;
  for (const auto& [m, n, k] :
       {std::array<std::int64_t, 3>{64, 14336, 256}, std::array<std::int64_t, 3>{256, 8192, 256}}) {
    GemmArgs args = problem(m, n, k, kRow, kCol, kCol);
    const tcgemm::prod::Choice written = tcgemm::prod::select(args, model);
    const double written_cycles =
        tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args), model, written);
    args.beta = 1.0f;
    const tcgemm::prod::Choice read = tcgemm::prod::select(args, model);
    EXPECT_GE(tcgemm::prod::estimate_cycles(tcgemm::prod::canonicalize(args), model, written),
              written_cycles)
        << m << "x" << n << "x" << k;
    changed += read != written ? 1 : 0;
  }
  EXPECT_GT(changed, 0);
}

// A row the estimate does not model (ConfigEntry::estimated false:
// prod-64x64-deep) is a candidate for tcgemm-tune to time but
// never the heuristic's pick, in either orientation: each such row is
// offered for some problem below.
TEST(ProdSelect, RowsTheEstimateDoesNotModelAreTheTunersOnly) {
  std::set<int> unestimated;
  for (int i = 0; i < tcgemm::prod::kConfigCount; ++i) {
    if (!tcgemm::prod::kConfigs[i].estimated) unestimated.insert(i);
  }
  ASSERT_FALSE(unestimated.empty()) << "no row to check";
  std::set<int> offered;
  for (const std::int64_t m : {1, 16, 64, 128, 512, 4096}) {
    for (const std::int64_t n : {256, 4096, 28672}) {
      for (const Layout c : {kCol, kRow}) {
        const GemmArgs args = problem(m, n, 4096, kRow, kCol, c);
        const tcgemm::prod::Choice choice = pick(args);
        EXPECT_TRUE(tcgemm::prod::kConfigs[choice.config].estimated) << m << "x" << n;
        for (const auto& each :
             tcgemm::prod::candidates(tcgemm::prod::canonicalize(args), h200_model())) {
          if (unestimated.contains(each.config)) offered.insert(each.config);
        }
      }
    }
  }
  EXPECT_EQ(offered, unestimated);
}

TEST(ProdSelect, BatchInvariantChoicesIgnoreMAndNeverSplit) {
  for (Layout c : {kRow, kCol}) {
    const tcgemm::prod::Choice tall = pick(problem(4096, 4096, 4096, kRow, kCol, c), true);
    for (std::int64_t m : {1, 7, 16, 128, 1000, 16384}) {
      const tcgemm::prod::Choice choice = pick(problem(m, 4096, 4096, kRow, kCol, c), true);
      EXPECT_EQ(choice, tall) << "m=" << m;
      EXPECT_EQ(choice.k_splits, 1) << "m=" << m;
    }
  }
  // The mode keeps every row the default offers, unsplit only (the default
  // offers splits of this problem).
  const auto p16 = tcgemm::prod::canonicalize(problem(16, 4096, 4096, kRow, kCol, kCol));
  std::set<int> rows, invariant_rows;
  bool splits = false;
  for (const auto& c : tcgemm::prod::candidates(p16, h200_model())) {
    rows.insert(c.config);
    splits = splits || c.k_splits > 1;
  }
  for (const auto& c : tcgemm::prod::candidates(p16, h200_model(), /*batch_invariant=*/true)) {
    EXPECT_EQ(c.k_splits, 1);
    EXPECT_FALSE(c.split_tail);
    invariant_rows.insert(c.config);
  }
  EXPECT_TRUE(splits);
  EXPECT_EQ(invariant_rows, rows);
}

TEST(ProdSelect, CandidatesFitTheDeviceAndSplitsLeaveNoSplitEmpty) {
  tcgemm::prod::DeviceModel small = h200_model();
  small.smem_per_block = 100 * 1024;  // a made-up part: only the 64 x 64 tile fits
  const auto p = tcgemm::prod::canonicalize(problem(64, 4096, 4096, kRow, kCol, kCol));
  for (const auto& c : tcgemm::prod::candidates(p, small)) {
    EXPECT_LE(tcgemm::prod::smem_bytes(tile_of(c), 2), small.smem_per_block);
  }
  int row64 = -1;
  ASSERT_TRUE(tcgemm::kernels::prod::config_of_kernel("prod-64x64", &row64));
  bool offered = false;
  for (const auto& c : tcgemm::prod::candidates(p, small)) offered = offered || c.config == row64;
  EXPECT_TRUE(offered);
  for (std::int64_t k : {1, 63, 64, 65, 200, 4093, 4096, 28672}) {
    for (int s = 1; s <= 16; ++s) {
      const int splits = tcgemm::prod::effective_splits(k, s);
      const std::int64_t per = tcgemm::prod::k_tiles_per_split(k, s);
      const std::int64_t k_tiles = (k + 63) / 64;
      EXPECT_GE(splits, 1);
      EXPECT_LE(splits, s);
      EXPECT_GE(splits * per, k_tiles) << k << " " << s;        // every k-tile covered
      EXPECT_LT((splits - 1) * per, k_tiles) << k << " " << s;  // the last split not empty
    }
  }
}

TEST(ProdSelect, PartialSumsAreSizedPerSplitTileInPlaceAndPerSliceOtherwise) {
  GemmArgs args = problem(16, 4096, 4096, kRow, kCol, kCol);
  args.batch_count = 3;
  args.a.stride = 16 * 4096;
  args.b.stride = 0;
  args.c.stride = 16 * 4096;
  const auto p = tcgemm::prod::canonicalize(args);
  using tcgemm::prod::Choice;
  // prod-128x256 (clusters of 2): one tile pair along M, 16 along N, 3
  // batch entries.
  const std::int64_t units = tcgemm::prod::work_units(p, 0);
  EXPECT_EQ(units, 1 * 16 * 3);
  EXPECT_EQ(tcgemm::prod::partials_bytes(p, Choice{0, 1}, 0), 0u);
  // In place: a 128 x 256 fp32 slot per split tile (2 per unit) and split.
  // Three pieces at most: a tile's last piece adds the others' 128 KiB each
  // (kMaxInPlacePartialBytes); four go to a second kernel.
  EXPECT_EQ(tcgemm::prod::max_in_place_splits(0), 3);
  EXPECT_EQ(tcgemm::prod::max_in_place_splits(2), 5);  // prod-128x128
  EXPECT_EQ(tcgemm::prod::max_in_place_splits(3), 5);  // prod-64x256
  ASSERT_TRUE(tcgemm::prod::reduces_in_place(p, Choice{0, 3}));
  EXPECT_FALSE(tcgemm::prod::reduces_in_place(p, Choice{0, 4}));
  EXPECT_EQ(tcgemm::prod::split_units(p, Choice{0, 3}, 66), units);
  EXPECT_EQ(tcgemm::prod::partials_bytes(p, Choice{0, 3}, units),
            std::size_t(units) * 2 * 3 * 128 * 256 * 4);
  // A flag per consumer slice of every piece (prod-128x256: 2 CTAs a unit,
  // 2 consumers; prod-64x256: 1 and 1).
  EXPECT_EQ(tcgemm::prod::split_flag_count(0, units, 3), units * 2 * 2 * 3);
  EXPECT_EQ(tcgemm::prod::split_flag_count(3, units, 3), units * 1 * 1 * 3);
  // Through a second kernel: dense M x N slices per batch entry and split.
  const Choice second{0, 4, /*separate_reduction=*/true};
  ASSERT_FALSE(tcgemm::prod::reduces_in_place(p, second));
  EXPECT_EQ(tcgemm::prod::partials_bytes(p, second, units), std::size_t{16} * 4096 * 3 * 4 * 4);
}

TEST(ProdSelect, SplitOfTheLastWaveRunsWholeWavesWholeAndSplitsTheRest) {
  using tcgemm::prod::Choice;
  EXPECT_EQ(tcgemm::prod::whole_units(144, 66), 132);
  EXPECT_EQ(tcgemm::prod::whole_units(132, 66), 132);
  EXPECT_EQ(tcgemm::prod::whole_units(60, 66), 0);  // under one wave: every unit split
  EXPECT_EQ(tcgemm::prod::whole_units(60, 0), 0);
  // 3072^3 on prod-128x256: 12 x 12 tile pairs, 66 clusters resident; an
  // odd ldc puts C on the register epilogue.
  GemmArgs odd_c = problem(3072, 3072, 3072, kRow, kCol, kCol);
  odd_c.c.ld = 3073;
  const auto p = tcgemm::prod::canonicalize(odd_c);
  ASSERT_EQ(p.epilogue, tcgemm::prod::EpiloguePath::kDirect);
  const Choice tail{0, 3, /*separate_reduction=*/false, /*split_tail=*/true};
  EXPECT_EQ(tcgemm::prod::work_units(p, 0), 144);
  EXPECT_EQ(tcgemm::prod::split_units(p, tail, 66), 12);
  EXPECT_EQ(tcgemm::prod::split_units(p, Choice{0, 5}, 66), 144);
  EXPECT_EQ(tcgemm::prod::split_units(p, Choice{0, 1, false, true}, 66), 0);
  // The bound holds for any residency up to the device's most.
  for (std::int64_t r = 1; r <= 66; ++r) {
    EXPECT_LE(tcgemm::prod::split_units(p, tail, r), tcgemm::prod::split_units_bound(p, tail, 66))
        << r;
  }
  EXPECT_TRUE(tcgemm::prod::reduces_in_place(p, tail));
  EXPECT_EQ(tcgemm::prod::partials_bytes(p, tail, 12), std::size_t{12} * 2 * 3 * 128 * 256 * 4);
  // Five pieces would fill the device once, but a tile's last piece would
  // add four others' 128 KiB of partial sums through its SM: past
  // kMaxInPlacePartialBytes, so not in place, and a tail split needs that.
  const Choice five{0, 5, /*separate_reduction=*/false, /*split_tail=*/true};
  EXPECT_FALSE(tcgemm::prod::reduces_in_place(p, five));
  // A config of several CTAs per SM cannot reduce in place: no tail split.
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm == 1) continue;
    EXPECT_FALSE(tcgemm::prod::reduces_in_place(p, Choice{config, 5, false, true}));
  }
  // The candidates hold the tail split in three (288 tiles: 2 whole waves of
  // 132, then 24 tiles x 3 pieces; five would fill the device once). The
  // unsplit launch no longer runs three waves: its thin third round (12
  // pairs over 66 clusters) and the round before it are spread stream-K, and
  // the estimate ranks that ahead of the tail split, as measured (3072^3 with
  // its TMA store, H200: 0.0775 ms against 0.0780 for the tail split and
  // 0.0901 for three data-parallel rounds; docs/production.md).
  const auto model = h200_model();
  const auto all = tcgemm::prod::candidates(p, model);
  EXPECT_NE(std::find(all.begin(), all.end(), tail), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), five), all.end());
  // Every tail split offered reduces in place, as a tail split must.
  for (const Choice& c : all) {
    if (c.split_tail) {
      EXPECT_TRUE(tcgemm::prod::reduces_in_place(p, c)) << c.config;
    }
  }
  EXPECT_TRUE(tcgemm::prod::uses_stream_k(p, Choice{0, 1}, model));
  EXPECT_LT(tcgemm::prod::estimate_cycles(p, model, Choice{0, 1}),
            tcgemm::prod::estimate_cycles(p, model, tail));
  // A problem of whole waves (2816 x 3072: 22 x 12 tiles, two waves) or
  // under one (2048^2: 128 tiles) gets no tail split of 128 x 256 tiles.
  for (const auto& dims : {std::array<std::int64_t, 3>{2816, 3072, 4096},
                           std::array<std::int64_t, 3>{2048, 2048, 2048}}) {
    GemmArgs args = problem(dims[0], dims[1], dims[2], kRow, kCol, kCol);
    args.c.ld = dims[0] + 1;
    const auto q = tcgemm::prod::canonicalize(args);
    for (const Choice& c : tcgemm::prod::candidates(q, model)) {
      EXPECT_FALSE(c.split_tail && c.config == 0) << dims[0];
    }
  }
  // One whose C leaves by TMA store gets it too (reduced in place, the
  // split keeps that store), and there too the unsplit launch's stream-K
  // range ranks first, for the heuristic and for 128 x 256 tiles named, as
  // with the odd ldc.
  const auto aligned = tcgemm::prod::canonicalize(problem(3072, 3072, 3072, kRow, kCol, kCol));
  ASSERT_EQ(aligned.epilogue, tcgemm::prod::EpiloguePath::kTmaStore);
  const auto aligned_all = tcgemm::prod::candidates(aligned, model);
  EXPECT_NE(std::find(aligned_all.begin(), aligned_all.end(), tail), aligned_all.end());
  EXPECT_LT(tcgemm::prod::estimate_cycles(aligned, model, Choice{0, 1}),
            tcgemm::prod::estimate_cycles(aligned, model, tail));
  EXPECT_EQ(tcgemm::prod::select_split(aligned, model, 0), (Choice{0, 1}));
  EXPECT_EQ(tcgemm::prod::select_split(p, model, 0), (Choice{0, 1}));
  // Where a last wave is thin and K long, the heuristic splits it with C's
  // TMA store kept: 1024 x 14336 x 4096 is 448 tiles of 128 x 256, three
  // whole waves and 52 tiles (tuned on the H200: a split of 2 of those in
  // 0.1644 ms against 0.1744 unsplit, data/tuned/nvidia-h200.json).
  const auto thin = tcgemm::prod::canonicalize(problem(1024, 14336, 4096, kRow, kCol, kCol));
  ASSERT_EQ(thin.epilogue, tcgemm::prod::EpiloguePath::kTmaStore);
  const Choice thin_choice = tcgemm::prod::select(thin, model);
  EXPECT_TRUE(thin_choice.split_tail);
  EXPECT_EQ(thin_choice.k_splits, 2);
  EXPECT_EQ(thin_choice.config, 0);
}

// The stream-K tail (problem.h's stream_k_tail) on the H200's 66 clusters of
// 128 x 256 tile pairs: 8192^3 is 1024 pairs, 15 whole rounds and 34 pairs
// left, which it spreads over every cluster; 4096^3 (256 pairs, 58 left of a
// fourth round of 64 k-tiles) would save less than the fixup costs; a full
// last round, a K split and a row of several CTAs per SM never take it.
TEST(ProdStreamK, SpreadsTheLastRoundWhereItPays) {
  const tcgemm::prod::DeviceModel model = h200_model();
  const auto tail = [&](std::int64_t m, std::int64_t n, std::int64_t k,
                        tcgemm::prod::Choice choice) {
    return tcgemm::prod::uses_stream_k(
        tcgemm::prod::canonicalize(problem(m, n, k, kRow, kCol, kCol)), choice, model);
  };
  EXPECT_TRUE(tail(8192, 8192, 8192, {0, 1}));
  EXPECT_FALSE(tail(4096, 4096, 4096, {0, 1}));
  // 264 pairs (33 x 8): 4 whole rounds.
  EXPECT_FALSE(tail(8448, 2048, 8192, {0, 1}));
  // 112 pairs, one round and 46 left, but the weights' stream binds: the
  // partial sums would only add traffic.
  EXPECT_FALSE(tail(128, 28672, 8192, {0, 1}));
  EXPECT_FALSE(tail(8192, 8192, 8192, {0, 4}));
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm != 1) {
      EXPECT_FALSE(tail(8192, 8192, 8192, {config, 1})) << config;
    }
  }
  const tcgemm::sched::StreamKSchedule s = tcgemm::prod::stream_k_tail(0, 1024, 128, 66);
  EXPECT_EQ(s.workers, 66);
  EXPECT_EQ(s.dp_units, 990);
  EXPECT_EQ(s.sk_iters, 34 * 128);
  // It writes one BM x BN fp32 slot per CTA: 128 KiB each.
  EXPECT_EQ(tcgemm::prod::stream_k_partials_bytes(0, 66), std::size_t{132} * 128 * 256 * 4);
  const std::string text = tcgemm::prod::to_string(tcgemm::prod::launch_config(
      tcgemm::prod::canonicalize(problem(8192, 8192, 8192, kRow, kCol, kCol)), {0, 1}, model));
  EXPECT_NE(text.find("stream-K last round"), std::string::npos) << text;
}

// A last round too thin to split alone: 4096 x 4097 x 4096 in 128 x 256
// tile pairs is 272 units, on the H200's 66 clusters 4 whole rounds and 8
// units left (an eighth of a unit per cluster), so the fourth round joins
// the split range: 74 units over 66 clusters, 1.12 each, every head adding
// one partial sum. On 64 clusters (16 left, 1.25 each) the same.
TEST(ProdStreamK, WidensAThinLastRound) {
  const tcgemm::sched::StreamKSchedule s = tcgemm::prod::stream_k_tail(0, 272, 64, 64);
  EXPECT_EQ(s.workers, 64);
  EXPECT_EQ(s.dp_units, 192);
  EXPECT_EQ(s.sk_iters, 80 * 64);
  int most_peers = 0;
  for (std::int64_t w = 0; w < s.workers; ++w) {
    for (std::int64_t j = 0; j < s.sk_items(w); ++j) {
      const tcgemm::sched::StreamKItem item = s.sk_item(w, j);
      most_peers = std::max(most_peers, static_cast<int>(item.peers));
    }
  }
  EXPECT_EQ(most_peers, 1);
  const tcgemm::sched::StreamKSchedule s66 = tcgemm::prod::stream_k_tail(0, 272, 64, 66);
  EXPECT_EQ(s66.dp_units, 198);
  EXPECT_EQ(s66.sk_iters, 74 * 64);
  EXPECT_TRUE(tcgemm::prod::uses_stream_k(
      tcgemm::prod::canonicalize(problem(4096, 4097, 4096, kRow, kCol, kCol)), {0, 1},
      h200_model()));
  // On 64 clusters: where the widened range does not beat the whole rounds
  // though the thin tail alone would (30 k-tiles: the tail alone 4 x 30 + 8 x 6/5 + 16 =
  // 145 against 5 x 30 = 150 for the rounds, widened 3 x 30 + 38 x 6/5 + 16
  // = 151), or the tail alone does not either (8 k-tiles), or there is no
  // whole round to widen by, the launch stays data-parallel.
  EXPECT_EQ(tcgemm::prod::stream_k_tail(0, 272, 30, 64).sk_iters, 0);
  EXPECT_EQ(tcgemm::prod::stream_k_tail(0, 272, 8, 64).sk_iters, 0);
  EXPECT_EQ(tcgemm::prod::stream_k_tail(0, 20, 64, 64).sk_iters, 0);
}

// Rounds are counted in the clusters of two whole-SM CTAs the device holds
// (DeviceModel::pair_clusters), which is SMs / 2 only where the GPCs allow
// it: the H200 holds all 66, but clusters of 4 only 30 of 33. Here a
// made-up device of 132 SMs that holds 64.
TEST(ProdSelect, CountsTheClustersTheDeviceHolds) {
  tcgemm::prod::DeviceModel model = h200_model();
  const tcgemm::prod::TileConfig& pairs = tcgemm::prod::kConfigs[0].tile;
  const tcgemm::prod::TileConfig& single = tcgemm::prod::kConfigs[4].tile;  // prod-128x64
  ASSERT_EQ(pairs.cluster_m, 2);
  ASSERT_EQ(single.cluster_m, 1);
  EXPECT_EQ(tcgemm::prod::resident_units(model, pairs), 66);  // unknown: SMs / 2
  model.pair_clusters = 64;
  EXPECT_EQ(tcgemm::prod::resident_units(model, pairs), 64);
  EXPECT_EQ(tcgemm::prod::resident_tiles(model, pairs), 128);
  EXPECT_EQ(tcgemm::prod::resident_units(model, single), 132);
  // An SM budget below it binds: 10 SMs hold 5 clusters of 2.
  EXPECT_EQ(tcgemm::prod::resident_units(tcgemm::prod::budgeted(model, 10), pairs), 5);
  // Whole rounds are counted in the clusters held: 130 pairs of
  // prod-128x256 (2560 x 3328, K = 1024: too few k-tiles for stream-K) take
  // 2 rounds on 66 clusters, 3 on 64.
  const auto rounds = tcgemm::prod::canonicalize(problem(2560, 3328, 1024, kRow, kCol, kCol));
  tcgemm::prod::DeviceModel model66 = model;
  model66.pair_clusters = 0;
  ASSERT_FALSE(tcgemm::prod::uses_stream_k(rounds, {0, 1}, model));
  EXPECT_GT(tcgemm::prod::estimate_cycles(rounds, model, {0, 1}),
            1.3 * tcgemm::prod::estimate_cycles(rounds, model66, {0, 1}));
}

// 4095 x 4097 x 4093 on the H200 (66 clusters, about 2483 DRAM bytes per SM
// clock): prod-128x128's 528 pairs are exactly 8 rounds, prod-128x256's
// 272 are 4 rounds and 8 units, spread with the round before them. The
// 128 x 128 row ran at 84% of the 128 x 256 row's rate on 4096^3 (0.1857
// against 0.1564 ms, both last rounds 97% full), and the widened range
// measured ahead (0.2328 against 0.2452 ms, repacks included; H200,
// bench/results/h200/2026-12-03-rounds-probe.txt): so is it ranked.
TEST(ProdSelect, RanksTheWidenedRangeAheadOfExactRoundsOfSmallerTiles) {
  tcgemm::prod::DeviceModel model = h200_model();
  model.memory_bytes_per_cycle = 2483.0;
  GemmArgs args = problem(4095, 4097, 4093, kRow, kCol, kCol);
  const auto p = tcgemm::prod::canonicalize(args);
  ASSERT_FALSE(tcgemm::prod::uses_stream_k(p, {2, 1}, model));  // 528 = 8 x 66
  ASSERT_TRUE(tcgemm::prod::uses_stream_k(p, {0, 1}, model));
  EXPECT_LT(tcgemm::prod::estimate_cycles(p, model, {0, 1}),
            tcgemm::prod::estimate_cycles(p, model, {2, 1}));
  const tcgemm::prod::Choice pick = tcgemm::prod::select(args, model);
  EXPECT_EQ(pick.config, 0);
  EXPECT_EQ(pick.k_splits, 1);
}

TEST(ProdDescribe, NamesTheConfigTheSwapAndEachOperandsPath) {
  GemmArgs args = problem(4095, 4097, 4093, kRow, kRow, kRow);
  const auto p = tcgemm::prod::canonicalize(args);
  const std::string text = tcgemm::prod::to_string(tcgemm::prod::launch_config(p, {0, 1}, h200_model()));
  EXPECT_NE(text.find("prod-128x256"), std::string::npos) << text;
  EXPECT_NE(text.find("BM=128 BN=256 BK=64"), std::string::npos) << text;
  EXPECT_NE(text.find("swapped"), std::string::npos) << text;
  EXPECT_NE(text.find("repack"), std::string::npos) << text;
  EXPECT_NE(text.find("epilogue=direct"), std::string::npos) << text;
}

// Every valid bf16/fp16 problem class runs on the production family through
// the dispatcher, with no workspace given (the family's repack scratch is
// optional): its small-M path where both operands are K-contiguous with
// 16-byte-aligned rows, else the tiles.
TEST(ProdDispatch, EveryStorageOrderAlignmentAndBatchClassIsServed) {
  const tcgemm::KernelInfo* prod = tcgemm::find_kernel("prod");
  const tcgemm::KernelInfo* skinny = tcgemm::find_kernel("prod-skinny");
  ASSERT_NE(prod, nullptr);
  ASSERT_NE(skinny, nullptr);
  for (Layout a : {kRow, kCol}) {
    for (Layout b : {kRow, kCol}) {
      for (Layout c : {kRow, kCol}) {
        for (DType in : {DType::kBF16, DType::kFP16}) {
          for (DType out : {DType::kBF16, DType::kFP16, DType::kFP32}) {
            for (int variant = 0; variant < 6; ++variant) {
              GemmArgs args = problem(77, 33, 5, a, b, c, in, out);
              switch (variant) {
                case 1:  // odd leading dimensions
                  args.a.ld += 1;
                  args.b.ld += 1;
                  args.c.ld += 1;
                  break;
                case 2:  // 2-byte-aligned bases
                  args.a.ptr = fake_ptr(2);
                  args.b.ptr = fake_ptr(2);
                  args.c.ptr = fake_ptr(out == DType::kFP32 ? 4 : 2);
                  break;
                case 3:  // batched, B shared
                  args.batch_count = 3;
                  args.a.stride = 77 * 5 + 3;
                  args.b.stride = 0;
                  args.c.stride = 77 * 33;
                  break;
                case 4:  // M = N = K = 1
                  args = problem(1, 1, 1, a, b, c, in, out);
                  break;
                case 5:  // a batch count past the grid's y limit
                  args = problem(8, 64, 8, a, b, c, in, out);
                  args.batch_count = 70000;
                  args.a.stride = 64;
                  args.b.stride = 512;
                  args.c.stride = 512;
                  break;
                default:
                  break;
              }
              ASSERT_TRUE(tcgemm::validate(args).ok()) << tcgemm::validate(args).message;
              const tcgemm::KernelChoice choice = tcgemm::choose_kernel(
                  tcgemm::registry(), nullptr, args, DeviceCaps{90}, /*unlimited_workspace=*/false);
              ASSERT_TRUE(choice.status.ok()) << choice.status.message;
              // Only variant 5 has K, lda and ldb multiples of 8.
              const bool small_m_path = variant == 5 && a == kRow && b == kCol;
              EXPECT_EQ(choice.kernel, small_m_path ? skinny : prod) << "variant " << variant;
              // And the family's own view of it is one it can launch.
              const auto p = tcgemm::prod::canonicalize(args);
              EXPECT_EQ(p.args.c.layout, kCol);
              if (variant == 1 || variant == 2) {
                EXPECT_EQ(p.a.path, OperandPath::kRepack) << "variant " << variant;
                EXPECT_EQ(p.b.path, OperandPath::kRepack) << "variant " << variant;
                EXPECT_EQ(p.epilogue, EpiloguePath::kDirect) << "variant " << variant;
              }
              const tcgemm::prod::Choice picked = tcgemm::prod::select(p, h200_model());
              EXPECT_GE(picked.config, 0);
              EXPECT_LT(picked.config, tcgemm::prod::kConfigCount);
              EXPECT_GE(picked.k_splits, 1);
            }
          }
        }
      }
    }
  }
}

TEST(ProdDispatch, SizesPastThe32BitTmaCoordinatesOfATilePairAreRefusedByName) {
  // A cluster's second tile may start 256 rows past M; TMA coordinates are
  // signed 32-bit.
  const tcgemm::KernelInfo* prod = tcgemm::find_kernel("prod");
  ASSERT_NE(prod, nullptr);
  constexpr std::int64_t kLargest = (std::int64_t{1} << 31) - 1 - 256;
  GemmArgs args = problem(kLargest, 8, 8, kRow, kCol, kCol);
  EXPECT_EQ(tcgemm::check_constraints(prod->constraints, args, DeviceCaps{90}), "");
  args = problem(kLargest + 1, 8, 8, kRow, kCol, kCol);
  EXPECT_NE(tcgemm::check_constraints(prod->constraints, args, DeviceCaps{90}), "");
}

TEST(ProdProblem, RowMajorCWithBatchesSwapsTheOperandsStrides) {
  GemmArgs args = problem(64, 48, 32, kRow, kRow, kRow);
  args.batch_count = 4;
  args.a.stride = 64 * 32;
  args.b.stride = 0;  // shared B becomes a shared A after the swap
  args.c.stride = 64 * 48 + 8;
  const auto p = tcgemm::prod::canonicalize(args);
  ASSERT_TRUE(p.swapped);
  EXPECT_TRUE(p.a.shared);
  EXPECT_FALSE(p.b.shared);
  EXPECT_EQ(p.b.stride, 64 * 32);
  EXPECT_EQ(p.args.c.stride, 64 * 48 + 8);
  EXPECT_EQ(p.epilogue, EpiloguePath::kTmaStore);  // 64 * 48 + 8 elements: 16-byte steps
}

TEST(ProdProblem, ACBatchStrideOff16BytesStoresCFromRegisters) {
  GemmArgs args = problem(64, 64, 64, kRow, kCol, kCol);
  args.batch_count = 2;
  args.a.stride = 64 * 64;
  args.b.stride = 64 * 64;
  args.c.stride = 64 * 64 + 1;
  EXPECT_EQ(tcgemm::prod::canonicalize(args).epilogue, EpiloguePath::kDirect);
}

TEST(ProdProblem, AZeroStrideOnAIsOneSharedMatrixAndNeverRepackedPerEntry) {
  GemmArgs args = problem(64, 64, 63, kRow, kCol, kCol);  // lda = 63: repacked
  args.batch_count = 1000;
  args.a.stride = 0;
  args.b.stride = 64 * 63 + 1;  // B's entries off 16 bytes: repacked, one copy per entry
  args.c.stride = 64 * 64;
  const auto p = tcgemm::prod::canonicalize(args);
  EXPECT_TRUE(p.a.shared);
  EXPECT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_EQ(tcgemm::prod::repacked_bytes(p.a, 1000), 64u * 64u * 2u);
  EXPECT_EQ(tcgemm::prod::repacked_bytes(p.b, 1000), 1000u * 64u * 64u * 2u);
  EXPECT_EQ(tcgemm::prod::scratch_offset_b(p), 64u * 64u * 2u);
  EXPECT_EQ(tcgemm::prod::scratch_bytes(p), 64u * 64u * 2u + 1000u * 64u * 64u * 2u);
  EXPECT_TRUE(tcgemm::prod::repack_fits(p));
}

// Copies whose byte count wraps 64 bits: validate() accepts the problem
// (entries of A may overlap; about 36 GiB of real memory), and its repacked
// A, 8 x 2^30 elements in each of 2^30 entries, would need 2^64 bytes. The
// sizes must not wrap to a small number (they did, to 0: the repack then
// wrote through a null scratch pointer); prepare() refuses what repack_fits
// does not accept.
TEST(ProdProblem, CopiesTooLargeToCountDoNotFit) {
  GemmArgs args = problem(8, 1, std::int64_t{1} << 30, kRow, kCol, kCol);
  args.batch_count = std::int64_t{1} << 30;
  args.a.stride = 1;  // entries off 16 bytes: one copy per entry
  args.b.stride = 0;
  args.c.stride = 8;
  ASSERT_TRUE(tcgemm::validate(args).ok()) << tcgemm::validate(args).message;
  const auto p = tcgemm::prod::canonicalize(args);
  ASSERT_EQ(p.a.path, OperandPath::kRepack);
  EXPECT_FALSE(tcgemm::prod::repack_fits(p));
  // 2^20 entries (2^54 bytes) fit.
  args.batch_count = 1 << 20;
  EXPECT_TRUE(tcgemm::prod::repack_fits(tcgemm::prod::canonicalize(args)));
}

// The sizes a launch cannot index, in one place (size_limits): prepare()
// refuses with it and workspace_choice() is 0 where it fails. (The registry's
// `limits` hook, which gives tcgemm::describe the same status, resolves its
// choice on the device: GemmApi.WorkspaceSizeIsZeroOnErrorsAndQuickReturns
// checks it on the GPU.)
TEST(ProdProblem, SizeLimitsNameEachLimit) {
  using tcgemm::kernels::prod::size_limits;
  const auto refused = [](const tcgemm::Status& s, const std::string& what) {
    return s.code == tcgemm::StatusCode::kNotSupported && s.message.find(what) != std::string::npos;
  };
  GemmArgs args = problem(8, 1, std::int64_t{1} << 30, kRow, kCol, kCol);
  args.batch_count = std::int64_t{1} << 30;
  args.a.stride = 1;
  args.b.stride = 0;
  args.c.stride = 8;
  tcgemm::prod::Choice choice;  // row 0, unsplit
  EXPECT_TRUE(refused(size_limits(tcgemm::prod::canonicalize(args), choice), "2^62 bytes"));
  EXPECT_EQ(tcgemm::kernels::prod::workspace_choice(args, choice), 0u);
  args.batch_count = 1 << 20;
  EXPECT_TRUE(size_limits(tcgemm::prod::canonicalize(args), choice).ok());
  // 2^20 entries in 2^11 K splits: past the 32-bit batch coordinate.
  choice.k_splits = 1 << 11;
  EXPECT_TRUE(refused(size_limits(tcgemm::prod::canonicalize(args), choice), "batch_count x K"));
  choice.k_splits = 1 << 10;
  EXPECT_TRUE(size_limits(tcgemm::prod::canonicalize(args), choice).ok());
  choice.k_splits = 1;
  // A copied A whose batch entries (2^20 rows of 2^19) lie 2^40 bytes apart.
  GemmArgs far = problem(1 << 20, 64, 1 << 19, kRow, kCol, kCol);
  far.batch_count = 2;
  far.a.stride = 1;  // off 16 bytes: A is copied
  far.b.stride = 0;
  far.c.stride = std::int64_t{1} << 26;
  ASSERT_TRUE(tcgemm::validate(far).ok()) << tcgemm::validate(far).message;
  ASSERT_EQ(tcgemm::prod::canonicalize(far).a.path, OperandPath::kRepack);
  EXPECT_TRUE(refused(size_limits(tcgemm::prod::canonicalize(far), choice), "2^40 bytes"));
  EXPECT_EQ(tcgemm::kernels::prod::workspace_choice(far, choice), 0u);
  far.m = 1 << 19;  // 2^39 bytes apart: a stride TMA takes
  far.c.ld = far.m;
  far.c.stride = std::int64_t{1} << 25;
  EXPECT_TRUE(size_limits(tcgemm::prod::canonicalize(far), choice).ok());
}

}  // namespace

// A map's L2 fetch: 256 bytes unless its rows are 256 bytes or more apart
// and off a multiple of 256 (padded leading dimensions: docs/hopper-notes.md).
TEST(TensorMapPromotion, FollowsTheRowPitch) {
  constexpr std::uint64_t kBf16 = 2;
  EXPECT_EQ(tcgemm::l2_promotion_bytes(4096 * kBf16), 256u);  // ld 4096
  EXPECT_EQ(tcgemm::l2_promotion_bytes(4104 * kBf16), 128u);  // ld 4104: 16 bytes past 8192
  EXPECT_EQ(tcgemm::l2_promotion_bytes(4112 * kBf16), 128u);
  EXPECT_EQ(tcgemm::l2_promotion_bytes(4160 * kBf16), 128u);  // a multiple of 128 only
  EXPECT_EQ(tcgemm::l2_promotion_bytes(14336 * kBf16), 256u);
  // Rows narrower than 256 bytes lie packed: a 256-byte fetch reads on.
  EXPECT_EQ(tcgemm::l2_promotion_bytes(8 * kBf16), 256u);
  EXPECT_EQ(tcgemm::l2_promotion_bytes(120 * kBf16), 256u);
  EXPECT_EQ(tcgemm::l2_promotion_bytes(136 * kBf16), 128u);
  EXPECT_EQ(tcgemm::l2_promotion_bytes(0), 256u);  // a one-row map
}

namespace {

// The dispatcher remembers the heuristic's picks by HeuristicKey
// (kernels/prod/launch.cpp): two calls with equal keys must get the same
// pick, which holds if the key keeps everything select() reads. Random
// problems (every storage order and dtype, padded leading dimensions,
// element-aligned pointer offsets, batches, beta, SM budgets) against
// copies changed only where the key says the pick does not look (alpha,
// beta's non-zero value, a pointer moved by whole 16-byte steps, an SM
// budget that does not bind): equal keys, equal picks, for the dispatcher's
// pick, the batch-invariant one and a named row's split; and a change of one
// kept field that moves the pick moves the key.
TEST(ProdHeuristicKey, EqualKeysGiveEqualPicks) {
  const tcgemm::prod::DeviceModel device = h200_model();
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto next = [&state](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  const std::int64_t sizes[] = {1, 7, 40, 100, 128, 520, 1000, 2047, 4096, 8192};
  int compared = 0;
  int pick_moves = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t m = sizes[next(10)];
    const std::int64_t n = sizes[next(10)];
    const std::int64_t k = sizes[next(10)];
    const DType in = next(2) == 0 ? DType::kBF16 : DType::kFP16;
    const DType out = next(3) == 0 ? DType::kFP32 : in;
    GemmArgs args = problem(m, n, k, next(2) == 0 ? kRow : kCol, next(2) == 0 ? kRow : kCol,
                            next(2) == 0 ? kRow : kCol, in, out);
    const std::int64_t pads[] = {0, 1, 8};
    args.a.ld += pads[next(3)];
    args.b.ld += pads[next(3)];
    args.c.ld += pads[next(3)];
    args.a.ptr = fake_ptr(2 * next(128));
    args.b.ptr = fake_ptr((std::uintptr_t{1} << 28) + 2 * next(128));
    args.c.ptr = fake_ptr((std::uintptr_t{2} << 28) + tcgemm::size_of(out) * next(64));
    if (next(3) == 0) {
      args.batch_count = 3;
      args.a.stride = next(2) == 0 ? 0 : args.a.ld * (args.a.layout == kRow ? m : k) + next(9);
      args.b.stride = args.a.stride == 0 ? args.b.ld * (args.b.layout == kRow ? k : n)
                                         : next(2) * args.b.ld * (args.b.layout == kRow ? k : n);
      args.c.stride = args.c.ld * (args.c.layout == kRow ? m : n) + next(9);
    }
    args.beta = next(2) == 0 ? 0.0f : 1.0f;
    args.alpha = 1.0f;
    args.sm_count = next(3) == 0 ? 20 : 0;
    ASSERT_TRUE(tcgemm::validate(args).ok()) << tcgemm::validate(args).message;

    GemmArgs same = args;  // only what the key leaves out changes
    same.alpha = -2.5f;
    if (same.beta != 0.0f) same.beta = 0.75f;
    const auto moved = [](const void* p, std::uintptr_t steps) {
      return reinterpret_cast<const std::uint8_t*>(p) + 16 * steps;
    };
    same.a.ptr = moved(args.a.ptr, 1 + next(8));
    same.b.ptr = moved(args.b.ptr, 1 + next(8));
    same.c.ptr = const_cast<std::uint8_t*>(moved(args.c.ptr, 1 + next(8)));
    if (same.sm_count == 0) same.sm_count = 500;  // more than the device: not binding
    for (const int config : {tcgemm::kernels::kAutoConfig, tcgemm::kernels::kInvariantConfig, 0}) {
      const auto key = tcgemm::prod::heuristic_key(args, 0, config, device.sm_count);
      ASSERT_EQ(key, tcgemm::prod::heuristic_key(same, 0, config, device.sm_count))
          << "trial " << trial;
      EXPECT_EQ(tcgemm::prod::HeuristicKeyHash{}(key),
                tcgemm::prod::HeuristicKeyHash{}(
                    tcgemm::prod::heuristic_key(same, 0, config, device.sm_count)));
      const auto pick_of = [&](const GemmArgs& a) {
        const tcgemm::prod::DeviceModel model = tcgemm::prod::budgeted(device, a.sm_count);
        if (config >= 0) {
          return tcgemm::prod::select_split(tcgemm::prod::canonicalize(a), model, config);
        }
        return tcgemm::prod::select(a, model, config == tcgemm::kernels::kInvariantConfig);
      };
      EXPECT_EQ(pick_of(args), pick_of(same)) << "trial " << trial << ", config " << config;
      ++compared;
    }

    // One kept field at a time: where the change moves the pick, it must
    // move the key (a key that dropped the field would hand the old pick
    // back). Pairs that differ in that field only.
    std::vector<std::pair<GemmArgs, GemmArgs>> pairs(7, {args, args});
    pairs[0].second.c.ptr = static_cast<std::uint8_t*>(args.c.ptr) + tcgemm::size_of(out);
    pairs[1].second.c.ld += 1;
    pairs[2].second.a.ld += 1;
    pairs[3].second.b.ld += 1;
    pairs[4].second.beta = args.beta == 0.0f ? 1.0f : 0.0f;
    pairs[5].second.sm_count = args.sm_count == 0 ? 20 : 0;
    pairs[6].second.c.dtype = out == DType::kFP32 ? in : DType::kFP32;
    if (args.batch_count == 1) {
      GemmArgs shared = args;  // batched, A and B one matrix for every entry
      shared.batch_count = 3;
      shared.c.stride = args.c.ld * (args.c.layout == kRow ? m : n);
      GemmArgs per_entry = shared;  // A per entry
      per_entry.a.stride = args.a.ld * (args.a.layout == kRow ? m : k);
      pairs.emplace_back(shared, per_entry);
    }
    for (std::size_t f = 0; f < pairs.size(); ++f) {
      const auto& [from, to] = pairs[f];
      if (!tcgemm::validate(from).ok() || !tcgemm::validate(to).ok()) continue;
      if (tcgemm::prod::select(from, tcgemm::prod::budgeted(device, from.sm_count)) ==
          tcgemm::prod::select(to, tcgemm::prod::budgeted(device, to.sm_count))) {
        continue;
      }
      ++pick_moves;
      EXPECT_NE(tcgemm::prod::heuristic_key(from, 0, -1, device.sm_count),
                tcgemm::prod::heuristic_key(to, 0, -1, device.sm_count))
          << "trial " << trial << ", change " << f << " moves the pick but not the key";
    }
  }
  EXPECT_EQ(compared, 1200);
  // The one-field changes above move some picks (else they test nothing).
  EXPECT_GE(pick_moves, 50);

  // What the key keeps, it tells apart.
  const GemmArgs base = problem(1000, 3000, 1000, kRow, kCol, kCol);
  const auto key = [](const GemmArgs& a, int ordinal = 0, int config = -1) {
    return tcgemm::prod::heuristic_key(a, ordinal, config, 132);
  };
  std::vector<GemmArgs> changed(14, base);
  changed[0].m = 999;
  changed[1].n = 2999;
  changed[2].k = 999;
  changed[3].a.ld = 1001;
  changed[4].b.ld = 1001;
  changed[5].c.ld = 1001;
  changed[6].a.ptr = fake_ptr(2);
  changed[7].c.dtype = DType::kFP32;
  changed[8].c.layout = kRow;
  changed[9].beta = 1.0f;
  changed[10].sm_count = 20;
  changed[11].batch_count = 2;
  changed[12].c.ptr = static_cast<std::uint8_t*>(fake_ptr()) + 2;
  changed[13].b.ptr = static_cast<const std::uint8_t*>(fake_ptr()) + 2;
  for (std::size_t i = 0; i < changed.size(); ++i) {
    EXPECT_NE(key(base), key(changed[i])) << "change " << i;
  }
  GemmArgs per_entry = changed[11];  // batched: A per entry, against one A
  per_entry.a.stride = 1000 * 1000;
  EXPECT_NE(key(changed[11]), key(per_entry));
  EXPECT_NE(key(base), key(base, 1));
  EXPECT_NE(key(base), key(base, 0, tcgemm::kernels::kInvariantConfig));
}

}  // namespace
