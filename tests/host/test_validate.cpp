// tcgemm::validate and the host-side paths of tcgemm::gemm and
// tcgemm::workspace_size: every class of bad argument is refused with
// kInvalidValue and a message naming it, and nothing here needs a GPU
// (validate never touches the device; gemm refuses bad arguments before it
// looks for one).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <tcgemm/gemm_plan.h>
#include <tcgemm/tcgemm.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::Layout;
using tcgemm::Status;
using tcgemm::StatusCode;

// Addresses that are never dereferenced: validate only looks at them. Each is
// aligned to 256 bytes like a cudaMalloc result.
const void* const kFakeA = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
const void* const kFakeB = reinterpret_cast<const void*>(std::uintptr_t{0x20000});
void* const kFakeC = reinterpret_cast<void*>(std::uintptr_t{0x30000});

// Natural leading dimension of a rows x cols matrix: the length of one line.
std::int64_t natural_ld(std::int64_t rows, std::int64_t cols, Layout layout) {
  const std::int64_t ld = layout == Layout::kRowMajor ? cols : rows;
  return ld < 1 ? 1 : ld;
}

// A well-formed problem: M x K times K x N, the given layouts, tight lds.
GemmArgs make_args(std::int64_t m, std::int64_t n, std::int64_t k,
                   Layout la = Layout::kRowMajor, Layout lb = Layout::kColMajor,
                   Layout lc = Layout::kColMajor, DType in = DType::kBF16,
                   DType out = DType::kBF16) {
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {kFakeA, in, la, natural_ld(m, k, la), 0};
  args.b = {kFakeB, in, lb, natural_ld(k, n, lb), 0};
  args.c = {kFakeC, out, lc, natural_ld(m, n, lc), 0};
  return args;
}

GemmArgs tn_args() { return make_args(64, 48, 32); }

// kInvalidValue whose message contains `needle` (the argument's name).
::testing::AssertionResult InvalidNaming(const Status& s, std::string_view needle) {
  if (s.code != StatusCode::kInvalidValue) {
    return ::testing::AssertionFailure()
           << "expected invalid value naming '" << needle << "', got "
           << tcgemm::to_string(s.code) << ": " << s.message;
  }
  if (s.message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message does not name '" << needle << "': " << s.message;
  }
  return ::testing::AssertionSuccess() << s.message;
}

::testing::AssertionResult Ok(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << tcgemm::to_string(s.code) << ": " << s.message;
}

bool has_cuda_device() {
  int count = 0;
  const bool found = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();  // clear the sticky "no driver" error, if any
  return found;
}

// ---- well-formed problems ---------------------------------------------------

TEST(Validate, AcceptsAWellFormedTnProblem) { EXPECT_TRUE(Ok(tcgemm::validate(tn_args()))); }

TEST(Validate, AcceptsEveryLayoutCombination) {
  for (Layout la : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Layout lb : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Layout lc : {Layout::kRowMajor, Layout::kColMajor}) {
        EXPECT_TRUE(Ok(tcgemm::validate(make_args(17, 9, 33, la, lb, lc))))
            << "layouts a=" << tcgemm::to_string(la) << " b=" << tcgemm::to_string(lb)
            << " c=" << tcgemm::to_string(lc);
      }
    }
  }
}

TEST(Validate, AcceptsEveryInputAndOutputDType) {
  for (DType in : {DType::kBF16, DType::kFP16}) {
    for (DType out : {DType::kBF16, DType::kFP16, DType::kFP32}) {
      EXPECT_TRUE(Ok(tcgemm::validate(make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor,
                                                Layout::kColMajor, in, out))))
          << "in=" << tcgemm::to_string(in) << " out=" << tcgemm::to_string(out);
    }
  }
}

TEST(Validate, AcceptsLeadingDimensionsLargerThanTheMatrix) {
  GemmArgs args = tn_args();
  args.a.ld += 8;
  args.b.ld += 1;
  args.c.ld += 3;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, AcceptsSixtyFourBitSizes) {
  // 2^33 x 8 x 8: M does not fit in 32 bits; the spans still fit in 64.
  GemmArgs args = make_args(std::int64_t{1} << 33, 8, 8);
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

// ---- sizes --------------------------------------------------------------------

TEST(Validate, RejectsNegativeM) {
  GemmArgs args = tn_args();
  args.m = -1;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "m=-1"));
}

TEST(Validate, RejectsNegativeN) {
  GemmArgs args = tn_args();
  args.n = -5;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "n=-5"));
}

TEST(Validate, RejectsNegativeK) {
  GemmArgs args = tn_args();
  args.k = -7;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "k=-7"));
}

TEST(Validate, RejectsBatchCountZero) {
  GemmArgs args = tn_args();
  args.batch_count = 0;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "batch_count"));
}

TEST(Validate, RejectsNegativeBatchCount) {
  GemmArgs args = tn_args();
  args.batch_count = -3;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "batch_count"));
}

TEST(Validate, RejectsANegativeSmBudgetAndAcceptsAnyOther) {
  GemmArgs a = tn_args();
  a.sm_count = -1;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(a), "sm_count=-1"));
  for (int sms : {0, 1, 100000}) {
    a.sm_count = sms;
    EXPECT_TRUE(Ok(tcgemm::validate(a))) << sms;
  }
}

TEST(Validate, RejectsSpanThatOverflows64Bits) {
  // (2^33 - 1) rows of lda = 2^31 elements: the last element's index needs
  // more than 63 bits.
  GemmArgs args = make_args(std::int64_t{1} << 33, 8, std::int64_t{1} << 31);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "address space"));
}

TEST(Validate, RejectsSpanWhoseBytesOverflow64Bits) {
  // The element count fits in int64, the byte count does not.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  GemmArgs args = make_args(kMax, 1, 1);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "address space"));
  args = make_args(std::int64_t{1} << 62, 1, 1, Layout::kRowMajor, Layout::kColMajor,
                   Layout::kColMajor, DType::kBF16, DType::kFP32);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "address space"));
}

TEST(Validate, RejectsMatrixThatWrapsTheAddressSpace) {
  GemmArgs args = make_args(8, 8, 8);
  args.a.ptr = reinterpret_cast<const void*>(std::uintptr_t{0xFFFFFFFFFFFFFFC0});
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a: the matrix"));
}

// ---- scalars ------------------------------------------------------------------

TEST(Validate, RejectsNonFiniteAlpha) {
  GemmArgs args = tn_args();
  args.alpha = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "alpha"));
  args.alpha = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "alpha"));
}

TEST(Validate, RejectsNonFiniteBeta) {
  GemmArgs args = tn_args();
  args.beta = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "beta"));
  args.beta = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "beta"));
}

// ---- pointers -----------------------------------------------------------------

TEST(Validate, RejectsNullA) {
  GemmArgs args = tn_args();
  args.a.ptr = nullptr;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a is a null pointer"));
}

TEST(Validate, RejectsNullB) {
  GemmArgs args = tn_args();
  args.b.ptr = nullptr;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "b is a null pointer"));
}

TEST(Validate, RejectsNullC) {
  GemmArgs args = tn_args();
  args.c.ptr = nullptr;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c is a null pointer"));
}

TEST(Validate, AllowsNullAAndBWhenKIsZero) {
  // K == 0 computes C = beta * C: A and B are never read (BLAS).
  GemmArgs args = make_args(64, 48, 0);
  args.a.ptr = nullptr;
  args.b.ptr = nullptr;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, RejectsNullCWhenKIsZero) {
  // K == 0 still writes C (C = beta * C).
  GemmArgs args = make_args(64, 48, 0);
  args.c.ptr = nullptr;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c is a null pointer"));
}

TEST(Validate, AllowsNullCWhenNothingTouchesIt) {
  // K == 0 or alpha == 0 with beta == 1 is C = C: nothing is read or written
  // (gemm() returns at once), so C is not checked; with any other beta C is.
  for (const bool k_zero : {true, false}) {
    GemmArgs args = make_args(64, 48, k_zero ? 0 : 32);
    if (!k_zero) args.alpha = 0.0f;
    args.a.ptr = nullptr;
    args.b.ptr = nullptr;
    args.c.ptr = nullptr;
    args.beta = 1.0f;
    EXPECT_TRUE(Ok(tcgemm::validate(args))) << k_zero;
    args.beta = 2.0f;
    EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c is a null pointer")) << k_zero;
  }
}

TEST(Validate, AllowsNullPointersWhenMOrNIsZero) {
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 48}, {64, 0}, {0, 0}}) {
    GemmArgs args = make_args(m, n, 32);
    args.a.ptr = nullptr;
    args.b.ptr = nullptr;
    args.c.ptr = nullptr;
    EXPECT_TRUE(Ok(tcgemm::validate(args))) << "m=" << m << " n=" << n;
  }
}

TEST(Validate, RejectsAPointerMisalignedForItsElement) {
  GemmArgs args = tn_args();
  args.a.ptr = reinterpret_cast<const void*>(std::uintptr_t{0x10001});
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "aligned"));
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a "));
}

TEST(Validate, RejectsAnFp32OutputPointerMisalignedForItsElement) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor,
                            DType::kBF16, DType::kFP32);
  args.c.ptr = reinterpret_cast<void*>(std::uintptr_t{0x30002});  // 2-byte, not 4-byte, aligned
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c is not aligned"));
}

// ---- leading dimensions ---------------------------------------------------------
// Row-major needs ld >= cols, column-major ld >= rows (and always ld >= 1).

TEST(Validate, RejectsLdaSmallerThanRowMajorCols) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor);
  args.a.ld = 31;  // A is 64 x 32
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "lda=31"));
}

TEST(Validate, RejectsLdaSmallerThanColMajorRows) {
  GemmArgs args = make_args(64, 48, 32, Layout::kColMajor);
  args.a.ld = 63;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "lda=63"));
}

TEST(Validate, ChecksColMajorLdAgainstRowsNotCols) {
  // A col-major 64 x 32: ld = 40 covers the 32 columns but not the 64 rows a
  // column holds, so it is refused; ld = 64 passes. Catches a swapped check.
  GemmArgs args = make_args(64, 48, 32, Layout::kColMajor);
  args.a.ld = 40;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "lda=40"));
  args.a.ld = 64;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, RejectsLdbSmallerThanRowMajorCols) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kRowMajor);
  args.b.ld = 47;  // B is 32 x 48
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "ldb=47"));
}

TEST(Validate, RejectsLdbSmallerThanColMajorRows) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor);
  args.b.ld = 31;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "ldb=31"));
}

TEST(Validate, RejectsLdcSmallerThanRowMajorCols) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor, Layout::kRowMajor);
  args.c.ld = 47;  // C is 64 x 48
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "ldc=47"));
}

TEST(Validate, RejectsLdcSmallerThanColMajorRows) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor);
  args.c.ld = 63;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "ldc=63"));
}

TEST(Validate, RejectsZeroLeadingDimensionEvenForAnEmptyMatrix) {
  // BLAS requires ld >= max(1, rows): an M == 0 problem still needs ldc >= 1.
  GemmArgs args = make_args(0, 48, 32);
  args.c.ld = 0;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "ldc=0"));
}

// ---- dtypes and layouts ------------------------------------------------------------

TEST(Validate, RejectsUnknownInputDType) {
  GemmArgs args = tn_args();
  args.a.dtype = static_cast<DType>(7);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.dtype"));
  args = tn_args();
  args.b.dtype = static_cast<DType>(-1);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "b.dtype"));
}

TEST(Validate, RejectsUnknownOutputDType) {
  GemmArgs args = tn_args();
  args.c.dtype = static_cast<DType>(42);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.dtype"));
}

TEST(Validate, RejectsFp32Inputs) {
  GemmArgs args = make_args(64, 48, 32, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor,
                            DType::kFP32, DType::kFP32);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.dtype"));
  args = tn_args();
  args.b.dtype = DType::kFP32;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "b.dtype"));
}

TEST(Validate, RejectsInputDTypesThatDiffer) {
  GemmArgs args = tn_args();
  args.a.dtype = DType::kBF16;
  args.b.dtype = DType::kFP16;
  const Status s = tcgemm::validate(args);
  EXPECT_TRUE(InvalidNaming(s, "b.dtype"));
  EXPECT_TRUE(InvalidNaming(s, "differs"));
}

TEST(Validate, RejectsUnknownLayout) {
  GemmArgs args = tn_args();
  args.a.layout = static_cast<Layout>(2);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.layout"));
  args = tn_args();
  args.b.layout = static_cast<Layout>(-1);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "b.layout"));
  args = tn_args();
  args.c.layout = static_cast<Layout>(9);
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.layout"));
}

// ---- batches --------------------------------------------------------------------------

GemmArgs batched_args(std::int64_t batch_count) {
  GemmArgs args = tn_args();
  args.batch_count = batch_count;
  args.a.stride = args.m * args.k;
  args.b.stride = args.k * args.n;
  args.c.stride = args.m * args.n;
  return args;
}

TEST(Validate, AcceptsPackedBatches) { EXPECT_TRUE(Ok(tcgemm::validate(batched_args(4)))); }

TEST(Validate, RejectsNegativeBatchStride) {
  GemmArgs args = batched_args(4);
  args.a.stride = -1;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.stride"));
  args = batched_args(4);
  args.b.stride = -8;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "b.stride"));
  args = batched_args(4);
  args.c.stride = -4096;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.stride"));
  // Also where the operand is not read: a quick return (alpha = 0 reads
  // neither A nor B; beta = 1 without a product leaves C alone) checks the
  // strides as it checks alpha and beta.
  args = batched_args(4);
  args.alpha = 0.0f;
  args.a.stride = -16;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.stride"));
  args.a.stride = args.m * args.k;
  args.beta = 1.0f;
  args.c.stride = -16;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.stride"));
}

TEST(Validate, RejectsOverlappingOutputBatches) {
  GemmArgs args = batched_args(2);
  args.c.stride = args.m * args.n - 1;  // entry 1 starts inside entry 0
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.stride"));
  args.c.stride = 0;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.stride"));
}

TEST(Validate, AllowsInputsSharedAcrossBatches) {
  // Stride 0 on an input broadcasts it: reading it twice is harmless.
  GemmArgs args = batched_args(3);
  args.a.stride = 0;
  args.b.stride = 0;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, IgnoresStridesWhenBatchCountIsOne) {
  GemmArgs args = tn_args();
  args.a.stride = -1;
  args.c.stride = -1;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, RejectsBatchSpanThatOverflows64Bits) {
  GemmArgs args = batched_args(2);
  args.a.stride = std::numeric_limits<std::int64_t>::max() - 10;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "a.stride"));
}

TEST(Validate, AcceptsOutputBatchesSideBySideWithinEachColumn) {
  // Two 64-row entries interleaved in columns of ldc = 128: disjoint.
  GemmArgs args = batched_args(2);
  args.c.ld = 2 * args.m;
  args.c.stride = args.m;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
  args.c.stride = args.m - 1;  // now they share a row
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "c.stride"));
}

TEST(Validate, AcceptsOutputBatchesInterleavedAcrossLines) {
  // C row-major 3 x 2, ldc = 4, stride 6: entry 0 holds offsets {0,1,4,5,8,9},
  // entry 1 {6,7,10,11,14,15}. Disjoint, though entry 1 starts inside entry 0.
  GemmArgs args = make_args(3, 2, 8, Layout::kRowMajor, Layout::kColMajor, Layout::kRowMajor);
  args.batch_count = 2;
  args.c.ld = 4;
  args.c.stride = 6;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
  args.c.stride = 5;  // entry 1's (0, 0) is entry 0's (1, 1)
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "overlap"));
}

// Whether two of the batch entries of a rows x cols C share an element,
// found by marking every element of every entry.
bool entries_share_an_element(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t ld,
                              std::int64_t stride, std::int64_t batch) {
  const std::int64_t lines = layout == Layout::kRowMajor ? rows : cols;
  const std::int64_t len = layout == Layout::kRowMajor ? cols : rows;
  std::vector<int> owner(static_cast<std::size_t>((batch - 1) * stride + lines * ld), -1);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t i = 0; i < lines; ++i) {
      for (std::int64_t j = 0; j < len; ++j) {
        int& o = owner[static_cast<std::size_t>(b * stride + i * ld + j)];
        if (o >= 0) return true;
        o = static_cast<int>(b);
      }
    }
  }
  return false;
}

TEST(Validate, RefusesExactlyTheOutputBatchesThatOverlap) {
  // Every small C (both layouts, ldc tight to tight + 5, every stride up to
  // past the span, 2 to 5 entries) against a brute-force marking of its
  // elements: validate refuses C's stride exactly when two entries meet.
  int refused = 0;
  int accepted = 0;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (std::int64_t rows = 1; rows <= 4; ++rows) {
      for (std::int64_t cols = 1; cols <= 4; ++cols) {
        const std::int64_t len = layout == Layout::kRowMajor ? cols : rows;
        for (std::int64_t ld = len; ld <= len + 5; ++ld) {
          const std::int64_t span = (layout == Layout::kRowMajor ? rows : cols) * ld;
          for (std::int64_t stride = 0; stride <= span + 1; ++stride) {
            for (std::int64_t batch = 2; batch <= 5; ++batch) {
              GemmArgs args =
                  make_args(rows, cols, 8, Layout::kRowMajor, Layout::kColMajor, layout);
              args.batch_count = batch;
              args.c.ld = ld;
              args.c.stride = stride;
              const bool overlap = entries_share_an_element(rows, cols, layout, ld, stride, batch);
              const Status s = tcgemm::validate(args);
              if (overlap) {
                EXPECT_TRUE(InvalidNaming(s, "c.stride"))
                    << rows << " x " << cols << " " << tcgemm::to_string(layout) << " ldc=" << ld
                    << " stride=" << stride << " batch=" << batch;
                ++refused;
              } else {
                EXPECT_TRUE(Ok(s)) << rows << " x " << cols << " " << tcgemm::to_string(layout)
                                   << " ldc=" << ld << " stride=" << stride << " batch=" << batch;
                ++accepted;
              }
            }
          }
        }
      }
    }
  }
  // Both answers occur often (the sweep is not one-sided).
  EXPECT_GT(refused, 1000);
  EXPECT_GT(accepted, 1000);
}

TEST(Validate, ChecksLargeInterleavedOutputBatchesByTheShorterWalk) {
  // C column-major 1 x 2^22 (2^22 lines of one element, ldc = 2^22) with a
  // stride of 1: entry b is row b of every column. The walk over lines is one
  // step long; the walk over entries, 2^22 steps, would pass the 2^20 cap and
  // end "too finely interleaved".
  GemmArgs args = make_args(1, 1 << 22, 8, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor);
  args.batch_count = 1 << 22;
  args.c.ld = 1 << 22;
  args.c.stride = 1;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
  args.batch_count = (1 << 22) + 1;  // entry 2^22 is entry 0's second column
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "overlap"));
  // ldc = 2^21, stride 2^21 + 1: entries 2^21 - 2 apart at most never meet
  // (t * (2^21 + 1) = p * 2^21 needs t a multiple of 2^21), but both walks
  // are 2^21 long, over the cap: refused as unverifiable (such entries would
  // hold 2^42 elements), not walked.
  args = make_args(1, 1 << 21, 8, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor);
  args.batch_count = (1 << 21) - 1;
  args.c.ld = 1 << 21;
  args.c.stride = (1 << 21) + 1;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "too finely"));
  // With stride 3 and ldc = 2 entries 0 and 2 meet at once (6 = 3 * 2),
  // however long the walks would be.
  args = make_args(1, 1 << 22, 8, Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor);
  args.batch_count = 1 << 22;
  args.c.ld = 2;
  args.c.stride = 3;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "overlap"));
}

// ---- the GEMM workspace ------------------------------------------------------------------

// A fake workspace address, 256-byte aligned like a cudaMalloc result.
void* const kFakeWorkspace = reinterpret_cast<void*>(std::uintptr_t{0x40000});

TEST(Validate, AcceptsAnAlignedWorkspace) {
  GemmArgs args = tn_args();
  args.workspace = kFakeWorkspace;
  args.workspace_bytes = 1 << 20;
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
  args.workspace_bytes = 0;  // a buffer of no declared size is simply never used
  EXPECT_TRUE(Ok(tcgemm::validate(args)));
}

TEST(Validate, RejectsWorkspaceBytesWithoutAWorkspace) {
  GemmArgs args = tn_args();
  args.workspace_bytes = 4096;
  const Status s = tcgemm::validate(args);
  EXPECT_TRUE(InvalidNaming(s, "workspace is a null pointer"));
  EXPECT_TRUE(InvalidNaming(s, "workspace_bytes=4096"));
}

TEST(Validate, RejectsAWorkspaceNotAlignedTo256Bytes) {
  GemmArgs args = tn_args();
  args.workspace_bytes = 4096;
  for (std::uintptr_t offset : {1u, 16u, 128u}) {
    args.workspace = static_cast<std::byte*>(kFakeWorkspace) + offset;
    const Status s = tcgemm::validate(args);
    EXPECT_TRUE(InvalidNaming(s, "workspace")) << "offset " << offset;
    EXPECT_TRUE(InvalidNaming(s, std::to_string(tcgemm::kWorkspaceAlignment) + "-byte aligned"))
        << "offset " << offset;
  }
}

TEST(Validate, RejectsAWorkspaceThatWrapsTheAddressSpace) {
  GemmArgs args = tn_args();
  args.workspace = kFakeWorkspace;
  args.workspace_bytes = std::numeric_limits<std::size_t>::max() - 0x1000;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "workspace_bytes="));
}

TEST(Validate, ChecksTheWorkspaceEvenWhenNoKernelRuns) {
  // M == 0 is a quick return, but a bad workspace is the caller's mistake anyway.
  GemmArgs args = make_args(0, 48, 32);
  args.workspace = static_cast<std::byte*>(kFakeWorkspace) + 8;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "workspace"));
  args.workspace = nullptr;
  args.workspace_bytes = 256;
  EXPECT_TRUE(InvalidNaming(tcgemm::validate(args), "workspace"));
}

TEST(Gemm, RejectsABadWorkspaceBeforeLookingForADevice) {
  GemmArgs args = tn_args();
  args.workspace_bytes = 4096;
  EXPECT_TRUE(InvalidNaming(tcgemm::gemm(args), "workspace"));
}

TEST(WorkspaceSize, IsZeroWithoutAGpu) {
  if (has_cuda_device())
    GTEST_SKIP() << "a CUDA device is present; this test is for machines without one";
  // The device check fails (kArchMismatch in gemm): an error, so 0.
  EXPECT_EQ(tcgemm::workspace_size(tn_args()), 0u);
}

// ---- gemm(): the paths that never reach a device ------------------------------------

TEST(Gemm, RejectsInvalidArgumentsBeforeLookingForADevice) {
  GemmArgs args = tn_args();
  args.a.ptr = nullptr;
  EXPECT_TRUE(InvalidNaming(tcgemm::gemm(args), "a is a null pointer"));
  args = tn_args();
  args.c.ld = 1;
  EXPECT_TRUE(InvalidNaming(tcgemm::gemm(args), "ldc=1"));
}

TEST(Gemm, RejectsAnUnknownKernelName) {
  tcgemm::GemmOptions options;
  options.kernel = "no_such_kernel";
  EXPECT_TRUE(InvalidNaming(tcgemm::gemm(tn_args(), options), "no_such_kernel"));
}

TEST(Gemm, EmptyOutputReturnsSuccessWithoutTouchingAnything) {
  // M == 0 or N == 0 is a BLAS quick return: null pointers are fine, and no
  // device is needed (this passes on a machine without a GPU).
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 48}, {64, 0}}) {
    GemmArgs args = make_args(m, n, 32);
    args.a.ptr = nullptr;
    args.b.ptr = nullptr;
    args.c.ptr = nullptr;
    EXPECT_TRUE(Ok(tcgemm::gemm(args))) << "m=" << m << " n=" << n;
  }
}

TEST(Gemm, KOrAlphaZeroWithBetaOneReturnsSuccessWithoutTouchingAnything) {
  // C = 1 * C: nothing to run, C's pointer may be null, and no device is
  // needed (this passes on a machine without a GPU).
  for (int variant = 0; variant < 2; ++variant) {
    GemmArgs args = make_args(64, 48, variant == 0 ? 0 : 32);
    if (variant == 1) args.alpha = 0.0f;
    args.beta = 1.0f;
    args.a.ptr = nullptr;
    args.b.ptr = nullptr;
    args.c.ptr = nullptr;
    EXPECT_FALSE(tcgemm::has_work(args)) << "variant " << variant;
    EXPECT_TRUE(Ok(tcgemm::gemm(args))) << "variant " << variant;
    const tcgemm::Description d = tcgemm::describe(args);
    EXPECT_TRUE(Ok(d.status)) << "variant " << variant;
    EXPECT_TRUE(d.kernel.empty()) << d.kernel;
    // Bad arguments and options are still reported first.
    tcgemm::GemmOptions options;
    options.kernel = "no_such_kernel";
    EXPECT_TRUE(InvalidNaming(tcgemm::gemm(args, options), "no_such_kernel"));
    GemmArgs bad_ld = args;
    bad_ld.c.ld = 1;
    EXPECT_TRUE(InvalidNaming(tcgemm::gemm(bad_ld), "ldc"));
  }
}

TEST(Gemm, HasWorkUnlessAQuickReturn) {
  EXPECT_TRUE(tcgemm::has_work(make_args(64, 48, 32)));
  GemmArgs scaled = make_args(64, 48, 0);
  scaled.beta = 0.5f;  // C = beta * C: a kernel runs
  EXPECT_TRUE(tcgemm::has_work(scaled));
  EXPECT_FALSE(tcgemm::has_work(make_args(0, 48, 32)));
  EXPECT_FALSE(tcgemm::has_work(make_args(64, 0, 32)));
  GemmArgs unchanged = make_args(64, 48, 32);
  unchanged.alpha = 0.0f;
  unchanged.beta = 1.0f;
  EXPECT_FALSE(tcgemm::has_work(unchanged));
}

TEST(Gemm, WithoutAGpuReturnsArchMismatch) {
  if (has_cuda_device()) GTEST_SKIP() << "a CUDA device is present; this test is for machines without one";
  // Fake pointers: the call must stop at the device check, never launch.
  const Status s = tcgemm::gemm(tn_args());
  EXPECT_EQ(s.code, StatusCode::kArchMismatch) << s.message;
  EXPECT_FALSE(s.message.empty());
}

TEST(Gemm, WithoutAGpuKZeroAlsoReturnsArchMismatch) {
  if (has_cuda_device()) GTEST_SKIP() << "a CUDA device is present; this test is for machines without one";
  GemmArgs args = make_args(64, 48, 0);
  args.beta = 0.5f;
  const Status s = tcgemm::gemm(args);
  EXPECT_EQ(s.code, StatusCode::kArchMismatch) << s.message;
}

// ---- plans ------------------------------------------------------------------------------

// create() ignores alpha, beta and the workspace (run() takes them): a zero
// or non-finite alpha, or a misaligned workspace, must neither fail the plan
// nor make it a plan of C = beta * C (a zero alpha did: every run then
// scaled C and returned success). Without a GPU the plan stops at the device
// check; with one it names a GEMM kernel.
TEST(GemmPlanCreate, IgnoresTheScalarsAndWorkspaceItWillNotRun) {
  for (int variant = 0; variant < 3; ++variant) {
    GemmArgs args = tn_args();
    if (variant == 0) args.alpha = 0.0f;
    if (variant == 1) args.alpha = std::numeric_limits<float>::quiet_NaN();
    if (variant == 2) {
      args.workspace = reinterpret_cast<void*>(std::uintptr_t{0x1001});
      args.workspace_bytes = 64;
    }
    tcgemm::GemmPlan plan;
    const Status s = tcgemm::GemmPlan::create(args, {}, &plan);
    if (has_cuda_device()) {
      ASSERT_TRUE(Ok(s)) << "variant " << variant << ": " << s.message;
      EXPECT_FALSE(plan.description().kernel.empty()) << "variant " << variant;
    } else {
      EXPECT_EQ(s.code, StatusCode::kArchMismatch) << "variant " << variant << ": " << s.message;
      EXPECT_TRUE(plan.empty());
    }
  }
}

TEST(GemmPlanCreate, ChecksCWhereKIsZero) {
  // A plan of C = beta * C (K == 0) writes C on a run with beta != 1,
  // whatever beta it was made with: C is checked as gemm() would check it
  // (before any device is looked for).
  for (const float beta : {2.0f, 1.0f}) {
    GemmArgs args = make_args(64, 48, 0);
    args.beta = beta;
    args.c.ptr = nullptr;
    tcgemm::GemmPlan plan;
    EXPECT_TRUE(InvalidNaming(tcgemm::GemmPlan::create(args, {}, &plan), "c is a null pointer"))
        << beta;
    args = make_args(64, 48, 0);
    args.beta = beta;
    args.batch_count = 4;
    args.c.stride = 16;
    EXPECT_TRUE(InvalidNaming(tcgemm::GemmPlan::create(args, {}, &plan), "overlap")) << beta;
  }
}

TEST(GemmPlanCreate, RefusesANullPlan) {
  EXPECT_TRUE(InvalidNaming(tcgemm::GemmPlan::create(tn_args(), {}, nullptr), "plan"));
}

TEST(GemmPlanCreate, LeavesThePlanEmptyOnError) {
  tcgemm::GemmPlan plan;
  ASSERT_TRUE(Ok(tcgemm::GemmPlan::create(make_args(0, 48, 32), {}, &plan)));
  ASSERT_FALSE(plan.empty());
  GemmArgs bad = tn_args();
  bad.c.ld = 1;
  EXPECT_TRUE(InvalidNaming(tcgemm::GemmPlan::create(bad, {}, &plan), "ldc=1"));
  EXPECT_TRUE(plan.empty());
  EXPECT_EQ(plan.workspace_size(), 0u);
  EXPECT_FALSE(plan.description().status.ok());
}

TEST(GemmPlanRun, AnEmptyPlanSaysSo) {
  const tcgemm::GemmPlan plan;
  EXPECT_TRUE(plan.empty());
  EXPECT_TRUE(InvalidNaming(plan.run(kFakeA, kFakeB, kFakeC, 1.0f, 0.0f), "empty"));
  EXPECT_FALSE(plan.description().status.ok());
}

// M == 0 plans a BLAS quick return without a device: runs do nothing, but
// their arguments are checked as gemm() checks them.
TEST(GemmPlanRun, AQuickReturnPlanChecksItsScalarsAndWorkspace) {
  tcgemm::GemmPlan plan;
  ASSERT_TRUE(Ok(tcgemm::GemmPlan::create(make_args(0, 48, 32), {}, &plan)));
  EXPECT_EQ(plan.workspace_size(), 0u);
  EXPECT_TRUE(plan.description().kernel.empty());
  EXPECT_NE(plan.description().config.find("nothing to compute"), std::string::npos)
      << plan.description().config;
  EXPECT_TRUE(Ok(plan.run(nullptr, nullptr, nullptr, 1.0f, 0.0f)));
  EXPECT_TRUE(InvalidNaming(plan.run(nullptr, nullptr, nullptr, std::nanf(""), 0.0f), "alpha"));
  EXPECT_TRUE(InvalidNaming(
      plan.run(nullptr, nullptr, nullptr, 1.0f, std::numeric_limits<float>::infinity()), "beta"));
  EXPECT_TRUE(InvalidNaming(plan.run(nullptr, nullptr, nullptr, 1.0f, 0.0f, nullptr, nullptr, 256),
                            "workspace is a null pointer"));
  EXPECT_TRUE(InvalidNaming(plan.run(nullptr, nullptr, nullptr, 1.0f, 0.0f, nullptr,
                                     static_cast<std::byte*>(kFakeWorkspace) + 16, 256),
                            "256-byte aligned"));
  EXPECT_TRUE(Ok(plan.run(nullptr, nullptr, nullptr, 1.0f, 0.0f, nullptr, kFakeWorkspace, 256)));
}

TEST(GemmPlan, MovingAPlanLeavesTheSourceEmpty) {
  tcgemm::GemmPlan plan;
  ASSERT_TRUE(Ok(tcgemm::GemmPlan::create(make_args(48, 0, 32), {}, &plan)));
  tcgemm::GemmPlan moved = std::move(plan);
  EXPECT_FALSE(moved.empty());
  EXPECT_TRUE(plan.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  tcgemm::GemmPlan assigned;
  assigned = std::move(moved);
  EXPECT_FALSE(assigned.empty());
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
}

// ---- names ------------------------------------------------------------------------------

TEST(Names, DTypesLayoutsAndStatusCodesHaveReadableNames) {
  EXPECT_EQ(tcgemm::to_string(DType::kBF16), "bf16");
  EXPECT_EQ(tcgemm::to_string(DType::kFP16), "fp16");
  EXPECT_EQ(tcgemm::to_string(DType::kFP32), "fp32");
  EXPECT_EQ(tcgemm::to_string(Layout::kRowMajor), "row");
  EXPECT_EQ(tcgemm::to_string(Layout::kColMajor), "col");
  EXPECT_EQ(tcgemm::to_string(StatusCode::kSuccess), "success");
  EXPECT_EQ(tcgemm::to_string(StatusCode::kInvalidValue), "invalid value");
  EXPECT_EQ(tcgemm::to_string(StatusCode::kNotSupported), "not supported");
  EXPECT_EQ(tcgemm::to_string(StatusCode::kArchMismatch), "architecture mismatch");
  EXPECT_EQ(tcgemm::to_string(StatusCode::kCudaError), "CUDA error");
}

TEST(Names, SizeOfGivesBytesPerElement) {
  EXPECT_EQ(tcgemm::size_of(DType::kBF16), 2u);
  EXPECT_EQ(tcgemm::size_of(DType::kFP16), 2u);
  EXPECT_EQ(tcgemm::size_of(DType::kFP32), 4u);
}

TEST(Names, StatusDefaultsToSuccess) {
  EXPECT_TRUE(Status{}.ok());
  EXPECT_TRUE(Status::success().ok());
  EXPECT_FALSE((Status{StatusCode::kNotSupported, "x"}).ok());
}

}  // namespace
