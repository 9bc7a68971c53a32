// Programmatic dependent launch keeps stream order: the production family's
// kernels start under the tail of the kernel before them (launch.cuh,
// launch_dependent_kernel) and must still read only what that kernel wrote.
// A chain of GEMMs, each reading the C the one before wrote, enqueued back to
// back with no synchronization, directly and as a captured CUDA graph:
// X_{i+1} = X_i * P_i with P_i a signed permutation matrix, so every element of
// the result is an element of X_0 with a sign, exact in bf16, and the chain's
// buffers start as NaN: a kernel that read its operand early returns NaN or
// stale values, and the element-for-element check below fails.
#include "gpu_test_util.h"

#include <tcgemm/gemm_plan.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace tcgemm_test {
namespace {

constexpr std::uint16_t kPoison = 0x7fc0;  // the bf16 NaN tcgemm::testing::fill_poison writes

std::uint16_t bf16_of_int(int v) {
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16);
}

struct ChainCase {
  const char* what;  // the path the dispatcher takes for these shapes (H200)
  std::int64_t m;    // rows of every X
  std::int64_t n;    // columns of every X: each GEMM is m x n x n
  std::int64_t pad;  // elements past n in each row of X (ld = n + pad)
  // Text describe()'s config holds on that path: a dispatcher change that
  // moved the shapes off it would otherwise drop its coverage unseen.
  const char* config_holds;
};

// One chain: X_0 .. X_kSteps (m x n, row-major, ld = n + pad) and the
// permutations, with the host's expected X_kSteps.
class Chain {
 public:
  static constexpr int kSteps = 6;

  explicit Chain(const ChainCase& c) : c_(c), ld_(c.n + c.pad) {
    std::mt19937_64 rng(0x9d1a0000 + static_cast<std::uint64_t>(c.m * 131 + c.n + c.pad));
    std::uniform_int_distribution<int> value(-2, 2);
    x0_.resize(static_cast<std::size_t>(c.m * ld_), kPoison);
    for (std::int64_t r = 0; r < c.m; ++r) {
      for (std::int64_t j = 0; j < c.n; ++j) x0_[r * ld_ + j] = bf16_of_int(value(rng));
    }
    // P_i (n x n, column-major): column j holds sign s_j in row perm_j, so
    // (X P)[r][j] = s_j X[r][perm_j].
    std::vector<int> expected_int(static_cast<std::size_t>(c.m * c.n));
    for (std::int64_t r = 0; r < c.m; ++r) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        expected_int[r * c.n + j] =
            static_cast<int>(std::bit_cast<float>(std::uint32_t{x0_[r * ld_ + j]} << 16));
      }
    }
    for (int step = 0; step < kSteps; ++step) {
      std::vector<std::int64_t> perm(static_cast<std::size_t>(c.n));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<int> sign(static_cast<std::size_t>(c.n));
      for (int& s : sign) s = (rng() & 1) != 0 ? 1 : -1;
      std::vector<std::uint16_t> p(static_cast<std::size_t>(c.n * c.n), bf16_of_int(0));
      for (std::int64_t j = 0; j < c.n; ++j) p[j * c.n + perm[j]] = bf16_of_int(sign[j]);
      permutations_.emplace_back(p.size() * 2);
      TCGEMM_CHECK_CUDA(
          cudaMemcpy(permutations_.back().get(), p.data(), p.size() * 2, cudaMemcpyHostToDevice));
      std::vector<int> next(expected_int.size());
      for (std::int64_t r = 0; r < c.m; ++r) {
        for (std::int64_t j = 0; j < c.n; ++j) {
          next[r * c.n + j] = sign[j] * expected_int[r * c.n + perm[j]];
        }
      }
      expected_int.swap(next);
    }
    expected_ = std::move(expected_int);
    for (int i = 0; i <= kSteps; ++i) x_.emplace_back(x0_.size() * 2);
  }

  // X_0 copied in, X_1 .. X_kSteps poisoned (padding included), on `stream`.
  void reset(cudaStream_t stream) {
    TCGEMM_CHECK_CUDA(
        cudaMemcpyAsync(x_[0].get(), x0_.data(), x0_.size() * 2, cudaMemcpyHostToDevice, stream));
    for (int i = 1; i <= kSteps; ++i) {
      tcgemm::testing::fill_poison(x_[i].get(), DType::kBF16, static_cast<std::int64_t>(x0_.size()),
                                   stream);
    }
  }

  GemmArgs args(int step, cudaStream_t stream) const {
    GemmArgs a;
    a.m = c_.m;
    a.n = c_.n;
    a.k = c_.n;
    a.a = {x_[step].get(), DType::kBF16, Layout::kRowMajor, ld_, 0};
    a.b = {permutations_[step].get(), DType::kBF16, Layout::kColMajor, c_.n, 0};
    a.c = {x_[step + 1].get(), DType::kBF16, Layout::kRowMajor, ld_, 0};
    a.stream = stream;
    return a;
  }

  // Every element of X_kSteps against the host's, and the padding of every
  // row still poison; the first few mismatches are reported.
  void expect_result(const std::string& context) const {
    std::vector<std::uint16_t> got(x0_.size());
    TCGEMM_CHECK_CUDA(
        cudaMemcpy(got.data(), x_[kSteps].get(), got.size() * 2, cudaMemcpyDeviceToHost));
    std::int64_t wrong = 0;
    std::int64_t guard = 0;
    for (std::int64_t r = 0; r < c_.m; ++r) {
      for (std::int64_t j = 0; j < ld_; ++j) {
        const std::uint16_t bits = got[r * ld_ + j];
        if (j >= c_.n) {
          if (bits != kPoison) ++guard;
          continue;
        }
        const std::uint16_t want = bf16_of_int(expected_[r * c_.n + j]);
        // -0 and +0 are both right for a zero.
        const bool zero = (want & 0x7fff) == 0 && (bits & 0x7fff) == 0;
        if (bits != want && !zero) {
          if (wrong < 5) {
            ADD_FAILURE() << context << ": X_" << kSteps << "[" << r << "][" << j << "] has bits 0x"
                          << std::hex << bits << ", expected 0x" << want << std::dec;
          }
          ++wrong;
        }
      }
    }
    EXPECT_EQ(wrong, 0) << context << ": elements of " << c_.m * c_.n << " wrong";
    EXPECT_EQ(guard, 0) << context << ": padding elements written";
  }

  std::size_t workspace_bytes() const {
    std::size_t bytes = 0;
    for (int step = 0; step < kSteps; ++step) {
      bytes = std::max(bytes, tcgemm::workspace_size(args(step, nullptr)));
    }
    return bytes;
  }

 private:
  ChainCase c_;
  std::int64_t ld_;
  std::vector<std::uint16_t> x0_;
  std::vector<int> expected_;
  std::vector<DeviceBuffer> permutations_;
  std::vector<DeviceBuffer> x_;
};

const ChainCase kCases[] = {
    {"tiles, TMA operands and TMA-stored C", 512, 512, 0, "epilogue=tma-store"},
    {"repacked operands (ld = n + 1), register epilogue", 384, 520, 1, "repack"},
    {"the small-M path", 8, 1024, 0, "small-M path"},
    // (M = 32: no tuned table holds it, and the heuristic splits it on the
    // H200's and the H100's bandwidth alike; M = 64 was the H200 table's
    // split and an H100's unsplit choice.)
    {"a K split (M = 32)", 32, 4096, 0, "split-k="},
};

using DependentLaunch = HopperTest;

TEST_F(DependentLaunch, ChainedGemmsReadWhatTheOneBeforeWrote) {
  cudaStream_t stream = nullptr;
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const ChainCase& c : kCases) {
    Chain chain(c);
    const std::string config = tcgemm::describe(chain.args(0, stream)).config;
    EXPECT_NE(config.find(c.config_holds), std::string::npos)
        << c.what << ": the dispatcher now runs " << config;
    const DeviceBuffer workspace(std::max<std::size_t>(chain.workspace_bytes(), 256));
    // Zeroed on the chain's stream (a non-blocking one: a plain cudaMemset
    // would not be ordered before its kernels).
    TCGEMM_CHECK_CUDA(cudaMemsetAsync(workspace.get(), 0, workspace.bytes(), stream));
    for (int round = 0; round < 2; ++round) {
      chain.reset(stream);
      for (int step = 0; step < Chain::kSteps; ++step) {
        GemmArgs a = chain.args(step, stream);
        a.workspace = workspace.get();
        a.workspace_bytes = workspace.bytes();
        ASSERT_TRUE(IsOk(tcgemm::gemm(a))) << c.what << " step " << step;
      }
      TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
      chain.expect_result(std::string(c.what) + " (" +
                          tcgemm::describe(chain.args(0, stream)).config + "), round " +
                          std::to_string(round));
    }
  }
  TCGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
}

// The same chains as one plan's runs captured in a CUDA graph: the
// dependencies become programmatic graph edges.
TEST_F(DependentLaunch, ChainedPlanRunsInACapturedGraph) {
  cudaStream_t stream = nullptr;
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const ChainCase& c : kCases) {
    Chain chain(c);
    tcgemm::GemmPlan plan;
    ASSERT_TRUE(IsOk(tcgemm::GemmPlan::create(chain.args(0, stream), {}, &plan))) << c.what;
    cudaGraph_t graph = nullptr;
    TCGEMM_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    Status status;
    for (int step = 0; step < Chain::kSteps && status.ok(); ++step) {
      const GemmArgs a = chain.args(step, stream);
      status = plan.run(a.a.ptr, a.b.ptr, a.c.ptr, 1.0f, 0.0f, stream);
    }
    TCGEMM_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    ASSERT_TRUE(IsOk(status)) << c.what;
    cudaGraphExec_t exec = nullptr;
    TCGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < 2; ++round) {
      chain.reset(stream);
      TCGEMM_CHECK_CUDA(cudaGraphLaunch(exec, stream));
      TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
      chain.expect_result(std::string(c.what) + " (" + plan.description().config +
                          "), graph launch " + std::to_string(round));
    }
    TCGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
    TCGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
  }
  TCGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace tcgemm_test
