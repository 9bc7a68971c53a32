// Shared pieces of the GPU tests: the skip rule, a device problem built from
// a small spec (fresh random inputs, poisoned or random C), the GEMM workspace
// a kernel asks for, and host copies.
#pragma once

#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include "testing/testing.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace tcgemm_test {

using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::Layout;
using tcgemm::Status;
using tcgemm::StatusCode;
using tcgemm::testing::DeviceBuffer;

// Empty when device 0 can run tcgemm's device code (sm_90: the library, the
// reference GEMM and the fills are all built for sm_90a only); otherwise the
// reason, worded for a test report.
inline std::string hopper_skip_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "no CUDA device (cudaGetDeviceCount returned 0)";
  int major = 0;
  int minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (major != 9 || minor != 0) {
    return "device 0 is sm_" + std::to_string(major * 10 + minor) +
           "; tcgemm's kernels and references are built for sm_90a (Hopper) only";
  }
  return {};
}

inline int device_compute_capability() {
  int major = 0;
  int minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major * 10 + minor;
}

// True when the environment variable TCGEMM_REQUIRE_GPU is set to anything
// but "" or "0": a run on the GPU machine sets it, so that a broken driver
// or a hidden device fails every GPU test instead of skipping them all
// (which a test report shows as a pass).
inline bool gpu_required() {
  const char* const v = std::getenv("TCGEMM_REQUIRE_GPU");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// Every GPU test derives from this: it skips without a Hopper device (fails,
// with TCGEMM_REQUIRE_GPU set) and checks after each test that no
// asynchronous CUDA error was left behind.
class HopperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = hopper_skip_reason();
    if (reason.empty()) return;
    if (gpu_required()) GTEST_FAIL() << "TCGEMM_REQUIRE_GPU is set, but " << reason;
    GTEST_SKIP() << reason;
  }
  void TearDown() override {
    if (IsSkipped() || HasFatalFailure()) return;
    const cudaError_t sync = cudaDeviceSynchronize();
    EXPECT_EQ(sync, cudaSuccess) << "after the test: " << cudaGetErrorString(sync);
    const cudaError_t last = cudaGetLastError();
    EXPECT_EQ(last, cudaSuccess) << "after the test: " << cudaGetErrorString(last);
  }
};

template <typename Param>
class HopperTestWithParam : public HopperTest, public ::testing::WithParamInterface<Param> {};

// What a test problem is: sizes, dtypes, layouts, padding of each leading
// dimension beyond the tight one, scalars, and the seed of its inputs
// (A uses seed, B seed + 1, C seed + 2).
struct ProblemSpec {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType in = DType::kBF16;
  DType out = DType::kBF16;
  Layout la = Layout::kRowMajor;
  Layout lb = Layout::kColMajor;
  Layout lc = Layout::kColMajor;
  std::int64_t lda_pad = 0;
  std::int64_t ldb_pad = 0;
  std::int64_t ldc_pad = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::uint64_t seed = 1;
};

inline std::string layout_letters(const ProblemSpec& s) {
  // BLAS-style: A row-major is "T", column-major "N"; same for B. C's order
  // is spelled out because cuBLAS has no name for a row-major C.
  std::string out;
  out += s.la == Layout::kRowMajor ? 'T' : 'N';
  out += s.lb == Layout::kRowMajor ? 'T' : 'N';
  out += s.lc == Layout::kRowMajor ? "_Crow" : "_Ccol";
  return out;
}

inline std::string describe(const ProblemSpec& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         std::string(tcgemm::to_string(s.in)) + "->" + std::string(tcgemm::to_string(s.out)) +
         " " + layout_letters(s) + " lda+" + std::to_string(s.lda_pad) + " ldb+" +
         std::to_string(s.ldb_pad) + " ldc+" + std::to_string(s.ldc_pad) +
         " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta) +
         " seed=" + std::to_string(s.seed);
}

inline std::int64_t tight_ld(std::int64_t rows, std::int64_t cols, Layout layout) {
  const std::int64_t ld = layout == Layout::kRowMajor ? cols : rows;
  return ld < 1 ? 1 : ld;
}

inline std::size_t bytes_for(std::int64_t elements, DType dtype) {
  // Never allocate zero bytes: an empty operand still gets a real address.
  const std::int64_t e = elements < 1 ? 1 : elements;
  return static_cast<std::size_t>(e) * tcgemm::size_of(dtype);
}

// C's buffer inside guard bands: kCGuardBytes before and after it, filled
// with kCGuardByte, which no kernel may change (GuardsUntouched). C's base
// keeps cudaMalloc's 256-byte alignment. All ones is a NaN in every output
// dtype (0xFFFF, 0xFFFFFFFF) with a sign and payload that GPU arithmetic
// never produces (its NaNs are canonical, positive): an epilogue that stores
// past C unmasked, even alpha * 0 + 1 * guard with beta == 1, changes it.
inline constexpr std::size_t kCGuardBytes = 16384;
inline constexpr unsigned char kCGuardByte = 0xFF;

struct GuardedC {
  DeviceBuffer frame;  // guard, C, guard
  std::size_t c_bytes = 0;

  void* get() const { return static_cast<unsigned char*>(frame.get()) + kCGuardBytes; }
};

inline GuardedC make_guarded_c(std::size_t c_bytes) {
  GuardedC c{DeviceBuffer(c_bytes + 2 * kCGuardBytes), c_bytes};
  TCGEMM_CHECK_CUDA(cudaMemset(c.frame.get(), kCGuardByte, c.frame.bytes()));
  return c;
}

// Every byte of both guard bands still holds kCGuardByte: nothing was
// written before C's first element or past its last.
inline ::testing::AssertionResult GuardsUntouched(const GuardedC& c) {
  const auto* frame = static_cast<const unsigned char*>(c.frame.get());
  std::vector<unsigned char> band[2] = {std::vector<unsigned char>(kCGuardBytes),
                                        std::vector<unsigned char>(kCGuardBytes)};
  TCGEMM_CHECK_CUDA(cudaMemcpy(band[0].data(), frame, kCGuardBytes, cudaMemcpyDeviceToHost));
  TCGEMM_CHECK_CUDA(cudaMemcpy(band[1].data(), frame + kCGuardBytes + c.c_bytes, kCGuardBytes,
                               cudaMemcpyDeviceToHost));
  std::int64_t written[2] = {0, 0};
  std::int64_t first = 0;  // the first written byte's offset from C's base
  for (int side = 0; side < 2; ++side) {
    for (std::size_t i = 0; i < kCGuardBytes; ++i) {
      if (band[side][i] == kCGuardByte) continue;
      if (written[0] + written[1] == 0) {
        first = side == 0 ? static_cast<std::int64_t>(i) - std::int64_t{kCGuardBytes}
                          : static_cast<std::int64_t>(c.c_bytes + i);
      }
      ++written[side];
    }
  }
  if (written[0] + written[1] == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << written[0] << " byte(s) before C and " << written[1] << " after its " << c.c_bytes
         << " were written (guard bands of " << kCGuardBytes
         << " bytes), the first at byte offset " << first << " from C's base";
}

// Sets C's padding (each line's elements from its M or N up to ld, the
// last line having none) to kCGuardByte bytes, a value no arithmetic
// epilogue writes: with beta != 0 a kernel that stored into the padding
// unmasked would otherwise write back what it read there and pass
// PaddingUntouched. (A path that copied the padding through unchanged
// would still pass; none does.)
inline void poison_padding(const tcgemm::MutableMatrixRef& c, std::int64_t m, std::int64_t n) {
  const std::int64_t line = c.layout == Layout::kColMajor ? m : n;
  const std::int64_t lines = c.layout == Layout::kColMajor ? n : m;
  if (c.ld <= line || lines < 2) return;
  const std::size_t elem = tcgemm::size_of(c.dtype);
  TCGEMM_CHECK_CUDA(cudaMemset2D(static_cast<unsigned char*>(c.ptr) + line * elem, c.ld * elem,
                                 kCGuardByte, (c.ld - line) * elem,
                                 static_cast<std::size_t>(lines - 1)));
}

// A problem living on the device: A and B hold normal(0, 1) values; C holds
// normal(0, 1) values when beta != 0 (its padding the guard pattern:
// poison_padding) and the NaN poison otherwise, so an element the kernel
// fails to write is caught; guard bands around C catch writes outside it
// (GuardsUntouched(p.c)).
struct DeviceProblem {
  ProblemSpec spec;
  GemmArgs args;
  DeviceBuffer a;
  DeviceBuffer b;
  GuardedC c;
  std::int64_t a_elements = 0;
  std::int64_t b_elements = 0;
  std::int64_t c_elements = 0;

  std::size_t c_bytes() const { return bytes_for(c_elements, spec.out); }

  // Refills C as at construction (same seed): for a second run of the same problem.
  void reset_c() {
    if (spec.beta != 0.0f) {
      tcgemm::testing::fill_normal(c.get(), spec.out, c_elements, spec.seed + 2);
      poison_padding(args.c, args.m, args.n);
    } else {
      tcgemm::testing::fill_poison(c.get(), spec.out, c_elements);
    }
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  }
};

// The GEMM arguments of spec `s` with its operands at a, b and c (no
// memory touched: the host can check constraints on fake addresses).
inline GemmArgs args_of(const ProblemSpec& s, void* a, void* b, void* c) {
  GemmArgs args;
  args.m = s.m;
  args.n = s.n;
  args.k = s.k;
  args.alpha = s.alpha;
  args.beta = s.beta;
  args.a = {a, s.in, s.la, tight_ld(s.m, s.k, s.la) + s.lda_pad, 0};
  args.b = {b, s.in, s.lb, tight_ld(s.k, s.n, s.lb) + s.ldb_pad, 0};
  args.c = {c, s.out, s.lc, tight_ld(s.m, s.n, s.lc) + s.ldc_pad, 0};
  return args;
}

inline DeviceProblem make_problem(const ProblemSpec& s) {
  DeviceProblem p;
  p.spec = s;
  const GemmArgs shape = args_of(s, nullptr, nullptr, nullptr);
  p.a_elements = tcgemm::testing::span_elements(s.m, s.k, s.la, shape.a.ld);
  p.b_elements = tcgemm::testing::span_elements(s.k, s.n, s.lb, shape.b.ld);
  p.c_elements = tcgemm::testing::span_elements(s.m, s.n, s.lc, shape.c.ld);
  p.a = DeviceBuffer(bytes_for(p.a_elements, s.in));
  p.b = DeviceBuffer(bytes_for(p.b_elements, s.in));
  p.c = make_guarded_c(bytes_for(p.c_elements, s.out));
  if (p.a_elements > 0) tcgemm::testing::fill_normal(p.a.get(), s.in, p.a_elements, s.seed);
  if (p.b_elements > 0) tcgemm::testing::fill_normal(p.b.get(), s.in, p.b_elements, s.seed + 1);
  p.args = args_of(s, p.a.get(), p.b.get(), p.c.get());
  if (p.c_elements > 0) p.reset_c();
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  return p;
}

// `bytes` of zero-filled device memory (what the API asks of a workspace
// before its first use), put into args as its workspace; none for 0 bytes.
// The buffer returned owns it: keep it alive while args is in use.
inline DeviceBuffer attach_workspace(GemmArgs& args, std::size_t bytes) {
  DeviceBuffer workspace(bytes);
  if (bytes > 0) TCGEMM_CHECK_CUDA(cudaMemset(workspace.get(), 0, bytes));
  args.workspace = workspace.get();
  args.workspace_bytes = bytes;
  return workspace;
}

// The workspace `kernel` asks for on `args` (KernelInfo::workspace_bytes;
// none without such a function), attached as above. Call only when the
// kernel's constraints accept args (what a workspace function assumes).
inline DeviceBuffer attach_workspace(const tcgemm::KernelInfo& kernel, GemmArgs& args) {
  return attach_workspace(args,
                          kernel.workspace_bytes != nullptr ? kernel.workspace_bytes(args) : 0);
}

// The 32-bit words among the first `bytes` at device address `p` that are
// not zero; -1 when they cannot be read back. A GEMM workspace's flags
// (the first tcgemm::prod::kReservedWorkspaceBytes) must be zero after
// every call, as they were before it.
inline std::int64_t nonzero_words(const void* p, std::size_t bytes) {
  std::vector<std::uint32_t> words(bytes / 4);
  if (words.empty()) return 0;
  if (cudaMemcpy(words.data(), p, words.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return -1;
  }
  return std::count_if(words.begin(), words.end(), [](std::uint32_t w) { return w != 0; });
}

// A device copy of `bytes` at `src` (to check later that they did not change).
inline DeviceBuffer snapshot(const void* src, std::size_t bytes) {
  DeviceBuffer copy(bytes);
  TCGEMM_CHECK_CUDA(cudaMemcpy(copy.get(), src, bytes, cudaMemcpyDeviceToDevice));
  return copy;
}

// The reference result of a problem (fp32, column-major, ld = M), computed
// before the kernel under test overwrites C.
inline DeviceBuffer reference_of(const GemmArgs& args) {
  DeviceBuffer ref(bytes_for(args.m * args.n, DType::kFP32));
  tcgemm::testing::reference_gemm(args, static_cast<float*>(ref.get()));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  return ref;
}

// Host float values of `count` device elements of `dtype`.
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits = 0;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    float v = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline std::vector<float> to_host_floats(const void* device, DType dtype, std::int64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count));
  if (count <= 0) return out;
  if (dtype == DType::kFP32) {
    TCGEMM_CHECK_CUDA(cudaMemcpy(out.data(), device, out.size() * 4, cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> raw(out.size());
  TCGEMM_CHECK_CUDA(cudaMemcpy(raw.data(), device, raw.size() * 2, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (dtype == DType::kBF16) {
      const std::uint32_t bits = static_cast<std::uint32_t>(raw[i]) << 16;
      std::memcpy(&out[i], &bits, sizeof(float));
    } else {
      out[i] = half_bits_to_float(raw[i]);
    }
  }
  return out;
}

// Every element of C's buffer outside the M x N matrix (the rows or columns
// between M (or N) and ld) holds the same bits as in `before`: a kernel may
// write C, never the caller's memory around it.
inline ::testing::AssertionResult PaddingUntouched(const GemmArgs& args, const void* before,
                                                   std::int64_t elements) {
  const std::size_t elem = tcgemm::size_of(args.c.dtype);
  std::vector<unsigned char> was(static_cast<std::size_t>(elements) * elem);
  std::vector<unsigned char> now(was.size());
  TCGEMM_CHECK_CUDA(cudaMemcpy(was.data(), before, was.size(), cudaMemcpyDeviceToHost));
  TCGEMM_CHECK_CUDA(cudaMemcpy(now.data(), args.c.ptr, now.size(), cudaMemcpyDeviceToHost));
  const std::int64_t line_len = args.c.layout == Layout::kColMajor ? args.m : args.n;
  std::int64_t changed = 0;
  std::int64_t first = -1;
  for (std::int64_t i = 0; i < elements; ++i) {
    if (i % args.c.ld < line_len) continue;  // inside the matrix
    if (std::memcmp(&was[static_cast<std::size_t>(i) * elem], &now[static_cast<std::size_t>(i) * elem],
                    elem) != 0) {
      if (first < 0) first = i;
      ++changed;
    }
  }
  if (changed == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << changed << " element(s) of C's padding (beyond "
                                       << line_len << " of ld=" << args.c.ld
                                       << ") were written, the first at offset " << first;
}

// Pass/fail of a compare() against the tolerance of the output dtype, with
// the error figures in the message either way.
inline ::testing::AssertionResult MatchesReference(const GemmArgs& args, const float* ref) {
  const tcgemm::testing::ErrorStats e = tcgemm::testing::compare(args, ref);
  const double tol = tcgemm::testing::tolerance_for(args.c.dtype);
  ::testing::AssertionResult r =
      e.passed(tol) ? ::testing::AssertionSuccess() : ::testing::AssertionFailure();
  r << "rel_fro=" << e.rel_fro << " (tolerance " << tol << ") max_abs=" << e.max_abs << " at ("
    << e.max_row << ", " << e.max_col << ") nonfinite=" << e.nonfinite;
  return r;
}

// On small integers, where every fp32 sum is exact, `run` (tcgemm on the
// args it is given) must give every element of C equal to the reference
// rounded to C's dtype, and leave C's padding (poisoned again here) and the
// guard bands around C alone. The
// relative error lets a small wrong region through (a missed edge row of a
// 2048 x 2048 C stays under bf16's 1e-2); this does not. Refills p's A and B
// with integers, and C with integers (beta != 0) or the NaN poison; a
// fractional alpha or beta becomes an integer of the same kind (alpha -1,
// beta 2: still not 1, not 0), so the same epilogue runs.
inline GemmArgs with_integer_scalars(GemmArgs args) {
  if (std::nearbyint(args.alpha) != args.alpha) args.alpha = -1.0f;
  if (std::nearbyint(args.beta) != args.beta) args.beta = 2.0f;
  return args;
}

// Whether ExactOnSmallIntegers can check p (K shallow enough for exact sums).
inline bool exact_check_applies(const GemmArgs& args) {
  return tcgemm::testing::exact_on_small_integers(with_integer_scalars(args));
}

inline ::testing::AssertionResult ExactOnSmallIntegers(
    DeviceProblem& p, const std::function<Status(const GemmArgs&)>& run =
                          [](const GemmArgs& args) { return tcgemm::gemm(args); }) {
  const GemmArgs exact = with_integer_scalars(p.args);
  if (!tcgemm::testing::exact_on_small_integers(exact)) {
    return ::testing::AssertionFailure() << "K = " << exact.k << " is too deep for exact sums";
  }
  tcgemm::testing::fill_small_integers(p.a.get(), p.spec.in, p.a_elements, p.spec.seed + 10);
  tcgemm::testing::fill_small_integers(p.b.get(), p.spec.in, p.b_elements, p.spec.seed + 11);
  if (exact.beta != 0.0f) {
    tcgemm::testing::fill_small_integers(p.c.get(), p.spec.out, p.c_elements, p.spec.seed + 12);
    poison_padding(exact.c, exact.m, exact.n);
  } else {
    tcgemm::testing::fill_poison(p.c.get(), p.spec.out, p.c_elements);
  }
  const DeviceBuffer ref = reference_of(exact);
  const DeviceBuffer before = snapshot(p.c.get(), p.c_bytes());
  const Status status = run(exact);
  if (!status.ok()) {
    return ::testing::AssertionFailure()
           << tcgemm::to_string(status.code) << ": " << status.message;
  }
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const tcgemm::testing::ErrorStats e =
      tcgemm::testing::compare(exact, static_cast<const float*>(ref.get()));
  if (e.mismatches + e.nonfinite != 0) {
    return ::testing::AssertionFailure()
           << "on small integers (alpha " << exact.alpha << ", beta " << exact.beta << ") "
           << e.mismatches << " element(s) of C differ from the exact result and " << e.nonfinite
           << " are not finite (worst |diff| " << e.max_abs << " at row " << e.max_row
           << ", column " << e.max_col << ")";
  }
  const ::testing::AssertionResult padding = PaddingUntouched(exact, before.get(), p.c_elements);
  if (!padding) return padding;
  return GuardsUntouched(p.c);
}

inline ::testing::AssertionResult IsOk(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << tcgemm::to_string(s.code) << ": " << s.message;
}

// Test-name-safe text: letters, digits and '_' only.
inline std::string sanitize_name(std::string s) {
  for (char& ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) ch = '_';
  }
  return s;
}

}  // namespace tcgemm_test
