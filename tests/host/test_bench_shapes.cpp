// tcgemm-bench's problems, on the host (tools/bench/shapes.h, batch.h,
// contenders.h): the standard sets, strided batches and base offsets as they
// reach the GEMM's arguments, the checks a problem passes before any GPU work,
// the batch-entry arithmetic of verification, which rows --kernels runs, and
// how many launches one timing sample spans.
#include "batch.h"
#include "contenders.h"
#include "sampling.h"
#include "shapes.h"
#include "tuned/tuned.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace tcgemm;
using namespace tcgemm::bench;

constexpr OperandLayouts kTN{Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor};

Problem tn_problem(const Shape& shape, const LdOverride& ld = {}) {
  return make_problem(shape, DType::kBF16, std::nullopt, kTN, 1.0f, 0.0f, ld);
}

std::uintptr_t address(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

bool contains(const std::vector<Shape>& shapes, const Shape& wanted) {
  return std::any_of(shapes.begin(), shapes.end(), [&](const Shape& s) {
    return s.m == wanted.m && s.n == wanted.n && s.k == wanted.k && s.ld_pad == wanted.ld_pad &&
           s.offset == wanted.offset && s.batch == wanted.batch && s.dtype == wanted.dtype;
  });
}

TEST(BenchShapeSets, RaggedHasOddKTightLdPlusOneLongMAndAnOffsetBase) {
  const std::vector<Shape> ragged = *shape_set("ragged");
  EXPECT_TRUE(contains(ragged, {.m = 4095, .n = 4097, .k = 4093}));
  EXPECT_TRUE(contains(ragged, {.m = 4096, .n = 4096, .k = 4093}));
  EXPECT_TRUE(contains(ragged, {.m = 8191, .n = 8192, .k = 8192}));
  EXPECT_TRUE(contains(ragged, {.m = 4096, .n = 4096, .k = 4096, .offset = 1}));
  // ld + 1 on every operand of 4096^3: lda = ldb = ldc = 4097 in TN.
  const Problem plus_one = tn_problem({.m = 4096, .n = 4096, .k = 4096, .ld_pad = 1});
  ASSERT_TRUE(contains(ragged, {.m = 4096, .n = 4096, .k = 4096, .ld_pad = 1}));
  EXPECT_EQ(plus_one.lda, 4097);
  EXPECT_EQ(plus_one.ldb, 4097);
  EXPECT_EQ(plus_one.ldc, 4097);
  // Odd K, tight: TN's lda is K itself.
  EXPECT_EQ(tn_problem({.m = 4096, .n = 4096, .k = 4093}).lda, 4093);
}

// The held-out set shares no problem with the llm and square sets, nor
// with the tuned tables that hold theirs.
TEST(BenchShapeSets, HeldOutSharesNoProblemWithTheTunedSets) {
  const std::vector<Shape> heldout = *shape_set("heldout");
  EXPECT_EQ(heldout.size(), 42u);
  for (const char* tuned : {"llm", "square"}) {
    const std::vector<Shape> set = *shape_set(tuned);
    for (const Shape& s : set) {
      EXPECT_FALSE(contains(heldout, s)) << s.m << "x" << s.n << "x" << s.k << " of " << tuned;
    }
  }
  EXPECT_TRUE(contains(heldout, {.m = 8, .n = 6144, .k = 4096}));
  EXPECT_TRUE(contains(heldout, {.m = 6144, .n = 18944, .k = 3584}));
  // What makes the set held out: no tuned table (data/tuned/*.json, as
  // embedded) holds any of its problems, whatever the layout or GPU.
  ASSERT_FALSE(tuned::embedded_table().empty());
  for (const Shape& s : heldout) {
    for (const tuned::Entry& e : tuned::embedded_table()) {
      EXPECT_FALSE(e.m == s.m && e.n == s.n && e.k == s.k)
          << s.m << "x" << s.n << "x" << s.k << " is in the " << e.device << " table";
    }
  }
}

TEST(BenchShapeSets, BatchedCarriesItsBatchesAndDtypes) {
  ASSERT_NE(std::find(shape_set_names().begin(), shape_set_names().end(), "batched"),
            shape_set_names().end());
  const std::vector<Shape> batched = *shape_set("batched");
  EXPECT_TRUE(
      contains(batched, {.m = 2048, .n = 2048, .k = 2048, .batch = 8, .dtype = DType::kBF16}));
  EXPECT_TRUE(contains(batched, {.m = 8, .n = 64, .k = 8, .batch = 65536, .dtype = DType::kFP16}));
  // The entry's dtype wins over the one asked for; the output follows it.
  const Problem fp16 = make_problem(batched.back(), DType::kBF16, std::nullopt, kTN, 1.0f, 0.0f);
  EXPECT_EQ(fp16.input, DType::kFP16);
  EXPECT_EQ(fp16.output, DType::kFP16);
  EXPECT_FALSE(shape_set("no-such-set").has_value());
  // So the tools refuse --dtype with it (fixes_dtype), and only with it.
  EXPECT_TRUE(fixes_dtype(batched));
  for (std::string_view name : shape_set_names()) {
    if (name != "batched") {
      EXPECT_FALSE(fixes_dtype(*shape_set(name))) << name;
    }
  }
}

TEST(BenchBatch, TightStridesAreOneEntrysSpanAndOneEntryHasNone) {
  // TN 8 x 64 x 8: A 8 x 8 row-major (lda 8), B 8 x 64 column-major (ldb 8),
  // C 8 x 64 column-major (ldc 8).
  const Problem batched = tn_problem({.m = 8, .n = 64, .k = 8, .batch = 3});
  EXPECT_EQ(batched.stride_a, 64);
  EXPECT_EQ(batched.stride_b, 512);
  EXPECT_EQ(batched.stride_c, 512);
  // Padded leading dimensions: the span ends at the last element, not the
  // last padded line.
  const Problem padded = tn_problem({.m = 8, .n = 64, .k = 8, .ld_pad = 8, .batch = 3});
  EXPECT_EQ(padded.stride_a, 7 * 16 + 8);
  EXPECT_EQ(padded.stride_c, 63 * 16 + 8);
  const Problem single = tn_problem({.m = 8, .n = 64, .k = 8});
  EXPECT_EQ(single.stride_a, 0);
  EXPECT_EQ(single.stride_b, 0);
  EXPECT_EQ(single.stride_c, 0);
}

TEST(BenchBatch, ExplicitStridesWinAndZeroSharesAnOperand) {
  LdOverride ld;
  ld.stride_a = 0;
  ld.stride_c = 1000;
  const Problem p = tn_problem({.m = 8, .n = 64, .k = 8, .batch = 4}, ld);
  EXPECT_EQ(p.stride_a, 0);
  EXPECT_EQ(p.stride_b, 512);  // not given: tight
  EXPECT_EQ(p.stride_c, 1000);
  EXPECT_EQ(check_arguments(p), "");
  // A shared: one matrix, however many entries.
  EXPECT_EQ(*operand_bytes(p, Operand::kA), 64 * 2);
  EXPECT_EQ(*operand_bytes(p, Operand::kC), (3 * 1000 + 512) * 2);
}

TEST(BenchBatch, OverlappingEntriesOfCAreRefusedBeforeAnyGpuWork) {
  LdOverride ld;
  ld.stride_c = 0;
  const std::string zero = check_arguments(tn_problem({.m = 8, .n = 64, .k = 8, .batch = 2}, ld));
  EXPECT_NE(zero.find("c.stride=0"), std::string::npos) << zero;
  ld.stride_c = 511;  // one element short of an entry
  EXPECT_NE(check_arguments(tn_problem({.m = 8, .n = 64, .k = 8, .batch = 2}, ld)), "");
  ld.stride_c = 512;
  EXPECT_EQ(check_arguments(tn_problem({.m = 8, .n = 64, .k = 8, .batch = 2}, ld)), "");
}

TEST(BenchBatch, FlopsCountEveryEntry) {
  EXPECT_DOUBLE_EQ(flops(tn_problem({.m = 2048, .n = 2048, .k = 2048, .batch = 8})),
                   8 * 2.0 * 2048.0 * 2048.0 * 2048.0);
  EXPECT_DOUBLE_EQ(flops(tn_problem({.m = 8, .n = 64, .k = 8, .batch = 65536})),
                   65536 * 2.0 * 8 * 64 * 8);
}

TEST(BenchOffset, BasePointersMoveByElementsOfEachOperandsDtype) {
  Problem p = tn_problem({.m = 16, .n = 16, .k = 16, .offset = 1, .batch = 2});
  p.output = DType::kFP32;
  alignas(256) static std::byte a[1024], b[1024], c[4096];
  const GemmArgs args = make_args(p, a, b, c, nullptr);
  EXPECT_EQ(address(args.a.ptr) - address(a), 2u);  // bf16
  EXPECT_EQ(address(args.b.ptr) - address(b), 2u);
  EXPECT_EQ(address(args.c.ptr) - address(c), 4u);  // fp32
  EXPECT_EQ(args.batch_count, 2);
  EXPECT_EQ(args.a.stride, p.stride_a);
  EXPECT_EQ(args.c.stride, p.stride_c);
  // The offset counts in every operand's extent, and a 2-byte-aligned base
  // is what the API accepts.
  EXPECT_EQ(*operand_bytes(p, Operand::kA), (1 + 256 + 256) * 2);
  EXPECT_EQ(check_arguments(tn_problem({.m = 4096, .n = 4096, .k = 4096, .offset = 1})), "");
}

TEST(BenchChecks, SizesThatOverflowAreUsageErrors) {
  const Problem wide =
      tn_problem({.m = 4096, .n = 4096, .k = 4096}, LdOverride{.lda = std::int64_t{1} << 62});
  EXPECT_NE(check_size(wide).find("2^63 bytes"), std::string::npos);
  const Problem many = tn_problem({.m = 65536, .n = 65536, .k = 1, .batch = 1 << 30});
  EXPECT_NE(check_size(many).find("batch 1073741824"), std::string::npos);
  EXPECT_EQ(check_size(tn_problem({.m = 8, .n = 64, .k = 8, .batch = 65536})), "");
}

TEST(BenchBatchEntry, PointersAdvanceByStrideElementsAndStrideZeroStaysPut) {
  Problem p = tn_problem({.m = 8, .n = 64, .k = 8, .batch = 4}, LdOverride{.stride_b = 0});
  p.output = DType::kFP32;
  alignas(256) static std::byte a[1024], b[1024], c[16384];
  const GemmArgs args = make_args(p, a, b, c, nullptr);
  const GemmArgs third = batch_entry(args, 3);
  EXPECT_EQ(address(third.a.ptr) - address(args.a.ptr), 3u * 64 * 2);
  EXPECT_EQ(third.b.ptr, args.b.ptr);
  EXPECT_EQ(address(third.c.ptr) - address(args.c.ptr), 3u * 512 * 4);
  EXPECT_EQ(third.batch_count, 1);
  EXPECT_EQ(third.m, 8);
  EXPECT_EQ(third.c.ld, args.c.ld);
  EXPECT_EQ(batch_entry(args, 0).a.ptr, args.a.ptr);
}

tcgemm::testing::ErrorStats entry_stats(double rel_fro, double max_abs,
                                        std::int64_t nonfinite = 0) {
  tcgemm::testing::ErrorStats s;
  s.rel_fro = rel_fro;
  s.max_abs = max_abs;
  s.max_row = 1;
  s.max_col = 2;
  s.nonfinite = nonfinite;
  return s;
}

TEST(BenchBatchErrors, OneEntryIsThatEntrysStatistics) {
  BatchErrorStats batch;
  add_entry(batch, entry_stats(3e-3, 0.25), 0);
  EXPECT_EQ(batch.rel_fro, 3e-3);
  EXPECT_EQ(batch.max_abs, 0.25);
  EXPECT_EQ(batch.max_row, 1);
  EXPECT_EQ(batch.rel_fro_entry, 0);
  EXPECT_EQ(batch.max_abs_entry, 0);
  EXPECT_TRUE(batch.passed(1e-2));
}

TEST(BenchBatchErrors, OneWrongEntryFailsTheBatch) {
  BatchErrorStats batch;
  for (std::int64_t entry = 0; entry < 1000; ++entry) {
    add_entry(batch, entry_stats(entry == 637 ? 1.0 : 3e-3, entry == 12 ? 9.0 : 0.5), entry);
  }
  EXPECT_EQ(batch.rel_fro, 1.0);
  EXPECT_EQ(batch.rel_fro_entry, 637);
  EXPECT_EQ(batch.max_abs, 9.0);
  EXPECT_EQ(batch.max_abs_entry, 12);
  EXPECT_FALSE(batch.passed(1e-2));
}

TEST(BenchBatchErrors, NanIsWorstTiesKeepTheLowerEntryAndNonfiniteAddsUp) {
  BatchErrorStats batch;
  add_entry(batch, entry_stats(0.5, 1.0, 2), 0);
  add_entry(batch, entry_stats(std::nan(""), 1.0, 3), 1);
  add_entry(batch, entry_stats(0.9, 1.0), 2);
  EXPECT_TRUE(std::isnan(batch.rel_fro));
  EXPECT_EQ(batch.rel_fro_entry, 1);
  EXPECT_EQ(batch.max_abs_entry, 0);  // equal max_abs: the first
  EXPECT_EQ(batch.nonfinite, 5);
  // An entry with no finite element has no max_abs (max_row -1): it never wins it.
  BatchErrorStats poisoned;
  tcgemm::testing::ErrorStats all_nan;
  all_nan.nonfinite = 64;
  add_entry(poisoned, all_nan, 0);
  EXPECT_EQ(poisoned.max_abs_entry, -1);
  add_entry(poisoned, entry_stats(1e-3, 0.1), 1);
  EXPECT_EQ(poisoned.max_abs_entry, 1);
  EXPECT_FALSE(poisoned.passed(1e-2));
}

TEST(BenchBatchErrors, MismatchesAddUpOverTheEntries) {
  BatchErrorStats batch;
  std::int64_t entry = 0;
  for (const std::int64_t wrong : {0, 4, 0, 1}) {
    tcgemm::testing::ErrorStats e = entry_stats(1e-3, 0.1);
    e.mismatches = wrong;
    add_entry(batch, e, entry++);
  }
  EXPECT_EQ(batch.mismatches, 5);
}

std::vector<std::string> names(const std::vector<Contender>& contenders) {
  std::vector<std::string> out;
  for (const Contender& c : contenders) out.emplace_back(c.name);
  return out;
}

TEST(BenchContenders, DefaultRunsEveryKernelThenTheDispatcherThenCublas) {
  const std::vector<Contender> all = select_contenders({});
  ASSERT_EQ(all.size(), registry().size() + 2);
  EXPECT_EQ(all[all.size() - 2].kind, Contender::Kind::kDispatcher);
  EXPECT_EQ(all[all.size() - 2].name, "tcgemm");
  EXPECT_EQ(all.back().kind, Contender::Kind::kCublas);
  EXPECT_EQ(all.back().name, "cublas");
  for (std::size_t i = 0; i < registry().size(); ++i) {
    EXPECT_EQ(all[i].kernel, &registry()[i]);
  }
}

TEST(BenchContenders, KernelsFilterSelectsTheDispatcherLikeAKernelName) {
  EXPECT_EQ(names(select_contenders({"tcgemm"})), (std::vector<std::string>{"tcgemm", "cublas"}));
  const std::vector<std::string> ladder = names(select_contenders({"hopper-"}));
  EXPECT_EQ(std::count(ladder.begin(), ladder.end(), "tcgemm"), 0);
  const std::vector<std::string> both = names(select_contenders({"hopper-14", "tcgemm"}));
  EXPECT_EQ(both, (std::vector<std::string>{"hopper-14", "tcgemm", "cublas"}));
  // Nothing matched: only cuBLAS, which main() reports as a usage error.
  EXPECT_EQ(names(select_contenders({"no-such-kernel"})), (std::vector<std::string>{"cublas"}));
}

// One way of timing for all of a problem's rows: batched as soon as one row
// runs under 50 us, each for ~0.5 ms and at least 2 launches; otherwise one
// launch a sample.
TEST(BenchSampling, OneShortRowBatchesEveryRow) {
  const std::vector<double> mixed{0.030, 0.060, 0.800};
  EXPECT_EQ(launches_per_sample(mixed), (std::vector<int>{17, 9, 2}));
  const std::vector<double> long_only{0.050, 0.2};
  EXPECT_EQ(launches_per_sample(long_only), (std::vector<int>{1, 1}));
  // A failed warm-up (0) neither sets nor takes the method.
  const std::vector<double> failed{0.0, 0.070};
  EXPECT_EQ(launches_per_sample(failed), (std::vector<int>{1, 1}));
  const std::vector<double> failed_short{0.0, 0.010};
  EXPECT_EQ(launches_per_sample(failed_short)[1], 50);
  // Near the events' resolution the batch is bounded.
  const std::vector<double> tiny{0.00001};
  EXPECT_EQ(launches_per_sample(tiny), (std::vector<int>{10000}));
}

TEST(BenchSampling, MedianIsTheMiddleSampleOrTheMeanOfTheTwo) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
}

}  // namespace
