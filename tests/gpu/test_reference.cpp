// The verification toolkit checked against independent answers: the GPU
// reference GEMM against a CPU double-precision GEMM, and the cuBLAS wrapper
// against the reference for every layout combination (which proves its
// mapping of row-major operands onto cuBLAS transposes).
#include "gpu_test_util.h"

#include <cublas_v2.h>

#include <cmath>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tcgemm_test {
namespace {

struct LayoutCombo {
  Layout a;
  Layout b;
  Layout c;
};

std::vector<LayoutCombo> all_layouts() {
  std::vector<LayoutCombo> out;
  for (Layout a : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Layout b : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Layout c : {Layout::kRowMajor, Layout::kColMajor}) out.push_back({a, b, c});
    }
  }
  return out;
}

std::string combo_name(const LayoutCombo& l) {
  ProblemSpec s;
  s.la = l.a;
  s.lb = l.b;
  s.lc = l.c;
  return layout_letters(s);
}

[[maybe_unused]] void PrintTo(const LayoutCombo& l, std::ostream* os) { *os << combo_name(l); }

std::string layout_param_name(const ::testing::TestParamInfo<LayoutCombo>& info) {
  return combo_name(info.param);
}

class ReferenceGemm : public HopperTestWithParam<LayoutCombo> {};

TEST_P(ReferenceGemm, MatchesCpuDoubleReference) {
  const LayoutCombo l = GetParam();
  std::uint64_t seed = 0x3ef00000 + 64 * static_cast<std::uint64_t>(static_cast<int>(l.a) * 4 +
                                                                    static_cast<int>(l.b) * 2 +
                                                                    static_cast<int>(l.c));
  for (auto [in, out] : {std::pair{DType::kBF16, DType::kFP32}, std::pair{DType::kFP16, DType::kBF16},
                         std::pair{DType::kBF16, DType::kFP16}}) {
    ProblemSpec s;
    s.m = 37;
    s.n = 29;
    s.k = 45;
    s.in = in;
    s.out = out;
    s.la = l.a;
    s.lb = l.b;
    s.lc = l.c;
    s.lda_pad = 3;
    s.ldb_pad = 5;
    s.ldc_pad = 2;
    s.alpha = 0.75f;
    s.beta = 0.5f;
    s.seed = seed;
    seed += 16;
    SCOPED_TRACE(describe(s));
    DeviceProblem p = make_problem(s);

    const std::vector<float> a = to_host_floats(p.a.get(), in, p.a_elements);
    const std::vector<float> b = to_host_floats(p.b.get(), in, p.b_elements);
    const std::vector<float> c = to_host_floats(p.c.get(), out, p.c_elements);
    const std::vector<double> cpu = tcgemm::testing::cpu_reference_gemm(p.args, a, b, c);
    ASSERT_EQ(cpu.size(), static_cast<std::size_t>(s.m * s.n));

    const DeviceBuffer ref = reference_of(p.args);
    const std::vector<float> gpu = to_host_floats(ref.get(), DType::kFP32, s.m * s.n);

    // fp32 accumulation of 45 products of O(1) values: relative error ~1e-7.
    double diff2 = 0.0;
    double norm2 = 0.0;
    double max_abs = 0.0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      ASSERT_TRUE(std::isfinite(gpu[i])) << "reference element " << i << " is not finite";
      const double d = static_cast<double>(gpu[i]) - cpu[i];
      diff2 += d * d;
      norm2 += cpu[i] * cpu[i];
      max_abs = std::fmax(max_abs, std::fabs(d));
    }
    const double rel = std::sqrt(diff2 / norm2);
    EXPECT_LT(rel, 1e-5) << "relative Frobenius error " << rel << ", max abs " << max_abs;
    EXPECT_LT(max_abs, 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, ReferenceGemm, ::testing::ValuesIn(all_layouts()),
                         layout_param_name);

// ---- cuBLAS as a second opinion ------------------------------------------------------

class CublasGemm : public HopperTestWithParam<LayoutCombo> {
 protected:
  void SetUp() override {
    HopperTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (handle_ != nullptr) cublasDestroy(handle_);
    HopperTest::TearDown();
  }
  cublasHandle_t handle_ = nullptr;
};

TEST_P(CublasGemm, AgreesWithReference) {
  const LayoutCombo l = GetParam();
  std::uint64_t seed = 0xcb100000 + 64 * static_cast<std::uint64_t>(static_cast<int>(l.a) * 4 +
                                                                    static_cast<int>(l.b) * 2 +
                                                                    static_cast<int>(l.c));
  struct Variant {
    std::int64_t m, n, k;
    DType in, out;
    std::int64_t lda_pad, ldb_pad, ldc_pad;
    float alpha, beta;
  };
  const Variant variants[] = {
      {96, 80, 72, DType::kBF16, DType::kFP32, 0, 0, 0, 1.0f, 0.0f},
      {96, 80, 72, DType::kFP16, DType::kFP16, 0, 0, 0, 1.0f, 0.0f},
      {67, 45, 33, DType::kBF16, DType::kBF16, 8, 3, 5, 1.0f, 0.0f},
      {67, 45, 33, DType::kFP16, DType::kFP32, 1, 2, 3, -0.5f, 0.75f},
  };
  for (const Variant& v : variants) {
    ProblemSpec s;
    s.m = v.m;
    s.n = v.n;
    s.k = v.k;
    s.in = v.in;
    s.out = v.out;
    s.la = l.a;
    s.lb = l.b;
    s.lc = l.c;
    s.lda_pad = v.lda_pad;
    s.ldb_pad = v.ldb_pad;
    s.ldc_pad = v.ldc_pad;
    s.alpha = v.alpha;
    s.beta = v.beta;
    s.seed = seed;
    seed += 16;
    SCOPED_TRACE(describe(s));
    DeviceProblem p = make_problem(s);
    const DeviceBuffer ref = reference_of(p.args);
    ASSERT_EQ(tcgemm::testing::cublas_gemm(handle_, p.args), CUBLAS_STATUS_SUCCESS);
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(MatchesReference(p.args, static_cast<const float*>(ref.get())));
  }
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, CublasGemm, ::testing::ValuesIn(all_layouts()),
                         layout_param_name);

}  // namespace
}  // namespace tcgemm_test
