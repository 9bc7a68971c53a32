// tcgemm::blas (include/tcgemm/blas.h): cuBLAS's GEMM arguments mapped onto
// GemmArgs. The mapping is checked against BLAS's own rules, not against the
// code: a column-major A used transposed is k x m with lda >= k, so the
// smallest lda cuBLAS accepts for each op must pass tcgemm::validate and
// one less must be refused naming lda. No GPU needed.
#include <gtest/gtest.h>
#include <tcgemm/blas.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <string>

namespace {

using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::Layout;
using tcgemm::Status;
using tcgemm::StatusCode;
using tcgemm::blas::Op;

const void* const kA = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
const void* const kB = reinterpret_cast<const void*>(std::uintptr_t{0x20000});
void* const kC = reinterpret_cast<void*>(std::uintptr_t{0x30000});
constexpr std::int64_t kM = 64, kN = 48, kK = 32;

// The smallest lda (ldb) BLAS allows: the stored matrix's rows.
std::int64_t min_ld_a(Op op) { return op == Op::kN ? kM : kK; }
std::int64_t min_ld_b(Op op) { return op == Op::kN ? kK : kN; }

GemmArgs args_of(Op ta, Op tb, std::int64_t lda, std::int64_t ldb, std::int64_t ldc = kM) {
  GemmArgs args;
  const Status s =
      tcgemm::blas::gemm_ex_args(ta, tb, kM, kN, kK, 2.0f, kA, DType::kBF16, lda, kB, DType::kBF16,
                                 ldb, 0.5f, kC, DType::kFP32, ldc, nullptr, args);
  EXPECT_TRUE(s.ok()) << s.message;
  return args;
}

bool names(const Status& s, const std::string& what) {
  return s.code == StatusCode::kInvalidValue && s.message.find(what) != std::string::npos;
}

constexpr Op kOps[] = {Op::kN, Op::kT, Op::kC};

TEST(Blas, MapsEachOpToTheLayoutItStoresAndKeepsTheRest) {
  for (Op ta : kOps) {
    for (Op tb : kOps) {
      const GemmArgs a = args_of(ta, tb, 100, 101, 102);
      EXPECT_EQ(a.a.layout, ta == Op::kN ? Layout::kColMajor : Layout::kRowMajor);
      EXPECT_EQ(a.b.layout, tb == Op::kN ? Layout::kColMajor : Layout::kRowMajor);
      EXPECT_EQ(a.c.layout, Layout::kColMajor);
      EXPECT_EQ(a.a.ld, 100);
      EXPECT_EQ(a.b.ld, 101);
      EXPECT_EQ(a.c.ld, 102);
      EXPECT_EQ(a.m, kM);
      EXPECT_EQ(a.n, kN);
      EXPECT_EQ(a.k, kK);
      EXPECT_EQ(a.a.ptr, kA);
      EXPECT_EQ(a.b.ptr, kB);
      EXPECT_EQ(a.c.ptr, kC);
      EXPECT_EQ(a.a.dtype, DType::kBF16);
      EXPECT_EQ(a.c.dtype, DType::kFP32);
      EXPECT_EQ(a.alpha, 2.0f);
      EXPECT_EQ(a.beta, 0.5f);
      EXPECT_EQ(a.batch_count, 1);
    }
  }
}

TEST(Blas, TheSmallestLeadingDimensionsBlasAllowsAreAcceptedAndOneLessIsNot) {
  for (Op ta : kOps) {
    for (Op tb : kOps) {
      SCOPED_TRACE("transa " + std::to_string(static_cast<int>(ta)) + ", transb " +
                   std::to_string(static_cast<int>(tb)));
      EXPECT_TRUE(tcgemm::validate(args_of(ta, tb, min_ld_a(ta), min_ld_b(tb))).ok());
      EXPECT_TRUE(names(tcgemm::validate(args_of(ta, tb, min_ld_a(ta) - 1, min_ld_b(tb))),
                        "lda=" + std::to_string(min_ld_a(ta) - 1)));
      EXPECT_TRUE(names(tcgemm::validate(args_of(ta, tb, min_ld_a(ta), min_ld_b(tb) - 1)),
                        "ldb=" + std::to_string(min_ld_b(tb) - 1)));
      EXPECT_TRUE(names(tcgemm::validate(args_of(ta, tb, min_ld_a(ta), min_ld_b(tb), kM - 1)),
                        "ldc=" + std::to_string(kM - 1)));
    }
  }
}

TEST(Blas, AnOpOutsideTheEnumIsNamedAndLeavesArgsAlone) {
  GemmArgs args;
  args.m = 7;
  const Op bad = static_cast<Op>(3);
  EXPECT_TRUE(
      names(tcgemm::blas::gemm_ex_args(bad, Op::kN, kM, kN, kK, 1.0f, kA, DType::kBF16, kM, kB,
                                       DType::kBF16, kK, 0.0f, kC, DType::kBF16, kM, nullptr, args),
            "transa is 3"));
  EXPECT_TRUE(names(tcgemm::blas::gemm_ex_args(Op::kN, static_cast<Op>(-1), kM, kN, kK, 1.0f, kA,
                                               DType::kBF16, kM, kB, DType::kBF16, kK, 0.0f, kC,
                                               DType::kBF16, kM, nullptr, args),
                    "transb is -1"));
  EXPECT_EQ(args.m, 7);
  // gemm_ex refuses it before anything else (no device is looked for).
  EXPECT_TRUE(names(tcgemm::blas::gemm_ex(bad, Op::kN, kM, kN, kK, 1.0f, kA, DType::kBF16, kM, kB,
                                          DType::kBF16, kK, 0.0f, kC, DType::kBF16, kM),
                    "transa"));
}

TEST(Blas, GemmExRefusesBadArgumentsAsGemmDoesWithoutADevice) {
  // lda below what op(A) = A^T needs (k): refused before any device query.
  EXPECT_TRUE(names(tcgemm::blas::gemm_ex(Op::kT, Op::kN, kM, kN, kK, 1.0f, kA, DType::kBF16,
                                          kK - 1, kB, DType::kBF16, kK, 0.0f, kC, DType::kBF16, kM),
                    "lda="));
  // M == 0: BLAS's quick return, which needs no device.
  EXPECT_TRUE(tcgemm::blas::gemm_ex(Op::kN, Op::kN, 0, kN, kK, 1.0f, nullptr, DType::kBF16, 1,
                                    nullptr, DType::kBF16, kK, 0.0f, nullptr, DType::kBF16, 1)
                  .ok());
}

TEST(Blas, StridedBatchedMapsTheStridesAndChecksCsEntries) {
  GemmArgs args;
  ASSERT_TRUE(tcgemm::blas::gemm_strided_batched_ex_args(
                  Op::kT, Op::kN, kM, kN, kK, 1.0f, kA, DType::kFP16, kK, kK * kM, kB, DType::kFP16,
                  kK, 0, 0.0f, kC, DType::kFP16, kM, kM * kN, 5, nullptr, args)
                  .ok());
  EXPECT_EQ(args.batch_count, 5);
  EXPECT_EQ(args.a.stride, kK * kM);
  EXPECT_EQ(args.b.stride, 0);  // one B shared by every entry, as cuBLAS allows
  EXPECT_EQ(args.c.stride, kM * kN);
  EXPECT_TRUE(tcgemm::validate(args).ok());
  // C entries that overlap: refused naming C's stride.
  args.c.stride = kM * kN - 1;
  EXPECT_TRUE(names(tcgemm::validate(args), "c.stride"));
  // No entries: nothing to run, success without a device, as in cuBLAS;
  // a negative count is refused.
  EXPECT_TRUE(tcgemm::blas::gemm_strided_batched_ex(Op::kT, Op::kN, kM, kN, kK, 1.0f, kA,
                                                    DType::kFP16, kK, kK * kM, kB, DType::kFP16, kK,
                                                    0, 0.0f, kC, DType::kFP16, kM, kM * kN, 0)
                  .ok());
  const tcgemm::Status negative = tcgemm::blas::gemm_strided_batched_ex(
      Op::kT, Op::kN, kM, kN, kK, 1.0f, kA, DType::kFP16, kK, kK * kM, kB, DType::kFP16, kK, 0,
      0.0f, kC, DType::kFP16, kM, kM * kN, -1);
  EXPECT_TRUE(names(negative, "batch_count"));
  // The limit this entry point has (cuBLAS's), not gemm's >= 1.
  EXPECT_NE(negative.message.find(">= 0"), std::string::npos) << negative.message;
}

// With no entries the pointers need not be given, but the rest is checked
// as cuBLAS checks it: a negative size or a short leading dimension is
// refused though there is nothing to run.
TEST(Blas, NoEntriesStillChecksSizesAndLeadingDimensions) {
  const auto none = [](std::int64_t m, std::int64_t lda, std::int64_t ldc, const void* a) {
    return tcgemm::blas::gemm_strided_batched_ex(Op::kT, Op::kN, m, kN, kK, 1.0f, a,
                                                 DType::kBF16, lda, 0, nullptr, DType::kBF16, kK,
                                                 0, 0.0f, nullptr, DType::kBF16, ldc, 0, 0);
  };
  EXPECT_TRUE(none(kM, kK, kM, nullptr).ok());
  EXPECT_TRUE(none(kM, kK, kM, kA).ok());
  EXPECT_TRUE(names(none(-1, kK, kM, nullptr), "m=-1"));
  EXPECT_TRUE(names(none(kM, kK - 1, kM, nullptr), "lda"));
  EXPECT_TRUE(names(none(kM, kK, kM - 1, nullptr), "ldc"));
  // The options too, as gemm checks them on its quick returns.
  const auto with = [](const tcgemm::GemmOptions& options) {
    return tcgemm::blas::gemm_strided_batched_ex(Op::kT, Op::kN, kM, kN, kK, 1.0f, nullptr,
                                                 DType::kBF16, kK, 0, nullptr, DType::kBF16, kK, 0,
                                                 0.0f, nullptr, DType::kBF16, kM, 0, 0, nullptr,
                                                 options);
  };
  EXPECT_TRUE(names(with({.kernel = "no_such_kernel"}), "options.kernel"));
  EXPECT_TRUE(names(with({.kernel = "prod-128x256", .batch_invariant = true}), "batch_invariant"));
  EXPECT_TRUE(with({.kernel = "prod-128x256"}).ok());
}

}  // namespace
