// Every registry kernel against the reference GEMM (testing::reference_gemm,
// fp32 accumulation), through the public API with the kernel named, on
// square, tile-multiple, ragged, alpha/beta and wide-leading-dimension
// problems in bf16 and fp16 with half and fp32 outputs. Each problem has its
// own seed; C is poisoned whenever beta == 0, so an unwritten element fails.
// A kernel that asks for a GEMM workspace gets it zero-filled and must leave
// it zero-filled.
//
// A problem a kernel's constraints refuse is not computed: the test checks
// that the API refuses it too (kNotSupported with the same reason) and leaves
// C bit-identical, then reports itself skipped with the reason.
#include "gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/prod/problem.h"

namespace tcgemm_test {
namespace {

// The flag words a call left non-zero in the workspace attached to `args`
// (its first kReservedWorkspaceBytes, which every kernel that uses a
// workspace keeps zero between calls); 0 without a workspace.
std::int64_t flags_left(const GemmArgs& args) {
  if (args.workspace == nullptr) return 0;
  return nonzero_words(args.workspace,
                       std::min(args.workspace_bytes, tcgemm::prod::kReservedWorkspaceBytes));
}

struct KernelCase {
  std::string name;
  ProblemSpec spec;
};

// What gtest prints for a parameter (failure messages, XML value_param).
[[maybe_unused]] void PrintTo(const KernelCase& kc, std::ostream* os) {
  *os << kc.name << " (" << describe(kc.spec) << ")";
}

std::string dtype_name(DType d) { return std::string(tcgemm::to_string(d)); }

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> cases;
  std::uint64_t next_seed = 0x7c6e0000;
  auto add = [&](std::string group, ProblemSpec s, std::string suffix = "") {
    s.seed = next_seed;
    next_seed += 16;  // A, B, C use seed, seed + 1, seed + 2
    std::string name = group + "_" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                       std::to_string(s.k) + "_" + dtype_name(s.in) + "_" + dtype_name(s.out);
    if (!suffix.empty()) name += "_" + suffix;
    cases.push_back({name, s});
  };
  auto spec = [](std::int64_t m, std::int64_t n, std::int64_t k, DType in, DType out) {
    ProblemSpec s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.in = in;
    s.out = out;
    return s;
  };
  const DType kBF16 = DType::kBF16;
  const DType kFP16 = DType::kFP16;
  const DType kFP32 = DType::kFP32;

  // Square.
  for (std::int64_t size : {256, 1024}) {
    for (DType in : {kBF16, kFP16}) {
      add("Square", spec(size, size, size, in, in));
      add("Square", spec(size, size, size, in, kFP32));
    }
  }
  add("Square", spec(4096, 4096, 4096, kBF16, kBF16));
  add("Square", spec(4096, 4096, 4096, kFP16, kFP16));

  // Multiples of the 128 x 256 x 64 tile, not square.
  for (auto [m, n, k] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{128, 256, 64},
                         {384, 512, 192},
                         {1024, 768, 4096}}) {
    add("TileMultiple", spec(m, n, k, kBF16, kBF16));
    add("TileMultiple", spec(m, n, k, kFP16, kFP16));
  }
  add("TileMultiple", spec(384, 512, 192, kBF16, kFP32));
  add("TileMultiple", spec(384, 512, 192, kFP16, kFP32));
  // More 128 x 256 tile pairs (72) than an H200 holds clusters of 2 (66):
  // several tiles per cluster in the persistent steps (two in all 36 clusters
  // of hopper-14's balanced grid). hopper-14 stores half of a tile's C under
  // the next tile's third k-tile (K = 192, 200), or at the tile's end when K
  // is too short for that (K = 64, 128); with alpha and beta it reads C for
  // the deferred half too; 2040 x 2300 adds ragged M and N edges.
  for (std::int64_t k : {64, 128, 192, 200}) add("MultiRound", spec(2048, 2304, k, kBF16, kBF16));
  for (DType dtype : {kBF16, kFP16}) {
    ProblemSpec s = spec(2048, 2304, 192, dtype, dtype);
    s.alpha = -0.75f;
    s.beta = 0.5f;
    add("MultiRound", s, "alpham0p75_beta0p5");
  }
  add("MultiRound", spec(2040, 2300, 200, kBF16, kBF16));
  // Stream-K (hopper-15) on an H200's 66 clusters: 72 pairs of 63 k-tiles
  // are one whole round and 6 pairs whose 378 k-tiles are split over all 66
  // clusters (5 or 6 each), so each split pair's head adds about ten partial
  // sums; ragged M, N and K, and alpha and beta on the fixed-up tiles.
  add("StreamK", spec(2040, 2300, 4000, kBF16, kBF16));
  {
    ProblemSpec s = spec(2040, 2300, 4000, kFP16, kFP16);
    s.alpha = -0.75f;
    s.beta = 0.5f;
    add("StreamK", s, "alpham0p75_beta0p5");
  }

  // Ragged: partial tiles in M, N and K, tiny and degenerate-looking shapes;
  // K and the tight leading dimensions stay multiples of 8.
  for (auto [m, n, k] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{129, 257, 72},
                         {1, 1, 8},
                         {17, 9, 40},
                         {1000, 1000, 8},
                         {200, 136, 1000}}) {
    add("Ragged", spec(m, n, k, kBF16, kBF16));
    add("Ragged", spec(m, n, k, kFP16, kFP16));
  }
  add("Ragged", spec(129, 257, 72, kBF16, kFP32));
  add("Ragged", spec(129, 257, 72, kFP16, kFP32));
  add("Ragged", spec(1, 4096, 64, kBF16, kBF16));
  add("Ragged", spec(4096, 1, 64, kBF16, kBF16));
  add("Ragged", spec(4095, 4097, 4096, kBF16, kBF16));
  add("Ragged", spec(4095, 4097, 4096, kFP16, kFP32));

  // alpha and beta: beta == 0 on a poisoned C must not read it; beta != 0
  // reads a random C.
  {
    ProblemSpec s = spec(256, 384, 128, kBF16, kBF16);
    s.alpha = 1.5f;
    add("AlphaBeta", s, "alpha1p5_beta0");
    s.alpha = -0.75f;
    s.beta = 0.5f;
    add("AlphaBeta", s, "alpham0p75_beta0p5");
    s = spec(256, 384, 128, kFP16, kFP32);
    s.alpha = 0.5f;
    s.beta = -1.25f;
    add("AlphaBeta", s, "alpha0p5_betam1p25");
    s = spec(256, 384, 128, kFP16, kFP16);
    s.alpha = 0.0f;
    s.beta = 0.5f;
    add("AlphaBeta", s, "alpha0_beta0p5");
    s = spec(129, 257, 72, kBF16, kBF16);
    s.alpha = 2.0f;
    s.beta = 0.5f;
    add("AlphaBeta", s, "alpha2_beta0p5");
    s = spec(1, 1, 8, kBF16, kFP32);
    s.beta = 1.0f;
    add("AlphaBeta", s, "alpha1_beta1");
  }

  // Leading dimensions larger than the matrix: lda = K + 8, ldb = K + 16,
  // ldc = M + 3 (odd).
  {
    ProblemSpec s = spec(256, 192, 128, kBF16, kBF16);
    s.lda_pad = 8;
    s.ldb_pad = 16;
    s.ldc_pad = 3;
    add("WideLd", s);
    s.in = kFP16;
    s.out = kFP32;
    add("WideLd", s);
    s = spec(129, 257, 72, kFP16, kFP16);
    s.lda_pad = 8;
    s.ldb_pad = 8;
    s.ldc_pad = 3;
    s.beta = 0.5f;
    add("WideLd", s, "beta0p5");
    s = spec(1024, 512, 256, kBF16, kBF16);
    s.ldc_pad = 1;
    add("WideLd", s);
    // Multiples of 8 everywhere (what TMA-stored C needs), with padding
    // beyond M in every column that must stay untouched.
    s = spec(264, 200, 136, kBF16, kBF16);
    s.lda_pad = 8;
    s.ldb_pad = 8;
    s.ldc_pad = 8;
    add("WideLd", s, "all_multiples_of_8");
    s = spec(8, 256, 64, kFP16, kFP16);
    s.ldc_pad = 56;
    add("WideLd", s, "m8_ldc64");
  }

  // NN (A, B, C column-major): the S4000 article's layout, which the WMMA
  // ladder (wmma-*) serves. Whole 128 x 128 tiles; K a multiple of 64 (every
  // step) except the K = 272 case, which only steps 0-4 (K % 16) accept;
  // leading dimensions padded by multiples of 8 (what the 16-byte copies
  // need) and by 3 (ldc, which only the element-wise C stores of wmma-00 and
  // wmma-08 accept).
  {
    auto nn = [&](std::int64_t m, std::int64_t n, std::int64_t k, DType in, DType out) {
      ProblemSpec s = spec(m, n, k, in, out);
      s.la = Layout::kColMajor;
      s.lb = Layout::kColMajor;
      s.lc = Layout::kColMajor;
      return s;
    };
    add("NN", nn(256, 256, 256, kFP16, kFP16));
    add("NN", nn(256, 256, 256, kFP16, kFP32));
    add("NN", nn(256, 256, 256, kBF16, kBF16));
    add("NN", nn(512, 384, 1024, kFP16, kFP16));
    add("NN", nn(512, 384, 1024, kFP16, kFP32));
    add("NN", nn(512, 384, 1024, kBF16, kFP32));
    add("NN", nn(1024, 1024, 1024, kFP16, kFP16));
    add("NN", nn(1024, 1024, 1024, kFP16, kFP32));
    add("NN", nn(256, 384, 272, kFP16, kFP16), "k272");
    ProblemSpec s = nn(256, 384, 512, kFP16, kFP16);
    s.alpha = 0.75f;
    s.beta = -0.5f;
    add("NN", s, "alpha0p75_betam0p5");
    s = nn(512, 256, 256, kFP16, kFP32);
    s.alpha = 1.0f;
    s.beta = 1.0f;
    add("NN", s, "alpha1_beta1");
    s = nn(384, 256, 192, kFP16, kFP16);
    s.lda_pad = 8;
    s.ldb_pad = 16;
    s.ldc_pad = 8;
    add("NN", s, "wide_ld_multiples_of_8");
    s.ldc_pad = 3;
    s.beta = 0.5f;
    add("NN", s, "ldc_odd_beta0p5");
    // wmma-11's 128 x 256 x 32 tile: padded leading dimensions and alpha,
    // beta with N a multiple of 256, and fewer K tiles (one, two) than its
    // pipeline stages.
    s = nn(256, 512, 192, kFP16, kFP16);
    s.lda_pad = 8;
    s.ldb_pad = 16;
    s.ldc_pad = 8;
    s.alpha = 0.75f;
    s.beta = -0.5f;
    add("NN", s, "wide_ld_alpha0p75_betam0p5");
    add("NN", nn(128, 256, 32, kFP16, kFP16), "k32");
    add("NN", nn(256, 256, 64, kBF16, kFP32), "k64");
  }

  // Problems today's Hopper kernel is expected to refuse (odd K and lda, other
  // layouts). A kernel that accepts one is verified like any other case.
  add("Other", spec(17, 9, 33, kBF16, kBF16));
  {
    ProblemSpec s = spec(256, 256, 256, kBF16, kBF16);
    s.la = Layout::kColMajor;
    add("Other", s, "NN");
    s = spec(256, 256, 256, kFP16, kFP16);
    s.lc = Layout::kRowMajor;
    add("Other", s, "TN_Crow");
    s = spec(256, 256, 256, kBF16, kFP32);
    s.la = Layout::kColMajor;
    s.lb = Layout::kRowMajor;
    s.lc = Layout::kRowMajor;
    add("Other", s, "NT_Crow");
    s = spec(256, 256, 256, kBF16, kBF16);
    s.lda_pad = 1;
    add("Other", s, "lda_odd");
  }
  return cases;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const tcgemm::KernelInfo& k : tcgemm::registry()) names.emplace_back(k.name);
  return names;
}

// A kernel registered to show what a data race does (its description starts
// with "UNSAFE"): a wrong result is its expected behavior, not a test failure.
// Its refusals are still checked.
bool is_unsafe(const tcgemm::KernelInfo& kernel) {
  return kernel.description.starts_with("UNSAFE");
}

std::string unsafe_reason(const tcgemm::KernelInfo& kernel) {
  return std::string(kernel.name) +
         " is registered as UNSAFE (it has a data race on purpose): its results are not "
         "expected to be right or repeatable, so they are not checked here";
}

using KernelCaseParam = std::tuple<KernelCase, std::string>;

std::string case_param_name(const ::testing::TestParamInfo<KernelCaseParam>& info) {
  return sanitize_name(std::get<0>(info.param).name + "__" + std::get<1>(info.param));
}

class KernelVsReference : public HopperTestWithParam<KernelCaseParam> {};

TEST_P(KernelVsReference, MatchesReference) {
  const KernelCase& kc = std::get<0>(GetParam());
  const std::string& kernel_name = std::get<1>(GetParam());
  const tcgemm::KernelInfo* kernel = tcgemm::find_kernel(kernel_name);
  ASSERT_NE(kernel, nullptr) << kernel_name;
  SCOPED_TRACE(kernel_name + " on " + describe(kc.spec));

  DeviceProblem p = make_problem(kc.spec);
  tcgemm::GemmOptions options;
  options.kernel = kernel->name;
  const std::string refusal = tcgemm::check_constraints(
      kernel->constraints, p.args, tcgemm::DeviceCaps{device_compute_capability()});
  // alpha == 0 (or K == 0) is the BLAS quick return: tcgemm::gemm computes
  // C = beta * C itself before it looks at the named kernel (src/api.cpp), so
  // no named kernel runs and a refusal never shows (seen on the H200 with the
  // NN-only WMMA kernels on a TN alpha == 0 case: the API returned success).
  if (p.args.alpha == 0.0f || p.args.k == 0) {
    GTEST_SKIP() << describe(kc.spec) << ": alpha == 0 (or K == 0) is the API's quick return, "
                 << "which runs no kernel (" << kernel_name << " or any other; GemmApi tests it)";
  }
  if (!refusal.empty()) {
    const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
    const Status s = tcgemm::gemm(p.args, options);
    EXPECT_EQ(s.code, StatusCode::kNotSupported) << s.message;
    EXPECT_NE(s.message.find(refusal), std::string::npos)
        << "API message '" << s.message << "' lacks the constraint's reason '" << refusal << "'";
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(tcgemm::testing::bitwise_equal(p.c.get(), before.get(), p.c_bytes()))
        << "a refused call changed C";
    EXPECT_TRUE(GuardsUntouched(p.c));
    if (!HasFailure()) {
      GTEST_SKIP() << kernel_name << " refuses " << describe(kc.spec) << ": " << refusal
                   << " (the API refused it too and left C untouched)";
    }
    return;
  }

  if (is_unsafe(*kernel)) GTEST_SKIP() << unsafe_reason(*kernel);

  const DeviceBuffer workspace = attach_workspace(*kernel, p.args);
  const DeviceBuffer ref = reference_of(p.args);
  const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
  // A kernel never writes its inputs, their padding included.
  const std::size_t a_bytes = bytes_for(p.a_elements, kc.spec.in);
  const std::size_t b_bytes = bytes_for(p.b_elements, kc.spec.in);
  const DeviceBuffer a_before = snapshot(p.a.get(), a_bytes);
  const DeviceBuffer b_before = snapshot(p.b.get(), b_bytes);
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args, options)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
  EXPECT_TRUE(PaddingUntouched(p.args, before.get(), p.c_elements));
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(p.a.get(), a_before.get(), a_bytes))
      << "the kernel wrote A";
  EXPECT_TRUE(tcgemm::testing::bitwise_equal(p.b.get(), b_before.get(), b_bytes))
      << "the kernel wrote B";
  EXPECT_EQ(flags_left(p.args), 0) << "workspace flag words left non-zero";
  EXPECT_TRUE(GuardsUntouched(p.c));

  // Again on small integers, where every fp32 sum is exact: every element
  // must be the reference rounded to C's dtype, and the guard bands intact.
  if (!exact_check_applies(p.args)) return;
  EXPECT_TRUE(ExactOnSmallIntegers(
      p, [&](const GemmArgs& exact) { return tcgemm::gemm(exact, options); }));
  EXPECT_EQ(flags_left(p.args), 0) << "workspace flag words left non-zero";
}

// Whether a case runs above is the kernel's own constraints' call: a kernel
// whose constraints came to refuse everything would turn every case into a
// skip. Each kernel the cases test must take some of them (host only:
// constraints read addresses, never memory).
TEST(KernelCases, EveryCheckedKernelTakesSomeCase) {
  void* const fake = reinterpret_cast<void*>(std::uintptr_t{1} << 32);
  for (const std::string& name : kernel_names()) {
    const tcgemm::KernelInfo* kernel = tcgemm::find_kernel(name);
    ASSERT_NE(kernel, nullptr) << name;
    if (is_unsafe(*kernel)) continue;
    int taken = 0;
    for (const KernelCase& kc : kernel_cases()) {
      if (kc.spec.alpha == 0.0f || kc.spec.k == 0) continue;  // the API's quick return: skipped
      taken += tcgemm::check_constraints(kernel->constraints, args_of(kc.spec, fake, fake, fake),
                                         tcgemm::DeviceCaps{90})
                       .empty()
                   ? 1
                   : 0;
    }
    EXPECT_GT(taken, 0) << name << " refuses every case";
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelVsReference,
                         ::testing::Combine(::testing::ValuesIn(kernel_cases()),
                                            ::testing::ValuesIn(kernel_names())),
                         case_param_name);

// ---- repeatability ------------------------------------------------------------
// The same inputs give bit-identical outputs run after run (docs/benchmarking.md).

std::vector<KernelCase> repeat_cases() {
  std::vector<KernelCase> cases;
  ProblemSpec s;
  s.m = s.n = s.k = 2048;
  s.seed = 0x4e9e0000;
  cases.push_back({"Square_2048_bf16_bf16", s});
  s = ProblemSpec{};
  s.m = 1024;
  s.n = 768;
  s.k = 4096;
  s.in = DType::kFP16;
  s.out = DType::kFP32;
  s.seed = 0x4e9e0010;
  cases.push_back({"TileMultiple_1024x768x4096_fp16_fp32", s});
  s = ProblemSpec{};
  s.m = 129;
  s.n = 257;
  s.k = 72;
  s.in = DType::kFP16;
  s.out = DType::kFP16;
  s.beta = 0.5f;
  s.ldc_pad = 3;
  s.seed = 0x4e9e0020;
  cases.push_back({"Ragged_129x257x72_fp16_fp16_beta0p5", s});
  // NN, the WMMA ladder's layout.
  s = ProblemSpec{};
  s.m = 1024;
  s.n = 768;
  s.k = 2048;
  s.in = DType::kFP16;
  s.out = DType::kFP16;
  s.la = Layout::kColMajor;
  s.lb = Layout::kColMajor;
  s.lc = Layout::kColMajor;
  s.seed = 0x4e9e0030;
  cases.push_back({"NN_1024x768x2048_fp16_fp16", s});
  return cases;
}

class KernelRepeatability : public HopperTestWithParam<KernelCaseParam> {};

TEST_P(KernelRepeatability, RunsAreBitwiseIdentical) {
  const KernelCase& kc = std::get<0>(GetParam());
  const std::string& kernel_name = std::get<1>(GetParam());
  const tcgemm::KernelInfo* kernel = tcgemm::find_kernel(kernel_name);
  ASSERT_NE(kernel, nullptr) << kernel_name;
  SCOPED_TRACE(kernel_name + " on " + describe(kc.spec));

  DeviceProblem p = make_problem(kc.spec);
  const std::string refusal = tcgemm::check_constraints(
      kernel->constraints, p.args, tcgemm::DeviceCaps{device_compute_capability()});
  if (!refusal.empty()) GTEST_SKIP() << kernel_name << " refuses this problem: " << refusal;
  if (is_unsafe(*kernel)) GTEST_SKIP() << unsafe_reason(*kernel);

  tcgemm::GemmOptions options;
  options.kernel = kernel->name;
  // Zeroed once: every run leaves it zeroed for the next (the API's contract).
  const DeviceBuffer workspace = attach_workspace(*kernel, p.args);
  const DeviceBuffer ref = reference_of(p.args);
  ASSERT_TRUE(IsOk(tcgemm::gemm(p.args, options)));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  // Identical garbage would also be "repeatable": the first run must be right.
  ASSERT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
  const DeviceBuffer first = snapshot(p.c.get(), p.c_bytes());

  for (int run = 2; run <= 3; ++run) {
    EXPECT_EQ(flags_left(p.args), 0) << "workspace flag words left non-zero by run " << run - 1;
    p.reset_c();
    ASSERT_TRUE(IsOk(tcgemm::gemm(p.args, options)));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(tcgemm::testing::bitwise_equal(first.get(), p.c.get(), p.c_bytes()))
        << "run " << run << " differs from run 1";
  }
  EXPECT_EQ(flags_left(p.args), 0) << "workspace flag words left non-zero by run 3";
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelRepeatability,
                         ::testing::Combine(::testing::ValuesIn(repeat_cases()),
                                            ::testing::ValuesIn(kernel_names())),
                         case_param_name);

}  // namespace
}  // namespace tcgemm_test
