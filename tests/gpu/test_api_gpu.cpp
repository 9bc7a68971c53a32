// The public API on the device: dispatch without a named kernel, BLAS
// degenerate sizes (K == 0 scales C, M or N == 0 leaves it alone), refusals
// that leave C bit-identical, the GEMM workspace, user streams, and concurrent
// callers.
#include "gpu_test_util.h"

#include <cublas_v2.h>
#include <tcgemm/blas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tcgemm_test {
namespace {

ProblemSpec tn(std::int64_t m, std::int64_t n, std::int64_t k, DType in = DType::kBF16,
               DType out = DType::kBF16, std::uint64_t seed = 0x9a100000) {
  ProblemSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.in = in;
  s.out = out;
  s.seed = seed;
  return s;
}

// Calls gemm on a problem that must be refused with `code`, and checks that
// the message names `needle` and that C (the `bytes` at args.c.ptr) did not
// change.
void expect_refused_and_c_untouched(const GemmArgs& args, std::size_t bytes, StatusCode code,
                                    const std::string& needle) {
  const DeviceBuffer before = snapshot(args.c.ptr, bytes);
  const Status s = tcgemm::gemm(args);
  EXPECT_EQ(s.code, code) << tcgemm::to_string(s.code) << ": " << s.message;
  EXPECT_NE(s.message.find(needle), std::string::npos)
      << "message does not name '" << needle << "': " << s.message;
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(args.c.ptr, before.get(), bytes))
      << "a refused call changed C";
}

using GemmApi = HopperTest;

TEST_F(GemmApi, DispatcherRunsATnProblemCorrectly) {
  DeviceProblem p = make_problem(tn(512, 384, 256, DType::kBF16, DType::kBF16, 0x9a100010));
  const DeviceBuffer ref = reference_of(p.args);
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
  EXPECT_TRUE(GuardsUntouched(p.c));
  EXPECT_TRUE(ExactOnSmallIntegers(p));
}

// GemmArgs::sm_count: a persistent grid of at most that many SMs' CTAs
// still covers every tile (and a split's pieces), whatever the choice; the
// small-M path's capped grid (M = 8) every block of its work.
TEST_F(GemmApi, AnSmBudgetStillComputesEveryTile) {
  const ProblemSpec specs[] = {tn(2048, 2048, 512, DType::kBF16, DType::kBF16, 0x9a100020),
                               tn(64, 4096, 4096, DType::kBF16, DType::kBF16, 0x9a100021),
                               tn(8, 4096, 4096, DType::kBF16, DType::kBF16, 0x9a100023),
                               tn(1000, 1000, 1000, DType::kFP16, DType::kFP32, 0x9a100022)};
  for (const ProblemSpec& spec : specs) {
    for (int sms : {1, 15, 66, 100000}) {
      DeviceProblem p = make_problem(spec);
      p.args.sm_count = sms;
      const DeviceBuffer ref = reference_of(p.args);
      ASSERT_TRUE(IsOk(tcgemm::gemm(p.args))) << describe(spec) << " sm_count " << sms;
      TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())))
          << describe(spec) << " sm_count " << sms;
      // A missed tile or split piece can hide under the relative error.
      EXPECT_TRUE(ExactOnSmallIntegers(p)) << describe(spec) << " sm_count " << sms;
    }
  }
}

// Everything gemm() enqueues goes onto the caller's stream: captured on that
// stream, the call runs nothing (C keeps its poison until the graph runs),
// and the graph it leaves computes C. A kernel launched on any other stream
// would run during the capture and write C early, or leave the graph
// without it.
TEST_F(GemmApi, RunsOnTheCallersStream) {
  cudaStream_t stream = nullptr;
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceProblem p = make_problem(tn(640, 520, 328, DType::kFP16, DType::kFP32, 0x9a100020));
  p.args.stream = stream;
  const DeviceBuffer ref = reference_of(p.args);
  // A first call outside the capture: whatever the library does once per
  // device (queries, attributes) is done.
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
  p.reset_c();  // the NaN poison again

  cudaGraph_t graph = nullptr;
  TCGEMM_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const tcgemm::Status st = tcgemm::gemm(p.args);
  TCGEMM_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  ASSERT_TRUE(IsOk(st));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<float> after_capture = to_host_floats(p.c.get(), p.spec.out, p.c_elements);
  const auto written = std::count_if(after_capture.begin(), after_capture.end(),
                                     [](float v) { return !std::isnan(v); });
  EXPECT_EQ(written, 0) << "elements of C written while the call was being captured";
  std::size_t nodes = 0;
  TCGEMM_CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_GT(nodes, 0u);

  cudaGraphExec_t exec = nullptr;
  TCGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  TCGEMM_CHECK_CUDA(cudaGraphLaunch(exec, stream));
  TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
  const tcgemm::testing::ErrorStats e =
      tcgemm::testing::compare(p.args, static_cast<const float*>(ref.get()), stream);
  EXPECT_TRUE(e.passed(tcgemm::testing::tolerance_for(p.args.c.dtype)))
      << "rel_fro=" << e.rel_fro << " nonfinite=" << e.nonfinite;
  TCGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
  TCGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
  TCGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
}

// The exact check rests on compare()'s counters: a C one ulp off in one
// element, or NaN in one, must be counted (a correct C, from an exact run,
// must not be). K = 16: every sum fits bf16 exactly, so the poked element
// is the only one off the reference at all.
TEST_F(GemmApi, CompareCountsAOneUlpErrorAndANaN) {
  DeviceProblem p = make_problem(tn(96, 80, 16, DType::kBF16, DType::kBF16, 0x9a100090));
  ASSERT_TRUE(ExactOnSmallIntegers(p));
  const GemmArgs exact = with_integer_scalars(p.args);
  // ExactOnSmallIntegers left its inputs in place: the same reference again.
  const DeviceBuffer ref = reference_of(exact);
  const auto counts = [&] {
    return tcgemm::testing::compare(exact, static_cast<const float*>(ref.get()));
  };
  ASSERT_EQ(counts().mismatches, 0);
  auto* c = static_cast<std::uint16_t*>(p.c.get());
  const auto poke = [&](std::int64_t index, std::uint16_t bits) {
    TCGEMM_CHECK_CUDA(cudaMemcpy(c + index, &bits, 2, cudaMemcpyHostToDevice));
  };
  std::uint16_t bits = 0;
  TCGEMM_CHECK_CUDA(cudaMemcpy(&bits, c + 1234, 2, cudaMemcpyDeviceToHost));
  poke(1234, static_cast<std::uint16_t>(bits ^ 1u));  // one ulp
  tcgemm::testing::ErrorStats e = counts();
  EXPECT_EQ(e.mismatches, 1);
  EXPECT_EQ(e.nonfinite, 0);
  EXPECT_EQ(e.max_row, 1234 % 96);
  EXPECT_EQ(e.max_col, 1234 / 96);
  poke(1234, bits);
  poke(4321, 0x7fc0);  // bf16 NaN
  e = counts();
  EXPECT_EQ(e.mismatches, 0);
  EXPECT_EQ(e.nonfinite, 1);
  EXPECT_FALSE(e.passed(tcgemm::testing::tolerance_for(DType::kBF16)));
}

// ---- cuBLAS's own arguments (tcgemm/blas.h) -------------------------------------------

// The same arguments to tcgemm::blas and to cuBLAS, on small integers (every
// fp32 sum exact on both sides, beta 2 reading C; cuBLAS told to reduce in
// fp32): C must come back the same bit for bit, for every pair of ops, with
// leading dimensions off 16 bytes (A and B repacked) and on them (streamed
// by TMA), A and B padded differently (a swapped lda and ldb shows), and a
// strided batch with one B shared by all entries; C's guard bands untouched.
TEST_F(GemmApi, BlasArgumentsGiveCublasResultsBitForBit) {
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // Destroyed however the test leaves (an ASSERT returns early).
  const std::unique_ptr<cublasContext, decltype(&cublasDestroy)> owner(handle, &cublasDestroy);
  ASSERT_EQ(cublasSetMathMode(handle, static_cast<cublasMath_t>(
                                          CUBLAS_DEFAULT_MATH |
                                          CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
            CUBLAS_STATUS_SUCCESS);
  using tcgemm::blas::Op;
  using tcgemm::testing::cuda_type;
  const int m = 136, n = 72, k = 200, batch = 3;  // cuBLAS takes int
  struct Pads {
    int a, b, c;
  };
  std::uint64_t seed = 0x9a100300;
  const auto letter = [](Op o) { return o == Op::kN ? "N" : o == Op::kT ? "T" : "C"; };
  const auto op = [](Op o) {
    return o == Op::kN ? CUBLAS_OP_N : o == Op::kT ? CUBLAS_OP_T : CUBLAS_OP_C;
  };
  for (const auto& [in, out] : {std::pair{DType::kBF16, DType::kBF16},
                                std::pair{DType::kFP16, DType::kFP32}}) {
    for (const Pads pad : {Pads{3, 5, 5}, Pads{8, 16, 8}}) {
      for (const Op ta : {Op::kN, Op::kT, Op::kC}) {
        for (const Op tb : {Op::kN, Op::kT, Op::kC}) {
          SCOPED_TRACE(std::string(tcgemm::to_string(in)) + "->" +
                       std::string(tcgemm::to_string(out)) + " transa " + letter(ta) +
                       " transb " + letter(tb) + " ld pads " + std::to_string(pad.a) + "/" +
                       std::to_string(pad.b) + "/" + std::to_string(pad.c));
          // BLAS shapes: A is m x k (N) or k x m (T, C), column-major.
          const int lda = (ta == Op::kN ? m : k) + pad.a;
          const int ldb = (tb == Op::kN ? k : n) + pad.b;
          const int ldc = m + pad.c;
          const long long stride_a = static_cast<long long>(lda) * (ta == Op::kN ? k : m);
          const long long stride_c = static_cast<long long>(ldc) * n;
          const long long b_elements =
              static_cast<long long>(ldb) * (tb == Op::kN ? n : k);  // one, shared
          DeviceBuffer a(bytes_for(stride_a * batch, in));
          DeviceBuffer b(bytes_for(b_elements, in));
          GuardedC ours = make_guarded_c(bytes_for(stride_c * batch, out));
          DeviceBuffer theirs(bytes_for(stride_c * batch, out));
          tcgemm::testing::fill_small_integers(a.get(), in, stride_a * batch, ++seed);
          tcgemm::testing::fill_small_integers(b.get(), in, b_elements, ++seed);
          tcgemm::testing::fill_small_integers(ours.get(), out, stride_c * batch, ++seed);
          TCGEMM_CHECK_CUDA(cudaMemcpy(theirs.get(), ours.get(), ours.c_bytes,
                                       cudaMemcpyDeviceToDevice));
          const float alpha = -1.0f, beta = 2.0f;
          // One problem, then the strided batch (B's stride 0).
          for (const int count : {1, batch}) {
            const Status st =
                count == 1
                    ? tcgemm::blas::gemm_ex(ta, tb, m, n, k, alpha, a.get(), in, lda, b.get(), in,
                                            ldb, beta, ours.get(), out, ldc)
                    : tcgemm::blas::gemm_strided_batched_ex(
                          ta, tb, m, n, k, alpha, a.get(), in, lda, stride_a, b.get(), in, ldb, 0,
                          beta, ours.get(), out, ldc, stride_c, count);
            ASSERT_TRUE(IsOk(st)) << "batch " << count;
            const cublasStatus_t cs =
                count == 1
                    ? cublasGemmEx(handle, op(ta), op(tb), m, n, k, &alpha, a.get(),
                                   cuda_type(in), lda, b.get(), cuda_type(in), ldb, &beta,
                                   theirs.get(), cuda_type(out), ldc, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT)
                    : cublasGemmStridedBatchedEx(
                          handle, op(ta), op(tb), m, n, k, &alpha, a.get(), cuda_type(in), lda,
                          stride_a, b.get(), cuda_type(in), ldb, 0, &beta, theirs.get(),
                          cuda_type(out), ldc, stride_c, count, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT);
            ASSERT_EQ(cs, CUBLAS_STATUS_SUCCESS) << "batch " << count;
            TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
            EXPECT_TRUE(tcgemm::testing::bitwise_equal(ours.get(), theirs.get(), ours.c_bytes))
                << "batch " << count << ": C differs from cuBLAS's";
            EXPECT_TRUE(GuardsUntouched(ours)) << "batch " << count;
          }
        }
      }
    }
  }
}

// ---- K == 0: C = beta * C -------------------------------------------------------

// Runs p's call, a BLAS quick return that only scales C (K == 0 or
// alpha == 0), and checks it: every element of C's M x N equals beta times
// what it held (within `slack`; 0 over the poison where beta == 0, which
// must not read C), the padding and the guard bands kept.
void ExpectCScaledByBeta(DeviceProblem& p, float slack) {
  const float beta = p.args.beta;
  const DType out = p.args.c.dtype;
  const std::vector<float> c_in = to_host_floats(p.c.get(), out, p.c_elements);
  const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<float> c_out = to_host_floats(p.c.get(), out, p.c_elements);
  std::int64_t wrong = 0;
  for (std::int64_t j = 0; j < p.args.n; ++j) {
    for (std::int64_t i = 0; i < p.args.m; ++i) {
      const auto idx = static_cast<std::size_t>(j * p.args.c.ld + i);
      const float expected = beta == 0.0f ? 0.0f : beta * c_in[idx];
      if (!(std::fabs(c_out[idx] - expected) <= slack)) ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0) << "elements not equal to beta * C";
  EXPECT_TRUE(PaddingUntouched(p.args, before.get(), p.c_elements));
  EXPECT_TRUE(GuardsUntouched(p.c));
}

TEST_F(GemmApi, KZeroScalesCByBeta) {
  for (DType out : {DType::kFP32, DType::kBF16, DType::kFP16}) {
    SCOPED_TRACE(std::string("output ") + std::string(tcgemm::to_string(out)));
    ProblemSpec s = tn(100, 70, 0, DType::kBF16, out, 0x9a100030);
    s.beta = 0.5f;
    s.ldc_pad = 3;  // padding rows outside C, poisoned: every bit kept
    DeviceProblem p = make_problem(s);
    // Halving is exact in fp32 and bf16; in fp16 it is exact except where the
    // result is subnormal, which may round by half of 2^-24.
    ExpectCScaledByBeta(p, out == DType::kFP16 ? 0x1p-25f : 0.0f);
  }
}

TEST_F(GemmApi, KZeroWithBetaZeroWritesZerosOverPoison) {
  // beta == 0 means C is not read: NaN in C must not survive.
  DeviceProblem p = make_problem(tn(33, 65, 0, DType::kFP16, DType::kFP16, 0x9a100040));
  ExpectCScaledByBeta(p, 0.0f);
}

TEST_F(GemmApi, KZeroDoesNotNeedAOrB) {
  ProblemSpec s = tn(64, 64, 0, DType::kBF16, DType::kFP32, 0x9a100050);
  s.beta = 2.0f;
  DeviceProblem p = make_problem(s);
  p.args.a.ptr = nullptr;
  p.args.b.ptr = nullptr;
  ExpectCScaledByBeta(p, 0.0f);  // doubling is exact in fp32
}

// ---- alpha == 0 with K > 0: C = beta * C, A and B never read ------------------------

TEST_F(GemmApi, AlphaZeroDoesNotReadAOrB) {
  // A and B hold NaN: were either read (alpha * NaN is NaN, not 0), C would
  // come out NaN. beta != 0 scales C (padding and guard bands kept); beta == 0
  // writes zeros over the poison.
  for (DType out : {DType::kFP32, DType::kBF16}) {
    for (float beta : {0.5f, 0.0f}) {
      SCOPED_TRACE(std::string("output ") + std::string(tcgemm::to_string(out)) + ", beta " +
                   std::to_string(beta));
      ProblemSpec s = tn(100, 70, 64, DType::kBF16, out, 0x9a1000f0);
      s.alpha = 0.0f;
      s.beta = beta;
      s.ldc_pad = 3;
      DeviceProblem p = make_problem(s);
      tcgemm::testing::fill_poison(p.a.get(), s.in, p.a_elements);
      tcgemm::testing::fill_poison(p.b.get(), s.in, p.b_elements);
      TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
      // Halving a normal(0, 1) value is exact in fp32 and bf16: no slack. A
      // NaN in C would mean A or B was read.
      ExpectCScaledByBeta(p, 0.0f);
    }
  }
}

// ---- M == 0 or N == 0: nothing to do --------------------------------------------

TEST_F(GemmApi, MZeroLeavesCUntouched) {
  // C gets a real buffer with random contents; with M == 0 it is not part of
  // the problem and must keep every bit.
  DeviceBuffer c(4096);
  tcgemm::testing::fill_normal(c.get(), DType::kBF16, 2048, 0x9a100060);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const DeviceBuffer before = snapshot(c.get(), 4096);
  GemmArgs args;
  args.m = 0;
  args.n = 32;
  args.k = 64;
  args.a = {nullptr, DType::kBF16, Layout::kRowMajor, 64, 0};
  args.b = {nullptr, DType::kBF16, Layout::kColMajor, 64, 0};
  args.c = {c.get(), DType::kBF16, Layout::kColMajor, 1, 0};
  args.beta = 0.5f;
  EXPECT_TRUE(IsOk(tcgemm::gemm(args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(c.get(), before.get(), 4096));
}

TEST_F(GemmApi, NZeroLeavesCUntouched) {
  DeviceProblem p = make_problem(tn(64, 8, 64, DType::kBF16, DType::kBF16, 0x9a100070));
  tcgemm::testing::fill_normal(p.c.get(), DType::kBF16, p.c_elements, 0x9a100075);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
  p.args.n = 0;
  p.args.beta = 0.5f;
  EXPECT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(p.c.get(), before.get(), p.c_bytes()));
}

// ---- refusals leave C alone ---------------------------------------------------------

// What the production family truly cannot run: sizes past its 32-bit TMA
// coordinates (M over 2^31 - 257) and batch_count past 2^31 - 1. The
// pointers are real, small buffers: a refusal reads and writes nothing.
TEST_F(GemmApi, ProblemsPastTheTmaCoordinatesAreNotSupportedAndLeaveCUntouched) {
  DeviceProblem p = make_problem(tn(256, 64, 64, DType::kBF16, DType::kBF16, 0x9a100080));
  GemmArgs args = p.args;
  args.m = (std::int64_t{1} << 31) - 256;  // one past the largest M
  args.a.ld = args.k;                      // A row-major M x K
  args.c.ld = args.m;                      // C column-major M x N
  EXPECT_EQ(tcgemm::describe(args).status.code, StatusCode::kNotSupported);
  expect_refused_and_c_untouched(args, p.c_bytes(), StatusCode::kNotSupported, "M, N and K");
  args = p.args;
  args.batch_count = std::int64_t{1} << 31;
  args.a.stride = 0;
  args.b.stride = 0;
  args.c.stride = p.c_elements;
  EXPECT_EQ(tcgemm::describe(args).status.code, StatusCode::kNotSupported);
  expect_refused_and_c_untouched(args, p.c_bytes(), StatusCode::kNotSupported, "batch_count");
}

TEST_F(GemmApi, InvalidArgumentLeavesCUntouched) {
  DeviceProblem p = make_problem(tn(64, 64, 64, DType::kBF16, DType::kBF16, 0x9a1000b0));
  p.args.c.ld = 63;  // C is 64 x 64 column-major
  expect_refused_and_c_untouched(p.args, p.c_bytes(), StatusCode::kInvalidValue, "ldc=63");
}

TEST_F(GemmApi, NamedKernelThatRefusesSaysWhy) {
  ASSERT_FALSE(tcgemm::registry().empty());
  const tcgemm::KernelInfo& kernel = tcgemm::registry().front();
  ProblemSpec s = tn(256, 256, 256, DType::kBF16, DType::kBF16, 0x9a1000c0);
  s.lb = Layout::kRowMajor;
  s.la = Layout::kColMajor;
  DeviceProblem p = make_problem(s);
  const std::string reason =
      tcgemm::check_constraints(kernel.constraints, p.args, {device_compute_capability()});
  if (reason.empty()) GTEST_SKIP() << kernel.name << " accepts NT now";
  tcgemm::GemmOptions options;
  options.kernel = kernel.name;
  const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
  const Status st = tcgemm::gemm(p.args, options);
  EXPECT_EQ(st.code, StatusCode::kNotSupported) << st.message;
  EXPECT_NE(st.message.find(kernel.name), std::string::npos) << st.message;
  EXPECT_NE(st.message.find(reason), std::string::npos) << st.message;
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(p.c.get(), before.get(), p.c_bytes()));
}

// ---- the GEMM workspace -----------------------------------------------------------------

// workspace_size's zero answers, beside a problem that needs scratch (lda =
// ldb = 33 elements: rows TMA cannot stride, so A and B are read from
// aligned copies in the workspace) so that each 0 is the rule, not the
// absence of a kernel.
TEST_F(GemmApi, WorkspaceSizeIsZeroOnErrorsAndQuickReturns) {
  const DeviceProblem p = make_problem(tn(256, 192, 33, DType::kBF16, DType::kBF16, 0x9a1000d0));
  ASSERT_GT(tcgemm::workspace_size(p.args), 0u);
  for (int variant = 0; variant < 7; ++variant) {
    GemmArgs args = p.args;
    tcgemm::GemmOptions options;
    if (variant == 0) args.c.ld = 1;              // invalid: ldc < M
    if (variant == 1) args.workspace_bytes = 64;  // invalid: bytes without a workspace
    if (variant == 2) options.kernel = "no_such_kernel";
    if (variant == 3) args.m = 0;  // nothing to compute
    if (variant == 4) args.n = 0;
    if (variant == 5) args.k = 0;  // C = beta * C
    if (variant == 6) args.alpha = 0.0f;
    EXPECT_EQ(tcgemm::workspace_size(args, options), 0u) << "variant " << variant;
  }
  // A problem gemm refuses because its aligned copies would pass 2^62 bytes
  // (A's batch stride of one element: 2^31 - 1 copies of 65536 x 65536)
  // needs no workspace: 0, not a size that wrapped; describe says what gemm
  // returns. The addresses are never read: every call returns before
  // touching memory.
  GemmArgs huge;
  huge.m = 65536;
  huge.n = 1;
  huge.k = 65536;
  huge.batch_count = (std::int64_t{1} << 31) - 1;
  huge.a = {reinterpret_cast<const void*>(std::uintptr_t{1} << 40), DType::kBF16,
            Layout::kRowMajor, 65536, 1};
  huge.b = {reinterpret_cast<const void*>(std::uintptr_t{2} << 40), DType::kBF16,
            Layout::kColMajor, 65536, 0};
  huge.c = {reinterpret_cast<void*>(std::uintptr_t{3} << 40), DType::kBF16, Layout::kColMajor,
            65536, 65536};
  // Each refusal must be the size limit's, not some other check's.
  const auto refused_for = [](const Status& s, const char* limit) {
    return ::testing::AssertionResult(s.code == StatusCode::kNotSupported &&
                                      s.message.find(limit) != std::string::npos)
           << tcgemm::to_string(s.code) << ": " << s.message << " (expected the " << limit
           << " limit)";
  };
  ASSERT_TRUE(IsOk(tcgemm::validate(huge)));
  EXPECT_TRUE(refused_for(tcgemm::describe(huge).status, "2^62 bytes"));
  EXPECT_TRUE(refused_for(tcgemm::gemm(huge), "2^62 bytes"));
  EXPECT_EQ(tcgemm::workspace_size(huge), 0u);
  // A copied A whose batch entries would lie 2^40 bytes apart, past what a
  // TMA tensor map strides: refused alike.
  GemmArgs far = huge;
  far.m = 1 << 20;
  far.n = 64;
  far.k = 1 << 19;
  far.batch_count = 2;
  far.a.ld = far.k;
  far.b.ld = far.k;
  far.c.ld = far.m;
  far.c.stride = far.m * far.n;
  ASSERT_TRUE(IsOk(tcgemm::validate(far)));
  EXPECT_TRUE(refused_for(tcgemm::describe(far).status, "2^40 bytes"));
  EXPECT_TRUE(refused_for(tcgemm::gemm(far), "2^40 bytes"));
  EXPECT_EQ(tcgemm::workspace_size(far), 0u);
}

// The production family's workspace is optional: without one (or with one
// too small) gemm allocates its scratch stream-ordered; with one of
// workspace_size() bytes it uses that. The same kernel and config either way.
TEST_F(GemmApi, TheDispatchersKernelRunsWithAndWithoutTheWorkspaceItAsksFor) {
  // Deep K over few tiles (a K split) and lda = 4097 (A repacked): scratch.
  ProblemSpec s = tn(512, 512, 4096, DType::kBF16, DType::kBF16, 0x9a1000e0);
  s.lda_pad = 1;
  DeviceProblem p = make_problem(s);
  const DeviceBuffer ref = reference_of(p.args);
  const std::size_t bytes = tcgemm::workspace_size(p.args);
  ASSERT_GT(bytes, 0u);
  const tcgemm::Description without = tcgemm::describe(p.args);
  ASSERT_TRUE(IsOk(without.status));
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));

  const DeviceBuffer workspace = attach_workspace(p.args, bytes);
  const tcgemm::Description with = tcgemm::describe(p.args);
  EXPECT_EQ(with.kernel, without.kernel);
  EXPECT_EQ(with.config, without.config);
  p.reset_c();
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
  EXPECT_TRUE(ExactOnSmallIntegers(p));
}

// A registry kernel that asks for a workspace, on a problem it accepts and
// needs one for.
struct WorkspaceCase {
  const tcgemm::KernelInfo* kernel = nullptr;
  DeviceProblem problem;
  std::size_t bytes = 0;  // what the kernel asks for
};

bool some_kernel_has_a_workspace_function() {
  return std::ranges::any_of(
      tcgemm::registry(), [](const tcgemm::KernelInfo& k) { return k.workspace_bytes != nullptr; });
}

// The first kernel with a workspace function that needs a workspace on one of
// a few problems (TN with few tiles and a deep K, TN with many tiles, NN), or
// nullopt.
std::optional<WorkspaceCase> find_workspace_case() {
  ProblemSpec nn = tn(1024, 1024, 4096, DType::kFP16, DType::kFP16, 0x9a100120);
  nn.la = Layout::kColMajor;
  const ProblemSpec specs[] = {
      tn(512, 512, 4096, DType::kBF16, DType::kBF16, 0x9a100100),
      tn(2048, 2304, 192, DType::kBF16, DType::kBF16, 0x9a100110),
      nn,
  };
  const tcgemm::DeviceCaps device{device_compute_capability()};
  for (const ProblemSpec& spec : specs) {
    DeviceProblem p = make_problem(spec);
    for (const tcgemm::KernelInfo& k : tcgemm::registry()) {
      if (k.workspace_bytes == nullptr) continue;
      if (!tcgemm::check_constraints(k.constraints, p.args, device).empty()) continue;
      if (const std::size_t bytes = k.workspace_bytes(p.args); bytes > 0) {
        return WorkspaceCase{&k, std::move(p), bytes};
      }
    }
  }
  return std::nullopt;
}

constexpr const char* kNoWorkspaceKernel =
    "no registry kernel has a workspace_bytes function yet, so no kernel needs a workspace";

TEST_F(GemmApi, NamedKernelThatNeedsAWorkspaceWithoutOneIsNotSupportedAndLeavesCUntouched) {
  if (!some_kernel_has_a_workspace_function()) GTEST_SKIP() << kNoWorkspaceKernel;
  std::optional<WorkspaceCase> wc = find_workspace_case();
  // hopper-15 (stream-K) needs one on these problems: none found is a bug.
  ASSERT_TRUE(wc) << "no kernel with a workspace function needs one on the test problems";
  GemmArgs& args = wc->problem.args;
  tcgemm::GemmOptions options;
  options.kernel = wc->kernel->name;
  EXPECT_EQ(tcgemm::workspace_size(args, options), wc->bytes);

  const std::size_t c_bytes = wc->problem.c_bytes();
  const DeviceBuffer before = snapshot(args.c.ptr, c_bytes);
  Status s = tcgemm::gemm(args, options);
  EXPECT_EQ(s.code, StatusCode::kNotSupported) << s.message;
  EXPECT_NE(s.message.find(wc->kernel->name), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("needs " + std::to_string(wc->bytes) + " bytes of workspace"),
            std::string::npos)
      << s.message;

  // One byte too few is refused as well.
  const DeviceBuffer workspace = attach_workspace(args, wc->bytes);
  args.workspace_bytes = wc->bytes - 1;
  s = tcgemm::gemm(args, options);
  EXPECT_EQ(s.code, StatusCode::kNotSupported) << s.message;
  EXPECT_NE(s.message.find("workspace_bytes is " + std::to_string(wc->bytes - 1)),
            std::string::npos)
      << s.message;
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(args.c.ptr, before.get(), c_bytes))
      << "a refused call changed C";
}

// Zeroed once, the workspace serves call after call: each kernel leaves what
// it needs zero (stream-K's flags) zero again, so every run matches the
// reference and the first run bit for bit.
TEST_F(GemmApi, WorkspaceIsReusedWithoutZeroing) {
  if (!some_kernel_has_a_workspace_function()) GTEST_SKIP() << kNoWorkspaceKernel;
  std::optional<WorkspaceCase> wc = find_workspace_case();
  // hopper-15 (stream-K) needs one on these problems: none found is a bug.
  ASSERT_TRUE(wc) << "no kernel with a workspace function needs one on the test problems";
  DeviceProblem& p = wc->problem;
  tcgemm::GemmOptions options;
  options.kernel = wc->kernel->name;
  const std::size_t bytes = tcgemm::workspace_size(p.args, options);
  ASSERT_EQ(bytes, wc->bytes);
  const DeviceBuffer workspace = attach_workspace(p.args, bytes);  // zeroed once, as the API asks
  const DeviceBuffer ref = reference_of(p.args);
  const DeviceBuffer first(p.c_bytes());
  for (int run = 1; run <= 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run) + " of " + std::string(wc->kernel->name) + " on " +
                 describe(p.spec));
    if (run > 1) p.reset_c();
    ASSERT_TRUE(IsOk(tcgemm::gemm(p.args, options)));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
    if (run == 1) {
      TCGEMM_CHECK_CUDA(cudaMemcpy(first.get(), p.c.get(), p.c_bytes(), cudaMemcpyDeviceToDevice));
    } else {
      EXPECT_TRUE(tcgemm::testing::bitwise_equal(first.get(), p.c.get(), p.c_bytes()))
          << "run " << run << " differs from run 1";
    }
  }
}

// ---- thread safety ---------------------------------------------------------------------

TEST_F(GemmApi, ConcurrentCallersOnTheirOwnStreamsGetCorrectResults) {
  constexpr int kThreads = 4;
  std::vector<DeviceProblem> problems;
  std::vector<DeviceBuffer> refs;
  std::vector<cudaStream_t> streams(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    problems.push_back(make_problem(
        tn(384 + 8 * t, 256 + 24 * t, 192, t % 2 ? DType::kFP16 : DType::kBF16,
           t % 2 ? DType::kFP16 : DType::kBF16, 0x9a1000d0 + 16 * static_cast<std::uint64_t>(t))));
    refs.push_back(reference_of(problems.back().args));
    TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking));
    problems.back().args.stream = streams[t];
  }
  // Each call writes its own C, in guard bands: a call that used another
  // thread's state (a tensor map, a plan) would show in its own result.
  constexpr int kReps = 8;
  std::vector<std::vector<GuardedC>> outputs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int rep = 0; rep < kReps; ++rep) {
      outputs[t].push_back(make_guarded_c(problems[t].c_bytes()));
      tcgemm::testing::fill_poison(outputs[t].back().get(), problems[t].spec.out,
                                   problems[t].c_elements);
    }
  }
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < kReps && results[t].ok(); ++rep) {
        GemmArgs args = problems[t].args;
        args.c.ptr = outputs[t][rep].get();
        results[t] = tcgemm::gemm(args);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(IsOk(results[t])) << "thread " << t;
    TCGEMM_CHECK_CUDA(cudaStreamSynchronize(streams[t]));
    for (int rep = 0; rep < kReps; ++rep) {
      GemmArgs args = problems[t].args;
      args.c.ptr = outputs[t][rep].get();
      EXPECT_TRUE(MatchesReference(args, static_cast<const float*>(refs[t].get())))
          << "thread " << t << ", call " << rep;
      EXPECT_TRUE(GuardsUntouched(outputs[t][rep])) << "thread " << t << ", call " << rep;
    }
    TCGEMM_CHECK_CUDA(cudaStreamDestroy(streams[t]));
  }
}

}  // namespace
}  // namespace tcgemm_test
