// tcgemm::GemmPlan on the GPU: a plan's run() is exact on integer inputs and
// touches nothing outside C, for the kinds of launch a plan can hold (TMA
// operands, repacked operands, the C^T = B^T A^T swap, K splits, batches);
// it runs with new pointers of the same alignment class, inside a captured
// CUDA graph, and refuses (nothing enqueued, C untouched) a pointer of
// another alignment class or a workspace that is too small. And
// GemmOptions::batch_invariant: each row of C has the same bits whatever M
// is.
#include <gtest/gtest.h>
#include <tcgemm/gemm_plan.h>
#include <tcgemm/tcgemm.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "guarded_problem.h"

namespace tcgemm_test {
namespace {

using tcgemm::GemmPlan;

std::vector<GemmCase> plan_cases() {
  std::vector<GemmCase> cases;
  GemmCase c;
  c.m = c.n = c.k = 256;  // TN, every operand streamed by TMA
  c.seed = 11;
  cases.push_back(c);
  c = GemmCase{};
  c.m = 300;  // all row-major: the swap; fp16 in, fp32 out, beta 1
  c.n = 200;
  c.k = 100;
  c.la = c.lb = c.lc = Layout::kRowMajor;
  c.in = DType::kFP16;
  c.out = DType::kFP32;
  c.beta = 1.0f;
  c.seed = 12;
  cases.push_back(c);
  c = GemmCase{};
  c.m = 120;  // odd leading dimensions, 2-byte-aligned bases: repacked operands, beta 2
  c.n = 136;
  c.k = 72;
  c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
  c.a_offset = c.b_offset = c.c_offset = 1;
  c.beta = 2.0f;
  c.seed = 13;
  cases.push_back(c);
  c = GemmCase{};
  c.m = 16;  // x @ W^T with row-major C: small M, K split
  c.n = 1024;
  c.k = 2048;
  c.lc = Layout::kRowMajor;
  c.seed = 14;
  cases.push_back(c);
  c = GemmCase{};
  c.m = 1;  // GEMV
  c.n = 264;
  c.k = 392;
  c.seed = 15;
  cases.push_back(c);
  c = GemmCase{};
  c.m = 40;  // a batch over one B, alpha -1
  c.n = 24;
  c.k = 520;
  c.batch = BatchMode::kSharedB;
  c.alpha = -1.0f;
  c.out = DType::kFP16;
  c.seed = 16;
  cases.push_back(c);
  return cases;
}

// C equals `ref` element for element and nothing around it changed.
void expect_exact_c(const GuardedProblem& p, const std::vector<float>& ref,
                    const std::string& what) {
  Findings findings;
  const HostImage out = p.download_c();
  p.check_exact(out, ref, what, findings);
  p.check_outside_c(out, what, findings);
  for (const std::string& f : findings) ADD_FAILURE() << f;
}

// Runs `plan` on p's operands (integer inputs) and checks C exactly.
void expect_exact_run(const GemmPlan& plan, GuardedProblem& p, cudaStream_t stream,
                      const std::string& what) {
  p.fill(Values::kSmallIntegers);
  const std::vector<float> ref = p.reference();
  const GemmArgs& a = p.args();
  ASSERT_TRUE(IsOk(plan.run(a.a.ptr, a.b.ptr, a.c.ptr, a.alpha, a.beta, stream))) << what;
  TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
  expect_exact_c(p, ref, what);
}

using GemmPlanTest = HopperTest;

TEST_F(GemmPlanTest, RunIsExactAndRunsAgainWithNewPointers) {
  for (const GemmCase& c : plan_cases()) {
    const std::string what = describe_case(c);
    GuardedProblem first(c);
    GemmPlan plan;
    ASSERT_TRUE(IsOk(GemmPlan::create(first.args(), {}, &plan))) << what;
    EXPECT_FALSE(plan.empty());
    EXPECT_EQ(plan.description().kernel.rfind("prod", 0), 0u) << plan.description().kernel;
    expect_exact_run(plan, first, nullptr, what + " (plan)");
    // Another problem of the same shape and alignment: the plan's pointers
    // are not baked in.
    GemmCase other = c;
    other.seed += 1000;
    GuardedProblem second(other);
    expect_exact_run(plan, second, nullptr, what + " (plan, new pointers)");
    // And gemm() gives the same bits.
    const HostImage from_plan = second.download_c();
    second.reset_c();
    ASSERT_TRUE(IsOk(tcgemm::gemm(second.args())));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    std::int64_t at = -1;
    EXPECT_EQ(count_differences(from_plan, second.download_c(), at), 0) << what;
  }
}

// A plan of a choice in the flipped orientation (the kernel's output
// row-major, here a K split reduced in place). With 20 rows (the kernel's N,
// not whole 16-byte chunks) the output leaves from registers: made for a C
// whose element pairs are aligned, the plan runs as exactly on a C one
// element off, whose pairs are not. With 24 it leaves by TMA store, and the
// plan refuses that C by name, as a native one does, with C untouched.
TEST_F(GemmPlanTest, AFlippedChoiceRunsOnACOfAnyElementAlignment) {
  GemmCase c;
  c.m = 20;  // few rows, column-major C: the heuristic flips it (no table entry)
  c.n = 3072;
  c.k = 2048;
  c.beta = 1.0f;
  c.seed = 17;
  const std::string what = describe_case(c);
  GuardedProblem first(c);
  GemmPlan plan;
  ASSERT_TRUE(IsOk(GemmPlan::create(first.args(), {}, &plan))) << what;
  EXPECT_NE(plan.description().config.find("flipped"), std::string::npos)
      << "the heuristic no longer flips " << what << ": " << plan.description().config;
  EXPECT_NE(plan.description().config.find("epilogue=direct"), std::string::npos)
      << plan.description().config;
  expect_exact_run(plan, first, nullptr, what + " (flipped plan)");
  GemmCase shifted = c;
  shifted.c_offset = 1;
  shifted.seed = 18;
  GuardedProblem second(shifted);
  expect_exact_run(plan, second, nullptr, what + " (flipped plan, C one element off)");

  GemmCase tma = c;
  tma.m = 24;
  GuardedProblem aligned(tma);
  GemmPlan tma_plan;
  ASSERT_TRUE(IsOk(GemmPlan::create(aligned.args(), {}, &tma_plan))) << describe_case(tma);
  EXPECT_NE(tma_plan.description().config.find("flipped"), std::string::npos)
      << tma_plan.description().config;
  EXPECT_NE(tma_plan.description().config.find("epilogue=tma-store"), std::string::npos)
      << tma_plan.description().config;
  expect_exact_run(tma_plan, aligned, nullptr, describe_case(tma) + " (flipped plan, TMA store)");
  GemmCase tma_shifted = tma;
  tma_shifted.c_offset = 1;
  GuardedProblem off(tma_shifted);
  const GemmArgs o = off.args();
  const auto before = off.download_c();
  const tcgemm::Status refused = tma_plan.run(o.a.ptr, o.b.ptr, o.c.ptr, o.alpha, o.beta, nullptr);
  EXPECT_EQ(refused.code, tcgemm::StatusCode::kInvalidValue);
  EXPECT_NE(refused.message.find("c is not 16-byte aligned"), std::string::npos) << refused.message;
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  std::int64_t at = -1;
  EXPECT_EQ(count_differences(before, off.download_c(), at), 0) << "a refused run wrote C";
}

// A plan chooses what describe() names for the same arguments, beta zero or
// not (the heuristic weighs C's read where beta != 0: 64 x 14336 x 256 and
// 256 x 8192 x 256 in TN change choice with it at the H200's bandwidth,
// ProdSelect.ReadingCCostsItsBytesAndCanChangeTheChoice; not at an H100's,
// which the test prints), over shapes of the tiles, the small-M path and a
// repack. Pointers are read for their alignment only: none is dereferenced.
TEST_F(GemmPlanTest, ChoosesWhatDescribeNames) {
  struct Shape {
    std::int64_t m, n, k;
  };
  auto* const base = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 32);
  int beta_changes = 0;
  for (const Shape shape : {Shape{64, 14336, 256}, Shape{256, 8192, 256}, Shape{4096, 4096, 4096},
                            Shape{16, 4096, 4096}, Shape{500, 300, 77}}) {
    std::string unscaled;
    for (const float beta : {0.0f, 1.0f}) {
      GemmArgs args;
      args.m = shape.m;
      args.n = shape.n;
      args.k = shape.k;
      args.a = {base, DType::kBF16, Layout::kRowMajor, shape.k};
      args.b = {base, DType::kBF16, Layout::kColMajor, shape.k};
      args.c = {base, DType::kBF16, Layout::kColMajor, shape.m};
      args.beta = beta;
      const std::string what = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                               std::to_string(shape.k) + " beta " + std::to_string(beta);
      const tcgemm::Description described = tcgemm::describe(args);
      ASSERT_TRUE(IsOk(described.status)) << what;
      GemmPlan plan;
      ASSERT_TRUE(IsOk(GemmPlan::create(args, {}, &plan))) << what;
      EXPECT_EQ(plan.description().kernel, described.kernel) << what;
      EXPECT_EQ(plan.description().config, described.config) << what;
      if (beta == 0.0f) {
        unscaled = described.config;
      } else if (described.config != unscaled) {
        ++beta_changes;
      }
    }
  }
  std::printf("%d of 5 shapes change choice with beta on this device\n", beta_changes);
}

TEST_F(GemmPlanTest, RunIsCapturedInACudaGraph) {
  cudaStream_t stream = nullptr;
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const GemmCase& c : plan_cases()) {
    const std::string what = describe_case(c) + " (graph)";
    GuardedProblem p(c);
    GemmPlan plan;
    ASSERT_TRUE(IsOk(GemmPlan::create(p.args(), {}, &plan))) << what;
    p.fill(Values::kSmallIntegers);
    const std::vector<float> ref = p.reference();
    const GemmArgs& a = p.args();
    const auto before = p.download_c();
    cudaGraph_t graph = nullptr;
    TCGEMM_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const tcgemm::Status s = plan.run(a.a.ptr, a.b.ptr, a.c.ptr, a.alpha, a.beta, stream);
    TCGEMM_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    ASSERT_TRUE(IsOk(s)) << what;
    // The run is in the graph, not done beside the capture: C is as it was
    // until the graph is launched, and the graph has the work.
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(p.download_c() == before) << what << ": C written while the run was captured";
    std::size_t nodes = 0;
    TCGEMM_CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
    EXPECT_GT(nodes, 0u) << what;
    cudaGraphExec_t exec = nullptr;
    TCGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    TCGEMM_CHECK_CUDA(cudaGraphLaunch(exec, stream));
    TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    expect_exact_c(p, ref, what);
    TCGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
    TCGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
  }
  TCGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
}

TEST_F(GemmPlanTest, RefusesAPointerOfAnotherAlignmentAndASmallWorkspace) {
  GemmCase c = plan_cases()[0];  // every operand 16-byte aligned: streamed by TMA
  GuardedProblem p(c);
  GemmPlan plan;
  ASSERT_TRUE(IsOk(GemmPlan::create(p.args(), {}, &plan)));
  p.fill(Values::kSmallIntegers);
  const HostImage before = p.download_c();
  const GemmArgs& a = p.args();
  const auto shifted = [](const void* ptr) {
    return static_cast<void*>(const_cast<char*>(static_cast<const char*>(ptr)) + 2);
  };
  for (int which = 0; which < 3; ++which) {
    const tcgemm::Status s =
        plan.run(which == 0 ? shifted(a.a.ptr) : a.a.ptr, which == 1 ? shifted(a.b.ptr) : a.b.ptr,
                 which == 2 ? shifted(a.c.ptr) : a.c.ptr, 1.0f, 0.0f);
    EXPECT_EQ(s.code, tcgemm::StatusCode::kInvalidValue) << which;
    EXPECT_NE(s.message.find(which == 0   ? "a "
                             : which == 1 ? "b "
                                          : "c "),
              std::string::npos)
        << s.message;
  }
  EXPECT_EQ(plan.run(a.a.ptr, a.b.ptr, a.c.ptr, NAN, 0.0f).code, tcgemm::StatusCode::kInvalidValue);
  // A plan that needs scratch (repacked operands) refuses a small workspace.
  GuardedProblem odd(plan_cases()[2]);
  GemmPlan odd_plan;
  ASSERT_TRUE(IsOk(GemmPlan::create(odd.args(), {}, &odd_plan)));
  ASSERT_GT(odd_plan.workspace_size(), 0u);
  odd.fill(Values::kSmallIntegers);
  const HostImage odd_before = odd.download_c();
  DeviceBuffer small(256);
  const GemmArgs& o = odd.args();
  EXPECT_EQ(odd_plan.run(o.a.ptr, o.b.ptr, o.c.ptr, 1.0f, 0.0f, nullptr, small.get(), 256).code,
            tcgemm::StatusCode::kInvalidValue);
  // A workspace gemm() would refuse is refused whether or not the plan
  // needs one: null with a size, or off 256 bytes (the size enough, so
  // that only the address is wrong).
  ASSERT_EQ(plan.workspace_size(), 0u);
  for (const GemmPlan* which : {&plan, &odd_plan}) {
    const GemmArgs& w = which == &plan ? a : o;
    const std::size_t bytes = std::max<std::size_t>(which->workspace_size(), 256);
    const tcgemm::Status null_workspace =
        which->run(w.a.ptr, w.b.ptr, w.c.ptr, 1.0f, 0.0f, nullptr, nullptr, bytes);
    EXPECT_EQ(null_workspace.code, tcgemm::StatusCode::kInvalidValue);
    EXPECT_NE(null_workspace.message.find("workspace is a null pointer"), std::string::npos)
        << null_workspace.message;
    const tcgemm::Status off_256 = which->run(w.a.ptr, w.b.ptr, w.c.ptr, 1.0f, 0.0f, nullptr,
                                              static_cast<char*>(small.get()) + 16, bytes);
    EXPECT_EQ(off_256.code, tcgemm::StatusCode::kInvalidValue);
    EXPECT_NE(off_256.message.find("256-byte aligned"), std::string::npos) << off_256.message;
  }
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  std::int64_t at = -1;
  EXPECT_EQ(count_differences(before, p.download_c(), at), 0)
      << "a run refused for a pointer's alignment or alpha wrote C";
  EXPECT_EQ(count_differences(odd_before, odd.download_c(), at), 0)
      << "a run refused for its workspace wrote C";
  // An empty plan says so.
  GemmPlan empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.run(a.a.ptr, a.b.ptr, a.c.ptr, 1.0f, 0.0f).code,
            tcgemm::StatusCode::kInvalidValue);
}

// ---- batch invariance -------------------------------------------------------------------

// bf16 bits of normal(0, 1) values, deterministic in (key, position).
std::vector<std::uint16_t> normal_bf16(std::uint64_t key, std::int64_t count) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) out[i] = float_to_bf16_bits(normal_at(key, i));
  return out;
}

// C = A * B for the first m rows of one A (row-major, K = 1024) against one
// B, as F.linear runs it (B column-major: W row-major N x K; C row-major)
// or with a column-major C; returns C's rows.
// C is poisoned first (0xffff, a bf16 NaN no finite result has), so an
// element the call does not write shows.
constexpr std::uint16_t kPoisonBits = 0xffff;

// The bf16 problem of the first m rows of A (row-major, ld = k) against B
// (column-major, ld = k), C tight in c_layout.
GemmArgs rows_args(const DeviceBuffer& a, const DeviceBuffer& b, void* c, std::int64_t m,
                   std::int64_t n, std::int64_t k, Layout c_layout) {
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {a.get(), DType::kBF16, Layout::kRowMajor, k, 0};
  args.b = {b.get(), DType::kBF16, Layout::kColMajor, k, 0};
  args.c = {c, DType::kBF16, c_layout, c_layout == Layout::kRowMajor ? n : m, 0};
  return args;
}

std::vector<std::uint16_t> run_rows(const DeviceBuffer& a, const DeviceBuffer& b, std::int64_t m,
                                    std::int64_t n, std::int64_t k, Layout c_layout,
                                    bool invariant) {
  DeviceBuffer c(static_cast<std::size_t>(m * n) * 2);
  TCGEMM_CHECK_CUDA(cudaMemset(c.get(), 0xff, static_cast<std::size_t>(m * n) * 2));
  const GemmArgs args = rows_args(a, b, c.get(), m, n, k, c_layout);
  tcgemm::GemmOptions options;
  options.batch_invariant = invariant;
  const tcgemm::Status s = tcgemm::gemm(args, options);
  EXPECT_TRUE(IsOk(s));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<std::uint16_t> raw(static_cast<std::size_t>(m * n));
  TCGEMM_CHECK_CUDA(cudaMemcpy(raw.data(), c.get(), raw.size() * 2, cudaMemcpyDeviceToHost));
  if (c_layout == Layout::kRowMajor) return raw;
  std::vector<std::uint16_t> rows(raw.size());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) rows[i * n + j] = raw[j * m + i];
  }
  return rows;
}

using BatchInvariance = HopperTest;

TEST_F(BatchInvariance, EachRowHasTheSameBitsWhateverMIs) {
  constexpr std::int64_t kMaxM = 1000;
  constexpr std::int64_t kN = 512;
  constexpr std::int64_t kK = 4096;  // deep enough that the default mode splits small M
  const std::vector<std::uint16_t> host_a = normal_bf16(0xa11ce, kMaxM * kK);
  const std::vector<std::uint16_t> host_b = normal_bf16(0xb0b, kK * kN);
  DeviceBuffer a(host_a.size() * 2);
  DeviceBuffer b(host_b.size() * 2);
  TCGEMM_CHECK_CUDA(cudaMemcpy(a.get(), host_a.data(), host_a.size() * 2, cudaMemcpyHostToDevice));
  TCGEMM_CHECK_CUDA(cudaMemcpy(b.get(), host_b.data(), host_b.size() * 2, cudaMemcpyHostToDevice));
  // The M = kMaxM result itself, every element against the independent
  // reference GEMM (fp32 sums, one thread per element): bf16 rounding of a
  // sum of 4096 products of normal values is within 1% of its magnitude
  // plus 0.05.
  std::vector<float> ref(static_cast<std::size_t>(kMaxM * kN));  // column-major, ld = kMaxM
  {
    // beta = 0: C is not read.
    const GemmArgs args = rows_args(a, b, nullptr, kMaxM, kN, kK, Layout::kColMajor);
    DeviceBuffer device_ref(ref.size() * sizeof(float));
    tcgemm::testing::reference_gemm(args, static_cast<float*>(device_ref.get()));
    TCGEMM_CHECK_CUDA(cudaMemcpy(ref.data(), device_ref.get(), ref.size() * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  }
  const auto check_tall = [&](const std::vector<std::uint16_t>& tall, Layout c_layout) {
    std::int64_t poisoned = 0;
    for (const std::uint16_t bits : tall) poisoned += bits == kPoisonBits ? 1 : 0;
    EXPECT_EQ(poisoned, 0) << "elements of C the call never wrote";
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < kMaxM; ++i) {
      for (std::int64_t j = 0; j < kN; ++j) {
        const double want = ref[j * kMaxM + i];
        const double got = decode(tall[i * kN + j], DType::kBF16);
        if (!(std::abs(got - want) <= 0.01 * std::abs(want) + 0.05)) ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0) << "C " << tcgemm::to_string(c_layout) << "-major, M=" << kMaxM
                        << ": elements off the reference GEMM";
  };
  for (Layout c_layout : {Layout::kRowMajor, Layout::kColMajor}) {
    const std::vector<std::uint16_t> tall = run_rows(a, b, kMaxM, kN, kK, c_layout, true);
    check_tall(tall, c_layout);
    for (std::int64_t m : {1, 7, 16, 64, 128, 300, 513}) {
      const std::vector<std::uint16_t> rows = run_rows(a, b, m, kN, kK, c_layout, true);
      std::int64_t differ = 0;
      for (std::int64_t i = 0; i < m * kN; ++i) differ += rows[i] != tall[i] ? 1 : 0;
      EXPECT_EQ(differ, 0) << "M=" << m << " C " << tcgemm::to_string(c_layout)
                           << "-major: elements of the first M rows that differ from M=" << kMaxM;
    }
  }
}

}  // namespace
}  // namespace tcgemm_test
