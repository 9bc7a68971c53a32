// The product call, tcgemm::gemm(args) with the dispatcher and default
// options, on every kind of problem validate() accepts with bf16/fp16 inputs:
// all eight storage orders, any M, N, K >= 1, any leading dimension, any
// element-aligned base address, fp32/bf16/fp16 output, strided batches
// (stride 0 on A or B, gaps, overlapping inputs, C entries side by side).
//
// Each case is checked five ways (run_case), on guarded allocations
// (guarded_problem.h):
//   1. normal(0, 1) inputs, with the workspace workspace_size(args) asks for:
//      relative Frobenius error of every batch entry against the reference
//      GEMM under tolerance_for(out), and no byte of C's allocation outside
//      the matrices changed (guard bands before and after, line padding,
//      gaps between entries); C starts poisoned when beta == 0, and every
//      input byte outside A and B is a NaN, so an unwritten element or a
//      kernel that sums padding fails;
//   2. the same inputs again (C restored): C bit-identical to run 1;
//   3. the same inputs without a workspace: as 1 (another kernel may run);
//   4. small-integer inputs (+-1 .. +-3), with the workspace: every element
//      equal to the reference rounded to the output dtype (fp32 sums of
//      small integers are exact), and C's surroundings untouched;
//   5. as 4 without a workspace;
//   and after each input set, A and B (with their padding and guards)
//   unchanged.
// (3 and 5 are skipped when the dispatcher asks for no workspace: 1 and 4
// already ran without one.) One workspace serves all the cases of a test:
// zeroed once, then reused, as the README allows.
//
// The sweep (ProdSweep.EverySampledProblem...) samples the CUTLASS-profiler
// style cross product with a seeded stratified sampler (see sweep_cases());
// TCGEMM_SWEEP_SEED, TCGEMM_SWEEP_CASES and TCGEMM_SWEEP_CASE (run one case
// by index) reproduce or widen it. Each failing case is printed with every
// parameter, the kernel describe() names and what failed.
#include <tcgemm/gemm_plan.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "guarded_problem.h"
#include "kernels/kernels.h"
#include "kernels/prod/config.h"
#include "kernels/prod/launch.h"
#include "kernels/prod/skinny.h"
#include "testing/resident_clusters.h"
#include "tuned/tuned.h"

namespace tcgemm_test {
namespace {

// ---- one case -------------------------------------------------------------------------

// What computes C: the product call, one kernel's launcher, or, to check
// the checks themselves, cuBLAS (one cublasGemmEx per batch entry).
struct Backend {
  std::string name;
  std::function<Status(const GemmArgs&)> gemm;
  bool is_product = true;  // describe() and the workspace apply, with `options`
  tcgemm::GemmOptions options = {};
};

Backend product_backend() {
  return {"tcgemm::gemm", [](const GemmArgs& args) { return tcgemm::gemm(args); }, true};
}

// tcgemm::gemm with GemmOptions::batch_invariant: the kernel
// "prod-invariant", its config chosen as for a tall problem, never split.
Backend invariant_backend() {
  tcgemm::GemmOptions options;
  options.batch_invariant = true;
  return {"tcgemm::gemm, batch_invariant",
          [options](const GemmArgs& args) { return tcgemm::gemm(args, options); }, true, options};
}

// The small-M path's launcher itself (prod/skinny.h), past its registry
// entry's min(M, N) <= 16: the kernel runs any M and N, in passes of 16
// rows; at most `max_blocks` blocks, each looping over the rest.
Backend skinny_backend(std::int64_t max_blocks = tcgemm::kernels::prod::kSkinnyMaxGrid) {
  auto gemm = [max_blocks](const GemmArgs& args) {
    if (Status s = tcgemm::validate(args); !s.ok()) return s;
    tcgemm::prod::DeviceModel model;
    if (Status s = tcgemm::kernels::prod::device_model(&model); !s.ok()) return s;
    const tcgemm::prod::SkinnyShape shape = tcgemm::prod::skinny_shape(args, model.sm_count);
    if (Status s = tcgemm::kernels::prod::prepare_skinny(args, shape); !s.ok()) return s;
    return tcgemm::kernels::prod::launch_skinny(args, shape, max_blocks);
  };
  return {"prod-skinny launcher, at most " + std::to_string(max_blocks) + " blocks", gemm, false};
}

Backend cublas_backend(cublasHandle_t handle) {
  auto gemm = [handle](const GemmArgs& args) {
    for (std::int64_t b = 0; b < args.batch_count; ++b) {
      GemmArgs one = args;
      one.batch_count = 1;
      auto at = [b](const void* ptr, DType dtype, std::int64_t stride) {
        return static_cast<const unsigned char*>(ptr) +
               static_cast<std::size_t>(b * stride) * tcgemm::size_of(dtype);
      };
      one.a.ptr = at(args.a.ptr, args.a.dtype, args.a.stride);
      one.b.ptr = at(args.b.ptr, args.b.dtype, args.b.stride);
      one.c.ptr = const_cast<unsigned char*>(at(args.c.ptr, args.c.dtype, args.c.stride));
      const cublasStatus_t s = tcgemm::testing::cublas_gemm(handle, one);
      if (s != CUBLAS_STATUS_SUCCESS) {
        return Status{StatusCode::kCudaError, "cublas_gemm: status " + std::to_string(s)};
      }
    }
    return Status::success();
  };
  return {"cuBLAS", gemm, false};
}

struct CaseResult {
  Findings findings;
  std::string kernel;      // what describe() names, with the workspace (and without, if different)
  std::string kernel_key;  // the kernel and its config's name, for the summary's histogram
  std::size_t workspace_bytes = 0;
};

// "prod (prod-64x64)" for a kernel whose config text starts "prod-64x64: ...".
std::string kernel_key(const tcgemm::Description& d) {
  if (!d.status.ok()) return "describe-failed";
  const std::size_t colon = d.config.find(':');
  const std::string head = d.config.substr(0, colon);
  if (colon == std::string::npos || head.empty() || head.find(' ') != std::string::npos ||
      head == d.kernel) {
    return d.kernel;
  }
  return d.kernel + " (" + head + ")";
}

std::string kernel_text(const tcgemm::Description& d) {
  if (!d.status.ok()) {
    return "describe: " + std::string(tcgemm::to_string(d.status.code)) + ": " + d.status.message;
  }
  return (d.kernel.empty() ? std::string("(no GEMM kernel)") : d.kernel) + " [" + d.config + "]";
}

// Runs `c` through the backend five ways (see the top of the file), adding
// what failed to r. Throws CudaError when a CUDA call fails (e.g. after a
// kernel faulted); r keeps what was found until then.
void run_case(const GemmCase& c, SharedWorkspace& workspace, const Backend& backend,
              CaseResult& r) {
  GuardedProblem p(c);
  if (const Status v = tcgemm::validate(p.args()); !v.ok()) {
    r.findings.push_back("the test built a problem validate() refuses (test defect): " +
                         std::string(tcgemm::to_string(v.code)) + ": " + v.message);
    return;
  }
  GemmArgs with_ws = p.args();
  const GemmArgs without_ws = p.args();
  if (backend.is_product) {
    r.workspace_bytes = workspace.attach(with_ws, backend.options);
    const tcgemm::Description d = tcgemm::describe(with_ws, backend.options);
    r.kernel = kernel_text(d);
    r.kernel_key = kernel_key(d);
    if (!d.status.ok()) r.findings.push_back(r.kernel);
    if (r.workspace_bytes > 0) {
      const tcgemm::Description d0 = tcgemm::describe(without_ws, backend.options);
      r.kernel += "; without a workspace " + kernel_text(d0);
      if (!d0.status.ok()) r.findings.push_back("without a workspace, " + kernel_text(d0));
    }
  } else {
    r.kernel = r.kernel_key = backend.name;
  }
  const bool both = r.workspace_bytes > 0;

  auto run = [&](const GemmArgs& args, const std::string& what) {
    const Status s = backend.gemm(args);
    if (!s.ok()) {
      r.findings.push_back(what + ": " + backend.name + " returned " +
                           std::string(tcgemm::to_string(s.code)) + ": " + s.message);
      return false;
    }
    if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      r.findings.push_back(what + ": the call failed on the device: " + cudaGetErrorString(e));
      throw tcgemm::testing::CudaError(what + ": " + cudaGetErrorString(e));
    }
    return true;
  };

  // 1-3: normal inputs.
  p.fill(Values::kNormal);
  std::vector<float> ref = p.reference();
  const std::string ws = " (workspace " + std::to_string(r.workspace_bytes) + " B)";
  const std::string normal = "normal inputs" + (both ? ws : std::string());
  if (run(with_ws, normal)) {
    const HostImage first = p.download_c();
    p.check_close(first, ref, normal, r.findings);
    p.check_outside_c(first, normal, r.findings);
    p.reset_c();
    if (run(with_ws, normal + ", second run")) {
      std::int64_t at = -1;
      if (const std::int64_t differ = count_differences(first, p.download_c(), at); differ > 0) {
        r.findings.push_back(normal + ": a second run on the same inputs differs in " +
                             std::to_string(differ) + " element(s) of C's allocation, the first " +
                             std::to_string(at - p.c_layout().first()) +
                             " elements from entry 0's first element");
      }
    }
  }
  if (both) {
    p.reset_c();
    const std::string what = "normal inputs, no workspace";
    if (run(without_ws, what)) {
      const HostImage out = p.download_c();
      p.check_close(out, ref, what, r.findings);
      p.check_outside_c(out, what, r.findings);
    }
  }
  p.check_inputs_unchanged("normal inputs, after every run", r.findings);

  // 4-5: small integers, exact.
  p.fill(Values::kSmallIntegers);
  ref = p.reference();
  const std::string exact = "integer inputs" + (both ? ws : std::string());
  if (run(with_ws, exact)) {
    const HostImage out = p.download_c();
    p.check_exact(out, ref, exact, r.findings);
    p.check_outside_c(out, exact, r.findings);
  }
  if (both) {
    p.reset_c();
    const std::string what = "integer inputs, no workspace";
    if (run(without_ws, what)) {
      const HostImage out = p.download_c();
      p.check_exact(out, ref, what, r.findings);
      p.check_outside_c(out, what, r.findings);
    }
  }
  p.check_inputs_unchanged("integer inputs, after every run", r.findings);
}

struct LoopSummary {
  std::int64_t run = 0;
  std::int64_t failed = 0;
  std::map<std::string, std::int64_t> kernels;  // kernel_key -> cases
};

// Runs cases[i] for i in [begin, end), each failing case reported with
// ADD_FAILURE (number, every parameter, kernel, findings). Stops early only
// when the CUDA context is broken (a faulting kernel), saying so.
LoopSummary run_cases(const std::vector<GemmCase>& cases, std::size_t begin, std::size_t end,
                      const std::string& label, const std::string& reproduce,
                      const Backend& backend = product_backend()) {
  LoopSummary summary;
  SharedWorkspace workspace;
  for (std::size_t i = begin; i < end; ++i) {
    const GemmCase& c = cases[i];
    CaseResult r;
    bool broken = false;
    try {
      run_case(c, workspace, backend, r);
    } catch (const std::exception& e) {
      r.findings.push_back(std::string("stopped by an exception: ") + e.what());
      static_cast<void>(cudaGetLastError());
      const cudaError_t sticky = cudaDeviceSynchronize();
      if (sticky != cudaSuccess) {
        r.findings.push_back(std::string("the CUDA context is broken (") +
                             cudaGetErrorString(sticky) + "): the remaining cases are not run");
        broken = true;
      }
    }
    ++summary.run;
    ++summary.kernels[r.kernel_key.empty() ? std::string("(none)") : r.kernel_key];
    if (!r.findings.empty()) {
      ++summary.failed;
      std::ostringstream os;
      os << label << " case #" << i << ": " << describe_case(c) << "\n  kernel: " << r.kernel
         << "\n  workspace: " << r.workspace_bytes << " bytes";
      for (const std::string& f : r.findings) os << "\n  - " << f;
      if (!reproduce.empty()) os << "\n  reproduce: " << reproduce << " TCGEMM_SWEEP_CASE=" << i;
      ADD_FAILURE() << os.str();
    }
    if (broken) break;
  }
  return summary;
}

std::string kernels_text(const LoopSummary& s) {
  std::string out;
  for (const auto& [name, count] : s.kernels) {
    out += (out.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

// Runs a fixed list of cases; all must pass.
void run_all(const std::vector<GemmCase>& cases, const std::string& label,
             const Backend& backend = product_backend()) {
  const LoopSummary s = run_cases(cases, 0, cases.size(), label, "", backend);
  std::printf("[ %s ] %lld of %zu cases run, %lld failed; kernels: %s\n", label.c_str(),
              static_cast<long long>(s.run), cases.size(), static_cast<long long>(s.failed),
              kernels_text(s).c_str());
  std::fflush(stdout);
  EXPECT_EQ(s.run, static_cast<std::int64_t>(cases.size())) << "not every case ran";
  EXPECT_EQ(s.failed, 0) << "failing cases are listed above";
}

// ---- the sampled sweep ------------------------------------------------------------------

constexpr std::uint64_t kDefaultSweepSeed = 0x7c6e5eed2026ull;
constexpr std::int64_t kDefaultSweepCases = 2000;
constexpr int kSweepParts = 4;  // gtest entries (ctest processes) the sweep is split into

constexpr Layout kRow = Layout::kRowMajor;
constexpr Layout kCol = Layout::kColMajor;

struct StorageOrder {
  Layout a;
  Layout b;
  Layout c;
};
constexpr StorageOrder kOrders[] = {
    {kRow, kCol, kCol}, {kCol, kCol, kCol}, {kRow, kRow, kCol}, {kCol, kRow, kCol},
    {kRow, kCol, kRow}, {kCol, kCol, kRow}, {kRow, kRow, kRow}, {kCol, kRow, kRow},
};

std::string order_name(Layout a, Layout b, Layout c) {
  std::string s;
  s += a == kRow ? 'T' : 'N';
  s += b == kRow ? 'T' : 'N';
  s += c == kRow ? "_Crow" : "_Ccol";
  return s;
}

// One dimension of the sweep: its values (labels), its deck of cards (a value
// index per card; a value on several cards is drawn more often), how a value
// is put into a case and how it is read back (for the coverage check).
struct Dimension {
  std::string name;
  std::vector<std::string> labels;
  std::vector<int> cards;
  std::function<void(GemmCase&, int)> apply;
  std::function<int(const GemmCase&)> value_of;
};

template <typename T>
Dimension numeric_dimension(std::string name, std::vector<T> values,
                            std::function<void(GemmCase&, T)> set,
                            std::function<T(const GemmCase&)> get) {
  Dimension d;
  d.name = std::move(name);
  for (const T& v : values) {
    std::ostringstream os;
    os << v;
    d.labels.push_back(os.str());
  }
  d.cards.resize(values.size());
  std::iota(d.cards.begin(), d.cards.end(), 0);
  d.apply = [values, set](GemmCase& c, int v) { set(c, values[static_cast<std::size_t>(v)]); };
  d.value_of = [values, get](const GemmCase& c) {
    const auto it = std::find(values.begin(), values.end(), get(c));
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
  };
  return d;
}

std::vector<Dimension> sweep_dimensions() {
  using I = std::int64_t;
  std::vector<Dimension> dims;
  const std::vector<I> mn = {1, 7, 8, 56, 120, 136, 264, 520, 1032};
  dims.push_back(numeric_dimension<I>(
      "m", mn, [](GemmCase& c, I v) { c.m = v; }, [](const GemmCase& c) { return c.m; }));
  dims.push_back(numeric_dimension<I>(
      "n", mn, [](GemmCase& c, I v) { c.n = v; }, [](const GemmCase& c) { return c.n; }));
  dims.push_back(numeric_dimension<I>(
      "k", {1, 8, 17, 64, 192, 288, 520}, [](GemmCase& c, I v) { c.k = v; },
      [](const GemmCase& c) { return c.k; }));
  {
    Dimension d;
    d.name = "storage order";
    for (const StorageOrder& o : kOrders) d.labels.push_back(order_name(o.a, o.b, o.c));
    d.cards = {0, 1, 2, 3, 4, 5, 6, 7};
    d.apply = [](GemmCase& c, int v) {
      c.la = kOrders[v].a;
      c.lb = kOrders[v].b;
      c.lc = kOrders[v].c;
    };
    d.value_of = [](const GemmCase& c) {
      for (int v = 0; v < 8; ++v) {
        if (kOrders[v].a == c.la && kOrders[v].b == c.lb && kOrders[v].c == c.lc) return v;
      }
      return -1;
    };
    dims.push_back(std::move(d));
  }
  {
    Dimension d;
    d.name = "input dtype";
    d.labels = {"bf16", "fp16"};
    d.cards = {0, 1};
    d.apply = [](GemmCase& c, int v) { c.in = v == 0 ? DType::kBF16 : DType::kFP16; };
    d.value_of = [](const GemmCase& c) { return c.in == DType::kBF16 ? 0 : 1; };
    dims.push_back(std::move(d));
  }
  {
    Dimension d;
    d.name = "output dtype";
    d.labels = {"bf16", "fp16", "fp32"};
    d.cards = {0, 1, 2};
    d.apply = [](GemmCase& c, int v) {
      c.out = v == 0 ? DType::kBF16 : v == 1 ? DType::kFP16 : DType::kFP32;
    };
    d.value_of = [](const GemmCase& c) { return static_cast<int>(c.out); };
    dims.push_back(std::move(d));
  }
  // alpha and beta keep the small-integer run exact (integers, fp32).
  dims.push_back(numeric_dimension<float>(
      "alpha", {1.0f, 2.0f, -1.0f}, [](GemmCase& c, float v) { c.alpha = v; },
      [](const GemmCase& c) { return c.alpha; }));
  dims.push_back(numeric_dimension<float>(
      "beta", {0.0f, 1.0f, 2.0f}, [](GemmCase& c, float v) { c.beta = v; },
      [](const GemmCase& c) { return c.beta; }));
  const std::vector<I> pads = {0, 1, 8};
  dims.push_back(numeric_dimension<I>(
      "lda pad", pads, [](GemmCase& c, I v) { c.lda_pad = v; },
      [](const GemmCase& c) { return c.lda_pad; }));
  dims.push_back(numeric_dimension<I>(
      "ldb pad", pads, [](GemmCase& c, I v) { c.ldb_pad = v; },
      [](const GemmCase& c) { return c.ldb_pad; }));
  dims.push_back(numeric_dimension<I>(
      "ldc pad", pads, [](GemmCase& c, I v) { c.ldc_pad = v; },
      [](const GemmCase& c) { return c.ldc_pad; }));
  const std::vector<I> offsets = {0, 1};
  dims.push_back(numeric_dimension<I>(
      "A offset", offsets, [](GemmCase& c, I v) { c.a_offset = v; },
      [](const GemmCase& c) { return c.a_offset; }));
  dims.push_back(numeric_dimension<I>(
      "B offset", offsets, [](GemmCase& c, I v) { c.b_offset = v; },
      [](const GemmCase& c) { return c.b_offset; }));
  dims.push_back(numeric_dimension<I>(
      "C offset", offsets, [](GemmCase& c, I v) { c.c_offset = v; },
      [](const GemmCase& c) { return c.c_offset; }));
  {
    // Batch 1 on three cards of nine; batch 3 in six placements.
    Dimension d;
    d.name = "batch";
    const BatchMode modes[] = {BatchMode::kSingle,           BatchMode::kTight,
                               BatchMode::kSharedB,          BatchMode::kSharedA,
                               BatchMode::kPadded,           BatchMode::kCSideBySide,
                               BatchMode::kOverlappingInputs};
    for (BatchMode m : modes) d.labels.push_back(to_string(m));
    d.cards = {0, 0, 0, 1, 2, 3, 4, 5, 6};
    d.apply = [](GemmCase& c, int v) {
      c.batch = static_cast<BatchMode>(v);
      c.batch_count = 3;
    };
    d.value_of = [](const GemmCase& c) { return static_cast<int>(c.batch); };
    dims.push_back(std::move(d));
  }
  return dims;
}

// A deterministic generator (SplitMix64), the same on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

// Stratified sampling: each dimension deals its cards from a deck shuffled
// afresh each time it runs out, decks drawn independently. So in N cases every
// card of a dimension with D cards is dealt floor(N / D) or ceil(N / D)
// times (every value is covered once N >= 9, the largest deck), while the
// combinations across dimensions are random. Case i's input values come from
// its own seed, hash(seed, i), so any one case can be rerun alone.
std::vector<GemmCase> sweep_cases(std::uint64_t seed, std::int64_t count) {
  const std::vector<Dimension> dims = sweep_dimensions();
  Rng rng(mix64(seed));
  std::vector<std::vector<int>> decks;
  std::vector<std::size_t> dealt;
  for (const Dimension& d : dims) {
    decks.push_back(d.cards);
    dealt.push_back(d.cards.size());  // empty: shuffle before the first deal
  }
  std::vector<GemmCase> cases;
  cases.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    GemmCase c;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      std::vector<int>& deck = decks[d];
      if (dealt[d] == deck.size()) {
        for (std::size_t j = deck.size() - 1; j > 0; --j) {
          std::swap(deck[j], deck[static_cast<std::size_t>(rng.below(j + 1))]);
        }
        dealt[d] = 0;
      }
      dims[d].apply(c, deck[dealt[d]++]);
    }
    c.seed = hash_at(seed, i);
    cases.push_back(c);
  }
  return cases;
}

struct SweepSettings {
  std::uint64_t seed = kDefaultSweepSeed;
  std::int64_t cases = kDefaultSweepCases;
  std::int64_t only = -1;  // TCGEMM_SWEEP_CASE: run just this case
  std::string error;       // a malformed variable
};

bool parse_u64(const char* text, std::uint64_t& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 0);  // decimal or 0x hex
  if (errno != 0 || *end != '\0' || text[0] == '-') return false;
  out = v;
  return true;
}

SweepSettings sweep_settings() {
  SweepSettings s;
  auto read = [&](const char* name, auto& field, std::uint64_t min) {
    const char* text = std::getenv(name);
    if (text == nullptr) return;
    std::uint64_t v = 0;
    if (!parse_u64(text, v) || v < min) {
      s.error +=
          std::string(name) + "='" + text + "' is not a number >= " + std::to_string(min) + "; ";
      return;
    }
    field = static_cast<std::remove_reference_t<decltype(field)>>(v);
  };
  read("TCGEMM_SWEEP_SEED", s.seed, 0);
  read("TCGEMM_SWEEP_CASES", s.cases, 1);
  read("TCGEMM_SWEEP_CASE", s.only, 0);
  if (s.only >= s.cases) {
    s.error += "TCGEMM_SWEEP_CASE=" + std::to_string(s.only) + " is not below the case count " +
               std::to_string(s.cases) + "; ";
  }
  return s;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Part `part` (0-based) of the sweep: cases [part * N / P, (part + 1) * N / P).
void run_sweep_part(int part) {
  const SweepSettings s = sweep_settings();
  ASSERT_TRUE(s.error.empty()) << s.error;
  const std::vector<GemmCase> cases = sweep_cases(s.seed, s.cases);
  const auto n = static_cast<std::size_t>(s.cases);
  std::size_t begin = n * static_cast<std::size_t>(part) / kSweepParts;
  std::size_t end = n * static_cast<std::size_t>(part + 1) / kSweepParts;
  if (s.only >= 0) {
    const auto only = static_cast<std::size_t>(s.only);
    begin = std::clamp(only, begin, end);
    end = (only >= begin && only < end) ? only + 1 : begin;
  }
  const std::string label =
      "ProdSweep part " + std::to_string(part + 1) + "/" + std::to_string(kSweepParts);
  const std::string reproduce =
      "TCGEMM_SWEEP_SEED=" + hex(s.seed) + " TCGEMM_SWEEP_CASES=" + std::to_string(s.cases);
  std::printf(
      "[ %s ] seed %s (TCGEMM_SWEEP_SEED), %lld cases in all (TCGEMM_SWEEP_CASES); "
      "this part: cases [%zu, %zu)\n",
      label.c_str(), hex(s.seed).c_str(), static_cast<long long>(s.cases), begin, end);
  std::fflush(stdout);
  const LoopSummary sum = run_cases(cases, begin, end, label, reproduce);
  std::printf("[ %s ] %lld of %zu cases run, %lld failed; kernels: %s\n", label.c_str(),
              static_cast<long long>(sum.run), end - begin, static_cast<long long>(sum.failed),
              kernels_text(sum).c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty("cases_run", std::to_string(sum.run));
  ::testing::Test::RecordProperty("cases_failed", std::to_string(sum.failed));
  EXPECT_EQ(sum.run, static_cast<std::int64_t>(end - begin)) << "not every case ran";
  EXPECT_EQ(sum.failed, 0) << "failing cases are listed above";
}

// The sampler alone (no device): every value of every dimension is dealt at
// least floor(N / cards) times per card it has, and every case it makes is a
// problem validate() accepts (with addresses laid out as GuardedProblem lays
// them out: 256-byte aligned allocations).
TEST(ProdSweepSampler, CoversEveryValueOfEveryDimensionWithValidProblems) {
  const SweepSettings s = sweep_settings();
  ASSERT_TRUE(s.error.empty()) << s.error;
  const std::vector<GemmCase> cases = sweep_cases(s.seed, s.cases);
  ASSERT_EQ(static_cast<std::int64_t>(cases.size()), s.cases);
  for (const Dimension& d : sweep_dimensions()) {
    std::vector<std::int64_t> seen(d.labels.size(), 0);
    for (const GemmCase& c : cases) {
      const int v = d.value_of(c);
      ASSERT_GE(v, 0) << d.name << " has a value outside its list in " << describe_case(c);
      ++seen[static_cast<std::size_t>(v)];
    }
    const std::int64_t per_card = s.cases / static_cast<std::int64_t>(d.cards.size());
    for (std::size_t v = 0; v < seen.size(); ++v) {
      const std::int64_t copies = std::count(d.cards.begin(), d.cards.end(), static_cast<int>(v));
      EXPECT_GE(seen[v], per_card * copies)
          << d.name << " = " << d.labels[v] << " dealt " << seen[v] << " times in " << s.cases;
      if (s.cases >= static_cast<std::int64_t>(d.cards.size())) {
        EXPECT_GT(seen[v], 0) << d.name << " = " << d.labels[v] << " never dealt";
      }
    }
  }
  std::int64_t invalid = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& c = cases[i];
    const CaseLayouts l = layouts_of(c);
    // Fake 256-byte aligned base addresses: validate() never dereferences.
    auto at = [](std::uintptr_t base, const OperandLayout& o) {
      return reinterpret_cast<void*>(base + static_cast<std::uintptr_t>(o.first()) *
                                                tcgemm::size_of(o.dtype));
    };
    GemmArgs args;
    args.m = c.m;
    args.n = c.n;
    args.k = c.k;
    args.alpha = c.alpha;
    args.beta = c.beta;
    args.batch_count = l.c.batch;
    args.a = {at(0x10000000, l.a), c.in, c.la, l.a.ld, l.a.stride};
    args.b = {at(0x20000000, l.b), c.in, c.lb, l.b.ld, l.b.stride};
    args.c = {at(0x30000000, l.c), c.out, c.lc, l.c.ld, l.c.stride};
    const Status v = tcgemm::validate(args);
    if (!v.ok() && invalid++ < 10) {
      ADD_FAILURE() << "case #" << i << " " << describe_case(c) << ": " << v.message;
    }
  }
  EXPECT_EQ(invalid, 0);
}

using ProdSweep = HopperTest;

// Each part proves, for its quarter of the sampled cases: gemm succeeds, is
// within tolerance on normal inputs and exact on integer inputs (with and
// without a workspace), bitwise repeatable, writes every element of C and no
// byte around or between C's matrices.
TEST_F(ProdSweep, EverySampledProblemIsCorrectAndTouchesOnlyCPart1Of4) { run_sweep_part(0); }
TEST_F(ProdSweep, EverySampledProblemIsCorrectAndTouchesOnlyCPart2Of4) { run_sweep_part(1); }
TEST_F(ProdSweep, EverySampledProblemIsCorrectAndTouchesOnlyCPart3Of4) { run_sweep_part(2); }
TEST_F(ProdSweep, EverySampledProblemIsCorrectAndTouchesOnlyCPart4Of4) { run_sweep_part(3); }

// ---- fixed case lists --------------------------------------------------------------------

GemmCase make_case(std::int64_t m, std::int64_t n, std::int64_t k, const StorageOrder& o, DType in,
                   DType out, std::uint64_t seed) {
  GemmCase c;
  c.m = m;
  c.n = n;
  c.k = k;
  c.la = o.a;
  c.lb = o.b;
  c.lc = o.c;
  c.in = in;
  c.out = out;
  c.seed = seed;
  return c;
}

// The guard band of the sanitizer subsets: none under compute-sanitizer
// (TCGEMM_SANITIZER set and not 0, as scripts/prod-check sets it), so that
// an access past C or an operand leaves its allocation and memcheck reports
// it; elsewhere (ctest) the default poisoned band, checked after the run.
std::int64_t sanitizer_subset_guard() {
  const char* const v = std::getenv("TCGEMM_SANITIZER");
  const bool under_sanitizer = v != nullptr && *v != '\0' && std::string_view(v) != "0";
  return under_sanitizer ? 0 : kDefaultGuard;
}

// The small subset for compute-sanitizer (memcheck, racecheck): four
// variants per storage order, plus two problems with more tiles than the
// H200 has SMs (a persistent CTA's second and later tiles).
std::vector<GemmCase> sanitizer_cases() {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x5a170000;
  for (const StorageOrder& o : kOrders) {
    // Aligned, two tiles' worth in M, a multi-stage K.
    GemmCase c = make_case(136, 72, 64, o, DType::kBF16, DType::kBF16, ++seed);
    cases.push_back(c);
    // Odd leading dimensions and 1-element offsets everywhere, fp32 out, beta 1.
    c = make_case(57, 41, 17, o, DType::kFP16, DType::kFP32, ++seed);
    c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
    c.a_offset = c.b_offset = c.c_offset = 1;
    c.beta = 1.0f;
    cases.push_back(c);
    // A batch over one B (stride 0), beta 2, tight leading dimensions and
    // 1-element offsets on A and C (an operand 16-byte aligned but for its
    // base).
    c = make_case(40, 24, 72, o, DType::kBF16, DType::kFP16, ++seed);
    c.batch = BatchMode::kSharedB;
    c.beta = 2.0f;
    c.a_offset = c.c_offset = 1;
    cases.push_back(c);
    // Ragged tiny M and N, deep K (the operand ring wraps), gaps between
    // batch entries, padded leading dimensions, alpha -1.
    c = make_case(7, 9, 520, o, DType::kFP16, DType::kFP16, ++seed);
    c.batch = BatchMode::kPadded;
    c.lda_pad = c.ldb_pad = c.ldc_pad = 8;
    c.alpha = -1.0f;
    cases.push_back(c);
  }
  for (const StorageOrder& o : {kOrders[0], kOrders[6]}) {
    GemmCase c =
        make_case(2048, 2304, 64, o, o.a == kRow && o.b == kRow ? DType::kFP16 : DType::kBF16,
                  DType::kBF16, ++seed);
    c.beta = 1.0f;
    cases.push_back(c);
  }
  // The small-M path: M = 5 against a deep K (several warps' K slices, the
  // last ragged), and N = 13 (a 16-row block) against 264 rows, batched
  // over one B, beta 1.
  cases.push_back(make_case(5, 264, 4104, kOrders[0], DType::kBF16, DType::kBF16, ++seed));
  GemmCase small_n = make_case(264, 13, 72, kOrders[4], DType::kFP16, DType::kFP32, ++seed);
  small_n.batch = BatchMode::kSharedB;
  small_n.beta = 1.0f;
  cases.push_back(small_n);
  for (GemmCase& c : cases) c.guard = sanitizer_subset_guard();
  return cases;
}

TEST_F(ProdSweep, SanitizerSubsetIsCorrectAndTouchesOnlyC) {
  run_all(sanitizer_cases(), "ProdSweep sanitizer subset");
}

// One problem of each class for each storage order and input dtype.
struct ClassCase {
  std::string name;
  GemmCase c;
};

std::vector<ClassCase> class_cases() {
  std::vector<ClassCase> out;
  std::uint64_t seed = 0xc1a50000;
  for (const StorageOrder& o : kOrders) {
    for (DType in : {DType::kBF16, DType::kFP16}) {
      const std::string tag =
          order_name(o.a, o.b, o.c) + " " + std::string(tcgemm::to_string(in)) + " ";
      auto add = [&](const std::string& name, GemmCase c) { out.push_back({tag + name, c}); };
      GemmCase c = make_case(128, 136, 64, o, in, in, ++seed);
      c.beta = 1.0f;
      add("aligned", c);
      c = make_case(120, 136, 72, o, in, in, ++seed);
      c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
      add("odd ld", c);
      c = make_case(64, 72, 40, o, in, in, ++seed);
      c.a_offset = c.b_offset = c.c_offset = 1;
      add("1-element offset", c);
      c = make_case(64, 64, 64, o, in, in, ++seed);
      c.batch = BatchMode::kSharedB;
      add("batch, B stride 0", c);
      c = make_case(64, 64, 64, o, in, in, ++seed);
      c.batch = BatchMode::kSharedA;
      c.beta = 1.0f;
      add("batch, A stride 0", c);
      c = make_case(64, 64, 64, o, in, in, ++seed);
      c.batch = BatchMode::kCSideBySide;
      add("batch, C entries side by side", c);
      c = make_case(64, 64, 64, o, in, in, ++seed);
      c.batch = BatchMode::kCInterleaved;
      c.beta = 1.0f;
      add("batch, C entries interleaved across lines", c);
      c = make_case(136, 120, 64, o, in, DType::kFP32, ++seed);
      add("fp32 out", c);
      c = make_case(1, 264, 192, o, in, in, ++seed);
      add("M=1", c);
      c = make_case(120, 136, 1, o, in, in, ++seed);
      c.alpha = 2.0f;
      add("K=1", c);
      c = make_case(121, 57, 33, o, in, in, ++seed);
      c.beta = 2.0f;
      add("ragged M, N, K", c);
      // A K-major operand's rows repacked to a 128-byte pitch (2049 -> 2112
      // elements: prod::repacked_ld past kRepackLineFrom).
      c = make_case(72, 40, 2049, o, in, in, ++seed);
      add("odd K past 2048", c);
    }
  }
  return out;
}

using ProdClasses = HopperTest;

// No class of valid bf16/fp16 problem is refused (kNotSupported) or wrong:
// each runs the five checks of run_case.
TEST_F(ProdClasses, EveryValidProblemClassRunsAndIsCorrect) {
  std::vector<GemmCase> cases;
  for (const ClassCase& cc : class_cases()) cases.push_back(cc.c);
  run_all(cases, "ProdClasses");
}

// The same with GemmOptions::batch_invariant: every class runs on the
// invariant kernel and passes the same checks (exact on small integers,
// guard bands, repeatable), not only the row comparison of
// BatchInvariance.EachRowHasTheSameBitsWhateverMIs.
TEST_F(ProdClasses, EveryValidProblemClassRunsBatchInvariant) {
  std::vector<GemmCase> cases;
  for (const ClassCase& cc : class_cases()) cases.push_back(cc.c);
  run_all(cases, "ProdClasses batch_invariant", invariant_backend());
}

// describe() names, for each class, with and without a workspace, a
// production-family registry kernel ("prod..." in the registry) and its
// configuration, with an ok status.
TEST_F(ProdClasses, DescribeNamesAProductionKernelForEveryClass) {
  SharedWorkspace workspace;
  int bad = 0;
  for (const ClassCase& cc : class_cases()) {
    const GuardedProblem p(cc.c);
    GemmArgs with_ws = p.args();
    const std::size_t bytes = workspace.attach(with_ws);
    const GemmArgs without_ws = p.args();
    const std::pair<std::string, const GemmArgs*> variants[] = {
        {"workspace " + std::to_string(bytes) + " B", &with_ws}, {"no workspace", &without_ws}};
    for (const auto& [variant, args] : variants) {
      const tcgemm::Description d = tcgemm::describe(*args);
      std::string problem;
      if (!d.status.ok()) {
        problem =
            "status " + std::string(tcgemm::to_string(d.status.code)) + ": " + d.status.message;
      } else if (d.kernel.empty()) {
        problem = "no kernel named (config: '" + d.config + "')";
      } else if (!d.kernel.starts_with("prod")) {
        problem = "kernel '" + d.kernel + "' is not of the production family";
      } else if (tcgemm::find_kernel(d.kernel) == nullptr) {
        problem = "kernel '" + d.kernel + "' is not in the registry";
      } else if (d.config.empty()) {
        problem = "kernel '" + d.kernel + "' with an empty config";
      }
      if (!problem.empty()) {
        ++bad;
        ADD_FAILURE() << cc.name << " (" << variant << "): " << problem
                      << "\n  case: " << describe_case(cc.c);
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// ---- the small-M path --------------------------------------------------------------------

// Problems for the small-M path (prod/skinny.h: A row-major, B column-major,
// K-contiguous rows 16-byte aligned): M or N from 1 to 64 (blocks of 8 or
// 16 of its rows, ragged ones, one to four passes, the small operand A or
// B), K from one load step to several K slices with a ragged last one, both
// C layouts, every output dtype, beta 0, 1 and 2, alpha -1, padded leading
// dimensions, a 1-element C offset and batches (one B or one A for every
// entry; entries back to back). Each parameter cycles on its own counter.
std::vector<GemmCase> small_m_cases() {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x5c1a1000;
  const std::int64_t mn[][2] = {{1, 264},  {5, 1032}, {8, 56},   {12, 520}, {16, 4096}, {17, 136},
                                {33, 520}, {64, 264}, {1032, 7}, {264, 13}, {264, 64},  {1, 1}};
  const std::int64_t ks[] = {8, 40, 264, 4104};
  constexpr BatchMode kBatches[] = {BatchMode::kSingle, BatchMode::kSharedB, BatchMode::kSingle,
                                    BatchMode::kTight,  BatchMode::kSingle,  BatchMode::kSharedA};
  int v = 0;
  for (const auto& d : mn) {
    for (std::int64_t k : ks) {
      for (Layout lc : {kCol, kRow}) {
        const DType in = (v / 2) % 2 == 0 ? DType::kBF16 : DType::kFP16;
        const DType outs[] = {DType::kFP32, in, DType::kBF16, DType::kFP16};
        GemmCase c = make_case(d[0], d[1], k, {kRow, kCol, lc}, in, outs[(v / 3) % 4], ++seed);
        c.beta = static_cast<float>((v / 5) % 3);
        c.alpha = v % 7 == 3 ? -1.0f : 1.0f;
        if (v % 5 == 1) c.lda_pad = c.ldb_pad = 8;
        if (v % 5 == 2) c.ldc_pad = 1;
        if (v % 11 == 3) c.c_offset = 1;
        c.batch = kBatches[(v / 4) % 6];
        cases.push_back(c);
        ++v;
      }
    }
  }
  return cases;
}

using ProdSmallM = HopperTest;

// Every case on the path's launcher (its registry entry takes min(M, N) <=
// 16; the kernel runs any, the rows past 16 in further passes).
TEST_F(ProdSmallM, EveryShapeOfThePathIsCorrect) {
  run_all(small_m_cases(), "ProdSmallM prod-skinny", skinny_backend());
}

// The kernel's block loop (each block taking more than one block's work):
// the launch capped at 3 blocks, on a problem with passes, a batch and K
// slices, and one of many row blocks.
TEST_F(ProdSmallM, BlocksLoopOverTheWorkPastTheGrid) {
  std::vector<GemmCase> cases;
  GemmCase c = make_case(40, 264, 520, {kRow, kCol, kRow}, DType::kBF16, DType::kFP32, 0x5c1a2001);
  c.batch = BatchMode::kSharedB;
  c.beta = 1.0f;
  cases.push_back(c);
  cases.push_back(
      make_case(3, 2056, 72, {kRow, kCol, kCol}, DType::kFP16, DType::kFP16, 0x5c1a2002));
  run_all(cases, "ProdSmallM 3 blocks", skinny_backend(/*max_blocks=*/3));
}

// A zero-filling copy into a ring slot that held real data: K slices whose
// last one is ragged (K = 4104, 4112, 4120: its last step holds 8, 16 or 24
// of its 32 k) and many steps long, so that its last step refills a slot the
// same warp filled with a whole step before. A copy that kept the slot's old
// data where it should zero-fill adds products of other k to the sums. The
// ring serves a small operand 8 wide (3 rows); 12 rows (16 wide) go through
// registers, where the same K runs the masked loads of a ragged last step
// at the end of a long slice. The cases in small_m_cases() have K = 8 (mod
// 32) and last slices of one step, which leave a zero-filled slot's earlier
// contents to chance.
TEST_F(ProdSmallM, ARaggedLastSliceZeroFillsReusedSlots) {
  tcgemm::prod::DeviceModel model;
  ASSERT_TRUE(tcgemm::kernels::prod::device_model(&model).ok());
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x5c1a3000;
  for (const std::int64_t m : {3, 12}) {
    for (const std::int64_t k : {4104, 4112, 4120}) {
      GemmCase c = make_case(m, 2056, k, {kRow, kCol, kCol}, DType::kBF16, DType::kBF16, ++seed);
      c.batch = BatchMode::kTight;
      // The premise, on this device's launch shape: the last slice ends in
      // a partial step, after more steps than any ring holds.
      GemmArgs args;
      args.m = m;
      args.n = c.n;
      args.k = k;
      args.batch_count = c.batch_count;
      const tcgemm::prod::SkinnyShape shape = tcgemm::prod::skinny_shape(args, model.sm_count);
      const std::int64_t last = k - (shape.k_slices - 1) * shape.k_per_warp;
      EXPECT_EQ(shape.cols, m == 3 ? 8 : 16) << m << "x2056x" << k;
      EXPECT_GT(shape.k_slices, 1) << m << "x2056x" << k;
      EXPECT_NE(last % tcgemm::prod::kSkinnyChunk, 0) << m << "x2056x" << k;
      EXPECT_GT(last / tcgemm::prod::kSkinnyChunk, 8) << m << "x2056x" << k;
      cases.push_back(c);
    }
  }
  run_all(cases, "ProdSmallM ragged last slice", skinny_backend());
}

// The embedded tuned table decides between the small-M path and the tiles
// where it holds the problem: for every entry of the current device that the
// path could run (aligned, tight operands at made-up addresses: describe()
// reads none), the lookup finds that entry, and describe(), workspace_size()
// and a plan name the family's tiles ("prod") where the entry is a tile
// choice (a config of the table, a split >= 1) and prod-skinny otherwise.
TEST_F(ProdSmallM, TheTunedTableDecidesBetweenThePathAndTheTiles) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  const tcgemm::KernelInfo* skinny = tcgemm::find_kernel(tcgemm::tuned::kSkinnyKernel);
  ASSERT_NE(skinny, nullptr);
  int checked = 0;
  int tiles = 0;
  for (const tcgemm::tuned::Entry& e : tcgemm::tuned::embedded_table()) {
    if (e.device != prop.name || e.batch_count != 1) continue;
    if (e.a_path != tcgemm::prod::OperandPath::kTma ||
        e.b_path != tcgemm::prod::OperandPath::kTma) {
      continue;
    }
    void* const base = reinterpret_cast<void*>(std::uintptr_t{1} << 30);
    const auto ld = [](Layout l, std::int64_t rows, std::int64_t cols) {
      return l == kRow ? cols : rows;
    };
    GemmArgs args;
    args.m = e.m;
    args.n = e.n;
    args.k = e.k;
    args.a = {base, e.in, e.a, ld(e.a, e.m, e.k)};
    args.b = {base, e.in, e.b, ld(e.b, e.k, e.n)};
    args.c = {base, e.out, e.c, ld(e.c, e.m, e.n)};
    if (!tcgemm::check_constraints(skinny->constraints, args, tcgemm::DeviceCaps{90}).empty()) {
      continue;
    }
    const std::string shape = std::to_string(e.m) + "x" + std::to_string(e.n) + "x" +
                              std::to_string(e.k) + ": the table says " + std::string(e.config);
    // tcgemm-tune measured these operands as laid out here: the same key.
    EXPECT_EQ(tcgemm::tuned::find(tcgemm::tuned::embedded_table(), prop.name, args), &e) << shape;
    const bool tile_choice = tcgemm::tuned::config_index(e.config).has_value() && e.k_splits >= 1;
    const std::string expected = tile_choice ? "prod" : "prod-skinny";
    const tcgemm::Description d = tcgemm::describe(args);
    ASSERT_TRUE(d.status.ok()) << d.status.message;
    EXPECT_EQ(d.kernel, expected) << shape;
    // The small-M path needs no workspace; the tiles here do not either
    // (aligned operands), unless their choice splits K.
    if (!tile_choice) {
      EXPECT_EQ(tcgemm::workspace_size(args), 0u) << shape;
    }
    tcgemm::GemmPlan plan;
    ASSERT_TRUE(tcgemm::GemmPlan::create(args, {}, &plan).ok()) << shape;
    EXPECT_EQ(plan.description().kernel, expected) << shape;
    ++checked;
    tiles += tile_choice ? 1 : 0;
  }
  if (checked == 0) GTEST_SKIP() << "the embedded table has no small-M entry for " << prop.name;
  std::printf("[ tuned small-M entries checked: %d, %d of them tile choices ]\n", checked, tiles);
}

// The dispatcher gives it the problems of at most 16 rows, and they are
// correct through tcgemm::gemm too.
TEST_F(ProdSmallM, TheDispatcherRunsItUpTo16Rows) {
  std::vector<GemmCase> cases;
  for (const GemmCase& c : small_m_cases()) {
    if (std::min(c.m, c.n) <= 16) cases.push_back(c);
  }
  ASSERT_GE(cases.size(), 56u);
  for (const GemmCase& c : cases) {
    const GuardedProblem p(c);
    const tcgemm::Description d = tcgemm::describe(p.args());
    ASSERT_TRUE(d.status.ok()) << d.status.message;
    EXPECT_EQ(d.kernel, "prod-skinny") << describe_case(c) << ": " << d.config;
  }
  run_all(cases, "ProdSmallM dispatcher");
}

// ---- checks of the checks ------------------------------------------------------------

using ProdSweepHarness = HopperTest;

// The checks pass a correct implementation: cuBLAS (one call per batch
// entry) through run_case on the sweep's first 160 cases and on every class
// case, so a failure of the product call on those is the product's, not a
// false alarm of the harness on some layout, offset or batch placement.
// cublasGemmEx has no bf16 -> fp16 or fp16 -> bf16 (status 15, not
// supported): those cases get output = input here.
TEST_F(ProdSweepHarness, CublasPassesEveryCheck) {
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<GemmCase> cases = sweep_cases(kDefaultSweepSeed, 160);
  for (const ClassCase& cc : class_cases()) cases.push_back(cc.c);
  for (GemmCase& c : cases) {
    if (c.out != DType::kFP32) c.out = c.in;
  }
  run_all(cases, "ProdSweepHarness cuBLAS", cublas_backend(handle));
  cublasDestroy(handle);
}

std::string joined(const Findings& f) {
  std::string out;
  for (const std::string& s : f) out += "\n  - " + s;
  return out;
}

// Each check reports what it exists to catch, on a correct C (cuBLAS's)
// changed in one place: a wrong element (one ulp), an element left
// unwritten (the poison; C's old value where beta != 0), a wrong batch
// entry, a write before C, after it, into a line's padding or between two
// entries, a write to an input's allocation, and a run that differs from
// another in one bit.
TEST_F(ProdSweepHarness, ChecksCatchWrongUnwrittenAndStrayElements) {
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  const Backend cublas = cublas_backend(handle);
  // Column-major C with padded lines and gaps between entries, beta 0; and
  // row-major C, entries side by side, K = 1, beta 1, fp32, offset C.
  GemmCase padded = make_case(24, 16, 40, kOrders[0], DType::kBF16, DType::kBF16, 0x4a770001);
  padded.ldc_pad = 8;
  padded.batch = BatchMode::kPadded;
  GemmCase side = make_case(9, 12, 1, kOrders[6], DType::kFP16, DType::kFP32, 0x4a770002);
  side.ldc_pad = 1;
  side.c_offset = 1;
  side.beta = 1.0f;
  side.batch = BatchMode::kCSideBySide;
  for (const GemmCase& c : {padded, side}) {
    SCOPED_TRACE(describe_case(c));
    GuardedProblem p(c);
    p.fill(Values::kSmallIntegers);
    const std::vector<float> ref = p.reference();
    ASSERT_TRUE(IsOk(cublas.gemm(p.args())));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    const HostImage good = p.download_c();
    auto exact = [&](const HostImage& img) {
      Findings f;
      p.check_exact(img, ref, "exact", f);
      return f;
    };
    auto close = [&](const HostImage& img) {
      Findings f;
      p.check_close(img, ref, "close", f);
      return f;
    };
    auto outside = [&](const HostImage& img) {
      Findings f;
      p.check_outside_c(img, "outside", f);
      return f;
    };
    auto inputs = [&] {
      Findings f;
      p.check_inputs_unchanged("inputs", f);
      return f;
    };
    ASSERT_TRUE(exact(good).empty()) << joined(exact(good));
    ASSERT_TRUE(close(good).empty()) << joined(close(good));
    ASSERT_TRUE(outside(good).empty()) << joined(outside(good));
    ASSERT_TRUE(inputs().empty()) << joined(inputs());

    const OperandLayout& l = p.c_layout();
    auto with = [&](std::int64_t pos, std::uint32_t bits) {
      HostImage m = good;
      m.set_bits(pos, bits);
      return m;
    };
    const std::int64_t last = l.index(l.batch - 1, c.m - 1, c.n - 1);
    const std::int64_t entry1 = l.index(1, 0, 0);
    const std::int64_t mid = l.index(1, c.m / 2, c.n / 2);
    EXPECT_FALSE(exact(with(last, good.bits(last) ^ 1u)).empty()) << "a wrong last element";
    EXPECT_FALSE(exact(with(entry1, good.bits(entry1) ^ 1u)).empty()) << "a wrong entry 1 (0, 0)";
    const HostImage poisoned = with(mid, unwritten_bits(c.out));
    EXPECT_FALSE(exact(poisoned).empty()) << "an unwritten (poisoned) element";
    EXPECT_FALSE(close(poisoned).empty()) << "an unwritten (poisoned) element";
    if (c.beta != 0.0f) {
      EXPECT_FALSE(exact(with(mid, p.c_operand().image.bits(mid))).empty())
          << "an element left at C's old value";
    }
    HostImage zero_entry = good;
    for (std::int64_t j = 0; j < c.n; ++j) {
      for (std::int64_t i = 0; i < c.m; ++i) zero_entry.set_value(l.index(1, i, j), 0.0f);
    }
    EXPECT_FALSE(close(zero_entry).empty()) << "a batch entry of zeros";

    const std::uint32_t zero = encode(0.0f, c.out);
    EXPECT_FALSE(outside(with(l.first() - 1, zero)).empty()) << "a write just before C";
    EXPECT_FALSE(outside(with(l.end(), zero)).empty()) << "a write just after C";
    const std::int64_t line = c.lc == Layout::kRowMajor ? c.n : c.m;
    ASSERT_GT(l.ld, line) << "the case needs padded lines";
    EXPECT_FALSE(outside(with(l.first() + line, zero)).empty()) << "a write into line padding";
    EXPECT_FALSE(outside(with(entry1 - 1, zero)).empty()) << "a write between entries";

    std::int64_t at = -1;
    EXPECT_EQ(count_differences(good, with(mid, good.bits(mid) ^ 1u), at), 1);
    EXPECT_EQ(at, mid);

    const std::uint16_t junk = 0x1234;
    TCGEMM_CHECK_CUDA(
        cudaMemcpy(p.a_operand().buffer.get(), &junk, sizeof junk, cudaMemcpyHostToDevice));
    EXPECT_FALSE(inputs().empty()) << "a write to A's guard band";
  }
  cublasDestroy(handle);
}

// ---- batches --------------------------------------------------------------------------

using ProdBatch = HopperTest;

// C strides that make batch entries share elements are refused by
// validate(), describe() and gemm() alike with kInvalidValue naming c.stride,
// and C's buffer keeps every bit; their valid neighbours are accepted.
TEST_F(ProdBatch, OverlappingCEntriesAreInvalidAndLeaveCUntouched) {
  constexpr std::int64_t m = 64, n = 32, k = 16;
  DeviceBuffer a(bytes_for(m * k * 4, DType::kBF16));
  DeviceBuffer b(bytes_for(k * n * 4, DType::kBF16));
  constexpr std::int64_t c_elements = 4 * 192 * n;  // room for every layout below
  DeviceBuffer c(bytes_for(c_elements, DType::kBF16));
  tcgemm::testing::fill_normal(a.get(), DType::kBF16, m * k * 4, 0xba7c0001);
  tcgemm::testing::fill_normal(b.get(), DType::kBF16, k * n * 4, 0xba7c0002);
  tcgemm::testing::fill_normal(c.get(), DType::kBF16, c_elements, 0xba7c0003);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const DeviceBuffer before = snapshot(c.get(), c.bytes());

  auto args_for = [&](std::int64_t batch, std::int64_t ldc, std::int64_t c_stride) {
    GemmArgs args;
    args.m = m;
    args.n = n;
    args.k = k;
    args.beta = 1.0f;
    args.batch_count = batch;
    args.a = {a.get(), DType::kBF16, Layout::kRowMajor, k, m * k};
    args.b = {b.get(), DType::kBF16, Layout::kColMajor, k, k * n};
    args.c = {c.get(), DType::kBF16, Layout::kColMajor, ldc, c_stride};
    return args;
  };
  const std::int64_t span = m * n;  // column-major, ldc = m
  struct Overlap {
    const char* what;
    GemmArgs args;
  };
  const Overlap overlaps[] = {
      {"stride 0", args_for(2, m, 0)},
      {"stride one short of the span", args_for(2, m, span - 1)},
      {"side by side, stride below the column length", args_for(3, 3 * m, m - 1)},
      {"side by side, ldc one short of the last entry", args_for(3, 3 * m - 1, m)},
      // Entry 1's column j beside entry 0's column j + 1, one element too far up.
      {"interleaved across columns, sharing one element", args_for(2, 2 * m + 1, 3 * m)},
  };
  for (const Overlap& o : overlaps) {
    SCOPED_TRACE(o.what);
    const Status v = tcgemm::validate(o.args);
    EXPECT_EQ(v.code, StatusCode::kInvalidValue) << v.message;
    EXPECT_NE(v.message.find("c.stride"), std::string::npos) << v.message;
    const tcgemm::Description d = tcgemm::describe(o.args);
    EXPECT_EQ(d.status.code, StatusCode::kInvalidValue) << d.status.message;
    const Status g = tcgemm::gemm(o.args);
    EXPECT_EQ(g.code, StatusCode::kInvalidValue) << g.message;
    EXPECT_NE(g.message.find("c.stride"), std::string::npos) << g.message;
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(tcgemm::testing::bitwise_equal(c.get(), before.get(), c.bytes()))
        << "a refused call changed C's buffer";
  }
  // The boundaries are where validate() puts them.
  EXPECT_TRUE(IsOk(tcgemm::validate(args_for(2, m, span))));
  EXPECT_TRUE(IsOk(tcgemm::validate(args_for(3, 3 * m, m))));
  EXPECT_TRUE(IsOk(tcgemm::validate(args_for(2, 2 * m + 1, 3 * m + 1))));
}

// batch_count past 65535 (what a grid's y or z dimension holds): every entry
// computed, checked element by element (exact on integer inputs) and C's
// gaps untouched; one with distinct A and B per entry, one sharing B.
TEST_F(ProdBatch, BatchCountPast65535ComputesEveryEntry) {
  GemmCase rows = make_case(8, 64, 8, {kRow, kRow, kRow}, DType::kFP16, DType::kFP16, 0xba7c1000);
  rows.batch = BatchMode::kTight;
  rows.batch_count = 70000;
  GemmCase shared_b = make_case(8, 64, 8, kOrders[0], DType::kBF16, DType::kFP32, 0xba7c2000);
  shared_b.batch = BatchMode::kSharedB;
  shared_b.batch_count = 70000;
  shared_b.beta = 1.0f;
  run_all({rows, shared_b}, "ProdBatch 70000 entries");
}

// ---- every config and K split, forced ----------------------------------------------------

// Cases with several k-tiles, so that K splits of 2 or more happen: aligned
// with beta 1; odd leading dimensions and offsets (repacked operands), fp32
// out, beta 2; a batch over one B, alpha -1; M = 1; and for the element
// pairs a row-major output stores in one instruction where C's alignment
// allows (a flipped choice): fp32 C with even leading dimensions, beta -1,
// batch entries of C 7 elements apart (every other entry's pairs
// misaligned), and fp16 C with beta 2.
std::vector<GemmCase> split_cases() {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x5e1170000;
  for (const StorageOrder& o : kOrders) {
    GemmCase c = make_case(136, 72, 200, o, DType::kBF16, DType::kBF16, ++seed);
    c.beta = 1.0f;
    cases.push_back(c);
    c = make_case(57, 41, 300, o, DType::kFP16, DType::kFP32, ++seed);
    c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
    c.a_offset = c.b_offset = c.c_offset = 1;
    c.beta = 2.0f;
    cases.push_back(c);
    c = make_case(40, 24, 520, o, DType::kBF16, DType::kFP16, ++seed);
    c.batch = BatchMode::kSharedB;
    c.alpha = -1.0f;
    cases.push_back(c);
    c = make_case(1, 264, 392, o, DType::kBF16, DType::kBF16, ++seed);
    cases.push_back(c);
    c = make_case(72, 136, 264, o, DType::kFP16, DType::kFP32, ++seed);
    c.batch = BatchMode::kPadded;
    c.beta = -1.0f;
    cases.push_back(c);
    c = make_case(96, 80, 136, o, DType::kBF16, DType::kFP16, ++seed);
    c.beta = 2.0f;
    cases.push_back(c);
  }
  return cases;
}

// Cases past one wave of every config's tiles, so that a split of the last
// wave only (Choice::split_tail) has whole units and split ones: aligned,
// beta 1; odd leading dimensions and offsets (repacked operands), fp32 out;
// in TN and all row-major (the C^T swap).
std::vector<GemmCase> tail_cases() {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x7a11000;
  for (const StorageOrder& o : {kOrders[0], StorageOrder{kRow, kRow, kRow}}) {
    GemmCase c = make_case(1100, 3400, 300, o, DType::kBF16, DType::kBF16, ++seed);
    c.beta = 1.0f;
    cases.push_back(c);
    c = make_case(3300, 1030, 330, o, DType::kFP16, DType::kFP32, ++seed);
    c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
    c.a_offset = c.b_offset = c.c_offset = 1;
    cases.push_back(c);
  }
  return cases;
}

using ProdChoices = HopperTest;

// The dispatcher remembers the heuristic's picks (resolve in launch.cpp),
// end to end on the device: asked twice, across variants of one problem,
// it gives what the tuned table or the heuristic gives afresh (the second
// round from the cache). Whether the key keeps all a pick depends on is the
// host test ProdHeuristicKey.EqualKeysGiveEqualPicks. resolve never reads
// the operands: the pointers are addresses only.
TEST_F(ProdChoices, RememberedHeuristicPicksAreTheHeuristics) {
  GemmArgs base;
  base.m = 1000;
  base.n = 3000;
  base.k = 1000;
  auto* const at = reinterpret_cast<std::uint8_t*>(std::uintptr_t{1} << 32);
  base.a = {at, DType::kBF16, Layout::kRowMajor, 1000, 0};
  base.b = {at + (std::size_t{1} << 28), DType::kBF16, Layout::kColMajor, 1000, 0};
  base.c = {at + (std::size_t{2} << 28), DType::kBF16, Layout::kColMajor, 1000, 0};
  std::vector<GemmArgs> variants(11, base);
  variants[1].a.ld = 1001;
  variants[2].c.ld = 1001;
  variants[3].a.ptr = at + 2;
  variants[4].beta = 1.0f;
  variants[5].sm_count = 20;
  variants[6].c.dtype = DType::kFP32;
  variants[7].c.layout = Layout::kRowMajor;
  variants[7].c.ld = 3000;
  variants[8].m = 40;
  variants[9].batch_count = 3;
  variants[9].a.stride = 1000 * 1000;
  variants[9].c.stride = 1000 * 3000;
  variants[10].n = 3001;
  std::set<std::string> picks;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const GemmArgs& v = variants[i];
      tcgemm::prod::Choice got;
      ASSERT_TRUE(tcgemm::kernels::prod::resolve_choice(v, tcgemm::kernels::kAutoConfig, &got).ok());
      tcgemm::prod::Choice want;
      if (const auto tuned = tcgemm::tuned::lookup_current_device(v)) {
        want = *tuned;
      } else {
        tcgemm::prod::DeviceModel model;
        ASSERT_TRUE(tcgemm::kernels::prod::device_model(v, &model).ok());
        want = tcgemm::prod::select(v, model);
      }
      EXPECT_EQ(got, want) << "variant " << i << ", round " << round << ": resolved "
                           << tcgemm::prod::kConfigs[got.config].name << " k" << got.k_splits
                           << ", afresh " << tcgemm::prod::kConfigs[want.config].name << " k"
                           << want.k_splits;
      picks.insert(std::string(tcgemm::prod::kConfigs[got.config].name) + " k" +
                   std::to_string(got.k_splits) + (got.flipped ? " flipped" : ""));
    }
  }
  // Variants that pick alike could hide a key that ignores what they
  // change; these pick at least two different choices.
  EXPECT_GE(picks.size(), 2u);
}

// The split flag words of a production-family workspace that are not zero
// (every call must leave them zero), -1 where they cannot be read back.
std::int64_t split_flags_set(const void* workspace) {
  return nonzero_words(static_cast<const std::uint8_t*>(workspace) + tcgemm::prod::kSplitFlagOffset,
                       tcgemm::prod::kSplitFlagBytes);
}

// Runs exactly `choice` (not the product: no describe() check of the
// dispatcher's pick) as launch_choice does with a caller's workspace:
// prepare(), then enqueue() of that prepared launch, always with the same
// workspace, grown (and zeroed) only when a problem needs more: each run
// finds the split-K flags the run before it left. After each call every
// flag word is read back and must be zero again (else the call reports an
// error and its case fails). A choice of a K split (not of the last wave
// only) must split: a call whose launch does not is an error too.
// `sm_count` is GemmArgs::sm_count (0: the whole device); `split_runs`, when
// given, counts the calls whose launch split K.
Backend choice_backend(tcgemm::prod::Choice choice, const std::string& name, int sm_count = 0,
                       std::shared_ptr<int> split_runs = nullptr) {
  auto workspace = std::make_shared<tcgemm::testing::DeviceBuffer>();
  return {
      name,
      [choice, workspace, sm_count, split_runs](const GemmArgs& args) {
        GemmArgs with = args;
        with.sm_count = sm_count;
        tcgemm::kernels::prod::PreparedLaunch prepared;
        if (const Status s = tcgemm::kernels::prod::prepare(with, choice, &prepared); !s.ok()) {
          return s;
        }
        if (choice.k_splits > 1 && !choice.split_tail && !prepared.split) {
          return tcgemm::Status{tcgemm::StatusCode::kCudaError,
                                "a split of " + std::to_string(choice.k_splits) +
                                    " was asked for and the launch did not split K"};
        }
        if (prepared.split && split_runs) ++*split_runs;
        // The flags and the scratch this launch uses (none: no workspace).
        const std::size_t need =
            prepared.scratch_bytes > 0
                ? tcgemm::prod::kReservedWorkspaceBytes + prepared.scratch_bytes
                : 0;
        if (need > workspace->bytes()) {
          *workspace = tcgemm::testing::DeviceBuffer();  // free the old one first
          *workspace = attach_workspace(with, need);
        }
        const tcgemm::Status s = tcgemm::kernels::prod::enqueue(
            prepared,
            tcgemm::kernels::prod::RunOperands{with.a.ptr, with.b.ptr, with.c.ptr, with.alpha,
                                               with.beta},
            need > 0 ? workspace->get() : nullptr, with.stream);
        if (!s.ok() || need == 0) return s;
        const std::int64_t left = split_flags_set(workspace->get());
        if (left < 0) {
          return tcgemm::Status{tcgemm::StatusCode::kCudaError, "reading the flags back failed"};
        }
        if (left != 0) {
          return tcgemm::Status{tcgemm::StatusCode::kCudaError,
                                std::to_string(left) + " split flag words left non-zero"};
        }
        return s;
      },
      false};
}

// Whether a case's B reaches the kernel K-major in the orientation a
// choice runs it in (tcgemm::prod::canonicalize): where the kernel computes
// C (a column-major C, or a row-major one flipped) the caller's B must be
// column-major; where it computes C^T = B^T A^T, A row-major.
bool b_reaches_k_major(const GemmCase& c, bool flipped) {
  const bool swapped = (c.lc == Layout::kRowMajor) != flipped;
  return swapped ? c.la == Layout::kRowMajor : c.lb == Layout::kColMajor;
}

// The cases as `choice`'s table row takes them: all of them as they are,
// or, for a row that takes B only K-major (tcgemm::prod::takes_b: BN not
// whole 64-column chunks), each case whose B would reach it MN-major first
// checked to be refused by prepare() (kNotSupported, naming K-major; it
// returns before anything is enqueued) and then run with the one operand's
// layout changed so that B reaches it K-major (B column-major where the
// kernel computes C, A row-major where it computes C^T), everything else
// (sizes, dtypes, scalars, padding, offsets, batches) kept.
std::vector<GemmCase> taken_cases(const std::vector<GemmCase>& cases,
                                  const tcgemm::prod::Choice& choice) {
  const tcgemm::prod::TileConfig& t = tcgemm::prod::kConfigs[choice.config].tile;
  if (tcgemm::prod::takes_b(t, tcgemm::prod::Major::kMN)) return cases;
  std::vector<GemmCase> taken;
  for (const GemmCase& c : cases) {
    if (b_reaches_k_major(c, choice.flipped)) {
      taken.push_back(c);
      continue;
    }
    {
      const GuardedProblem p(c);
      tcgemm::kernels::prod::PreparedLaunch prepared;
      const Status s = tcgemm::kernels::prod::prepare(p.args(), choice, &prepared);
      EXPECT_EQ(s.code, tcgemm::StatusCode::kNotSupported)
          << tcgemm::prod::kConfigs[choice.config].name << " on " << describe_case(c) << ": "
          << s.message;
      EXPECT_NE(s.message.find("K-major"), std::string::npos) << s.message;
    }
    GemmCase k_major = c;
    const bool swapped = (c.lc == Layout::kRowMajor) != choice.flipped;
    (swapped ? k_major.la : k_major.lb) = swapped ? Layout::kRowMajor : Layout::kColMajor;
    EXPECT_TRUE(b_reaches_k_major(k_major, choice.flipped));
    taken.push_back(k_major);
  }
  return taken;
}

// Every row of the config table with no split, splits of 3 and 7 (fewer
// where K has fewer k-tiles) reduced in place (by a second kernel where the
// row cannot: several CTAs per SM, or more partial sums than a tile's last
// piece adds, tcgemm::prod::reduces_in_place) and a split of 3 reduced by a
// second kernel, run through launch_choice: the five checks of run_case
// (and every flag back at zero after each call, choice_backend), so each
// split's partial sums and their reduction are exact on integer inputs and
// leave everything outside C untouched.
void run_every_config_and_split(bool flipped) {
  const std::vector<GemmCase> cases = split_cases();
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    for (int variant = 0; variant < 4; ++variant) {
      // No split; splits of 3 and 7 reduced in place (the last split of a
      // tile adds the others); a split of 3 reduced by the second kernel.
      constexpr int kSplits[] = {1, 3, 7, 3};
      const int splits = kSplits[variant];
      const tcgemm::prod::Choice choice{config, splits, /*separate_reduction=*/variant == 3,
                                        /*split_tail=*/false, flipped};
      const std::string name = std::string(tcgemm::prod::kConfigs[config].name) + " split " +
                               std::to_string(splits) + (variant == 3 ? " (second kernel)" : "") +
                               (flipped ? " flipped" : "");
      run_all(taken_cases(cases, choice), "ProdChoices " + name, choice_backend(choice, name));
    }
  }
}

TEST_F(ProdChoices, EveryConfigAndKSplitIsCorrect) { run_every_config_and_split(false); }

// The same in the flipped orientation (Choice::flipped: C^T = B^T A^T for a
// column-major C, C as given for a row-major one): the kernel's output
// row-major from registers (element pairs where C's alignment allows),
// from the in-place reduction, and from the second kernel into either
// layout of C.
TEST_F(ProdChoices, EveryConfigAndKSplitIsCorrectFlipped) { run_every_config_and_split(true); }

// A K split of the last wave only, in 2, 3 and 5 pieces (a tile's last piece
// adding one, two and four others' partial sums), for every config that runs
// one CTA per SM (the others cannot reduce in place and refuse it) and
// whose last piece may add that many (max_in_place_splits): whole tiles
// and split tiles of one launch each exact, the flags back at zero for the
// second run.
TEST_F(ProdChoices, SplitOfTheLastWaveIsCorrect) {
  const std::vector<GemmCase> cases = tail_cases();
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm != 1) continue;
    for (const int splits : {2, 3, 5}) {
      if (splits > tcgemm::prod::max_in_place_splits(config)) continue;
      // (The flipped orientation once per config, at 3 pieces or the most
      // it reduces in place: its whole tiles and its in-place sums write a
      // row-major output.)
      for (const bool flipped : {false, true}) {
        if (flipped && splits != std::min(3, tcgemm::prod::max_in_place_splits(config))) continue;
        const tcgemm::prod::Choice choice{config, splits, /*separate_reduction=*/false,
                                          /*split_tail=*/true, flipped};
        const std::string name = std::string(tcgemm::prod::kConfigs[config].name) +
                                 " last-wave split " + std::to_string(splits) +
                                 (flipped ? " flipped" : "");
        auto split_runs = std::make_shared<int>(0);
        run_all(taken_cases(cases, choice), "ProdChoices " + name,
                choice_backend(choice, name, 0, split_runs));
        // Whole waves only would leave nothing to split: the cases are sized
        // so that every config has a partial last wave.
        EXPECT_GT(*split_runs, 0) << name << ": no case split its last wave";
      }
    }
  }
}

// K splits reduced in place on an SM budget of 3 (GemmArgs::sm_count), so
// that a tile's pieces fall in different rounds of the persistent grid (its
// last split waiting on pieces of an earlier round, or of its own): every
// config of one CTA per SM, splits of 2 and 3 (where its last piece may add
// that many), each case exact, every flag back at zero after each call.
TEST_F(ProdChoices, KSplitAcrossRoundsIsCorrect) {
  const std::vector<GemmCase> cases = split_cases();
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm != 1) continue;
    for (const int splits : {2, 3}) {
      if (splits > tcgemm::prod::max_in_place_splits(config)) continue;
      const tcgemm::prod::Choice choice{config, splits};
      const std::string name = std::string(tcgemm::prod::kConfigs[config].name) + " split " +
                               std::to_string(splits) + " on 3 SMs";
      run_all(taken_cases(cases, choice), "ProdChoices " + name, choice_backend(choice, name, 3));
    }
  }
}

// The staged column-major epilogue (a 16-bit C that TMA cannot store: ldc
// off 8 elements, a base off 16 bytes, M % 8 != 0) with many tiles per CTA,
// on an SM budget of 4, so that each consumer restages its C buffer tile
// after tile; K of one k-tile, of two (fewer than prod-128x192's three C
// parts: the copy warps' later parts then wait for the end of the mainloop)
// and of 25. Every config, each case exact with C's guard bands untouched
// (run_case).
std::vector<GemmCase> staged_c_cases() {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x57a6ed00;
  for (const std::int64_t k : {64, 128, 1600}) {
    GemmCase c = make_case(1000, 1100, k, kOrders[0], DType::kBF16, DType::kBF16, ++seed);
    c.ldc_pad = 1;
    cases.push_back(c);
    c = make_case(997, 900, k, kOrders[1], DType::kFP16, DType::kFP16, ++seed);
    c.c_offset = 1;
    c.beta = 2.0f;
    cases.push_back(c);
    c = make_case(1020, 1030, k, kOrders[2], DType::kBF16, DType::kFP16, ++seed);
    c.alpha = -1.0f;
    c.beta = 1.0f;
    cases.push_back(c);
    // All row-major: C^T column-major, ldc + 1.
    c = make_case(700, 1003, k, kOrders[6], DType::kFP16, DType::kBF16, ++seed);
    c.ldc_pad = 1;
    cases.push_back(c);
    c = make_case(300, 520, k, kOrders[0], DType::kBF16, DType::kBF16, ++seed);
    c.batch = BatchMode::kPadded;
    c.batch_count = 3;
    c.ldc_pad = 1;
    cases.push_back(c);
  }
  return cases;
}

TEST_F(ProdChoices, StagedEpilogueOverManyTilesIsCorrect) {
  const std::vector<GemmCase> cases = staged_c_cases();
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    const tcgemm::prod::Choice choice{config, 1};
    const std::string name =
        std::string(tcgemm::prod::kConfigs[config].name) + " staged C on 4 SMs";
    run_all(taken_cases(cases, choice), "ProdChoices " + name, choice_backend(choice, name, 4));
  }
}

// The staged epilogue with at most one tile per CTA (a CTA's last tile is
// the consumers' to copy, not the copy warps'; some CTAs get none): every
// config on the whole device, 16-bit C off 16 bytes, beta 1.
TEST_F(ProdChoices, StagedEpilogueWithOneTilePerCtaIsCorrect) {
  GemmCase c = make_case(250, 250, 320, kOrders[0], DType::kBF16, DType::kBF16, 0x57a6ed70);
  c.ldc_pad = 1;
  c.beta = 1.0f;
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    const tcgemm::prod::Choice choice{config, 1};
    const std::string name =
        std::string(tcgemm::prod::kConfigs[config].name) + " staged C, one tile per CTA";
    run_all(taken_cases({c}, choice), "ProdChoices " + name, choice_backend(choice, name));
  }
}

// The staged epilogue for compute-sanitizer (racecheck: the C buffer's
// stmatrix writes and the copy's reads, tile after tile; memcheck: guard
// bands as sanitizer_subset_guard gives them): one case per config, 2 SMs.
TEST_F(ProdChoices, StagedEpilogueSanitizerSubset) {
  GemmCase c = make_case(260, 600, 1600, kOrders[0], DType::kBF16, DType::kBF16, 0x57a6ed80);
  c.ldc_pad = 1;
  c.beta = 1.0f;
  c.guard = sanitizer_subset_guard();
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    const tcgemm::prod::Choice choice{config, 1};
    const std::string name =
        std::string(tcgemm::prod::kConfigs[config].name) + " staged C on 2 SMs";
    run_all(taken_cases({c}, choice), "ProdChoices " + name, choice_backend(choice, name, 2));
  }
}

// Case `c` on every config, unsplit, in both orientations, on `sm_count`
// SMs (0: the whole device): each prepared launch must store C by TMA (the
// native or the row-major form) and pass run_case's checks.
void run_on_tma_store_epilogues(const GemmCase& c, const std::string& what, int sm_count) {
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    for (const bool flipped : {false, true}) {
      const tcgemm::prod::Choice choice{config, 1, false, false, flipped};
      const std::string name = std::string(tcgemm::prod::kConfigs[config].name) + " " + what +
                               (flipped ? " flipped" : "");
      const GuardedProblem p(c);
      tcgemm::kernels::prod::PreparedLaunch prepared;
      ASSERT_TRUE(tcgemm::kernels::prod::prepare(p.args(), choice, &prepared).ok()) << name;
      EXPECT_TRUE(prepared.tma_c) << name << ": C does not leave by TMA store";
      run_all(taken_cases({c}, choice), "ProdChoices " + name,
              choice_backend(choice, name, sm_count));
    }
  }
}

// The TMA-store epilogue for compute-sanitizer, the same way: C that TMA
// addresses (M a multiple of 8, ldc tight), beta 1, one case per config on
// 2 SMs, so that each consumer restages its C buffer tile after tile and a
// deferred row stores part of each tile under the next one's mainloop; in
// both orientations (flipped: the row-major output's TMA store).
TEST_F(ProdChoices, TmaStoreEpilogueSanitizerSubset) {
  GemmCase c = make_case(264, 600, 1600, kOrders[0], DType::kBF16, DType::kBF16, 0x57a6ed90);
  c.beta = 1.0f;
  c.guard = sanitizer_subset_guard();
  run_on_tma_store_epilogues(c, "TMA-store C on 2 SMs", 2);
}

// Both TMA-store epilogues on a C whose pitch and batch stride are not the
// tile grid's: ldc 8 past tight (a map that took N, or M, for the pitch
// would write the wrong lines) and three entries M x ldc apart, beta 1; a
// column-major C and a row-major one, each in both orientations, every
// config on the whole device.
TEST_F(ProdChoices, TmaStoredCTakesAPaddedLdcAndBatchStride) {
  for (const StorageOrder& o : {kOrders[0], kOrders[4]}) {
    GemmCase c = make_case(264, 600, 328, o, DType::kBF16, DType::kBF16, 0x1dc8);
    c.ldc_pad = 8;
    c.batch = BatchMode::kTight;
    c.beta = 1.0f;
    run_on_tma_store_epilogues(c, order_name(o.a, o.b, o.c) + " ldc+8, batch of 3", 0);
  }
}

// One workspace serves the stream-K ladder step and then the family's
// in-place splits: the step's partial sums (2040 x 2300 x 4000 splits six
// tile pairs over every resident cluster) start past the family's split-K
// flags, so the splits that follow in the same buffer still find them zero
// and every case stays exact. (The partials once began on those flags.)
TEST_F(ProdChoices, AWorkspaceTheStreamKStepUsedStillReducesInPlace) {
  const tcgemm::KernelInfo* stream_k = tcgemm::find_kernel("hopper-15");
  ASSERT_NE(stream_k, nullptr);
  GemmCase big = make_case(2040, 2300, 4000, kOrders[0], DType::kBF16, DType::kBF16, 0x5eed15);
  GuardedProblem first(big);
  first.fill(Values::kNormal);
  GemmArgs args = first.args();
  const std::size_t stream_k_bytes = stream_k->workspace_bytes(args);
  const std::vector<GemmCase> cases = tail_cases();
  std::size_t split_bytes = 0;
  const tcgemm::prod::Choice choice{0, 3, /*separate_reduction=*/false, /*split_tail=*/true};
  for (const GemmCase& c : cases) {
    const GuardedProblem p(c);
    split_bytes = std::max(split_bytes, tcgemm::kernels::prod::workspace_choice(p.args(), choice));
  }
  DeviceBuffer workspace = attach_workspace(args, std::max(stream_k_bytes, split_bytes));
  args.workspace_bytes = stream_k_bytes;
  ASSERT_TRUE(stream_k->launch(args).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Backend backend{"prod-128x256 last-wave split 3 after hopper-15",
                        [&](const GemmArgs& a) {
                          GemmArgs with = a;
                          with.workspace = workspace.get();
                          with.workspace_bytes = split_bytes;
                          return tcgemm::kernels::prod::launch_choice(with, choice);
                        },
                        false};
  run_all(cases, "ProdChoices after hopper-15", backend);
}

// ---- stream-K tails ---------------------------------------------------------------

// Problems whose last round an unsplit launch of `config` spreads stream-K
// over `budget` SMs (GemmArgs::sm_count: W = budget / cluster_m workers):
// W + ceil(W / 2) units, a whole round and then ceil(W / 2) units split over
// every worker (each share about half a unit or more: heads with one peer,
// and with two where W = 5, partial pieces that begin a worker's share), or
// with `thin_extra` > 0 2W + thin_extra units, whose units left over are
// too thin a round: the second whole round joins the split range (shares of
// 1 + thin_extra / W units, whole units among a worker's pieces, heads with
// one peer; with W = 5 and 2 left over a worker holds three pieces: the end
// of one unit, a whole one, the head of the next), as units along N,
// along M, and as batch entries. Ragged M and N, an odd K (repacked
// operands), alpha and beta, every epilogue (TMA store, the staged
// column-major store, fp32 from registers, and with `flipped` a flipped
// choice's row-major output: M and N then trade places so that the kernel
// sees the same units). K is base_k, base_k + 1, base_k + 192 or 1.5 x base_k.
std::vector<GemmCase> stream_k_cases(int config, int budget, bool flipped, std::int64_t base_k,
                                     std::int64_t thin_extra = 0,
                                     std::int64_t guard = kDefaultGuard) {
  const tcgemm::prod::TileConfig& t = tcgemm::prod::kConfigs[config].tile;
  const std::int64_t workers = budget / t.cluster_m;
  const std::int64_t units =
      thin_extra > 0 ? 2 * workers + thin_extra : workers + (workers + 1) / 2;
  const std::int64_t pair_rows = std::int64_t{t.bm} * t.cluster_m;
  std::vector<GemmCase> cases;
  std::uint64_t seed = 0x5c000000 + static_cast<std::uint64_t>(config) * 64;
  // Units along N.
  GemmCase c = make_case(pair_rows - 3, units * t.bn - 5, base_k, kOrders[0], DType::kBF16,
                         DType::kBF16, ++seed);
  cases.push_back(c);
  c = make_case(pair_rows - 3, units * t.bn - 5, base_k + 1, kOrders[1], DType::kFP16,
                DType::kFP16, ++seed);
  c.beta = 2.0f;
  c.ldc_pad = 1;
  cases.push_back(c);
  c = make_case(pair_rows - 9, units * t.bn - 17, base_k, kOrders[2], DType::kBF16,
                DType::kBF16, ++seed);
  c.c_offset = 1;
  cases.push_back(c);
  // Units along M.
  c = make_case(units * pair_rows - 5, t.bn - 3, base_k + 192, kOrders[3], DType::kBF16,
                DType::kFP32, ++seed);
  c.alpha = -1.0f;
  c.beta = 1.0f;
  cases.push_back(c);
  // Batch entries of one unit each (B shared).
  c = make_case(pair_rows - 1, t.bn - 1, base_k * 3 / 2, kOrders[0], DType::kFP16, DType::kBF16,
                ++seed);
  c.batch = BatchMode::kSharedB;
  c.batch_count = units;
  cases.push_back(c);
  for (GemmCase& each : cases) {
    if (flipped) std::swap(each.m, each.n);
    each.guard = guard;
  }
  return cases;
}

// Runs stream_k_cases through launch_choice on an SM budget: each case must
// really take a stream-K tail (the prepared launch says so) and pass
// run_case's checks (exact on integer inputs, guard bands, the flags back at
// zero for the second run).
// Returns the most peers a head of the first case's schedule adds and the
// most stream-K pieces one worker holds; with `thin_extra` (stream_k_cases)
// each case's split range must also be the widened one, more than a unit
// per worker.
struct StreamKShape {
  int most_peers = 0;
  int most_pieces = 0;
};
StreamKShape run_stream_k_cases(int config, int budget, bool flipped, std::int64_t base_k,
                                std::int64_t thin_extra = 0,
                                std::int64_t guard = kDefaultGuard) {
  const tcgemm::prod::Choice choice{config, 1, /*separate_reduction=*/false,
                                    /*split_tail=*/false, flipped};
  StreamKShape shape;
  const std::string name = std::string(tcgemm::prod::kConfigs[config].name) + " stream-K on " +
                           std::to_string(budget) + " SMs" + (flipped ? " flipped" : "") +
                           (thin_extra > 0 ? " thin tail of " + std::to_string(thin_extra) : "");
  const std::vector<GemmCase> cases =
      taken_cases(stream_k_cases(config, budget, flipped, base_k, thin_extra, guard), choice);
  for (const GemmCase& c : cases) {
    const GuardedProblem p(c);
    GemmArgs args = p.args();
    args.sm_count = budget;
    tcgemm::kernels::prod::PreparedLaunch prepared;
    EXPECT_TRUE(tcgemm::kernels::prod::prepare(args, choice, &prepared).ok()) << name;
    EXPECT_TRUE(prepared.stream_k) << name << ": " << c.m << " x " << c.n << " x " << c.k
                                   << " did not take a stream-K tail";
    if (!prepared.stream_k) continue;
    // The schedule the launch runs.
    const tcgemm::kernels::prod::Params& q = prepared.launch.params;
    tcgemm::sched::StreamKSchedule sk;
    sk.workers = prepared.launch.ctas / tcgemm::prod::kConfigs[config].tile.cluster_m;
    sk.dp_units = q.sk_dp_units;
    sk.sk_iters = q.sk_iters;
    sk.k_tiles = q.k_tiles;
    if (thin_extra > 0) {
      EXPECT_GT(sk.sk_iters, sk.workers * sk.k_tiles)
          << name << ": " << c.m << " x " << c.n << " x " << c.k
          << " split only its last round, not the widened range";
    }
    if (&c == &cases.front()) {
      for (std::int64_t w = 0; w < sk.workers; ++w) {
        shape.most_pieces = std::max(shape.most_pieces, static_cast<int>(sk.sk_items(w)));
        for (std::int64_t j = 0; j < sk.sk_items(w); ++j) {
          shape.most_peers = std::max(shape.most_peers, static_cast<int>(sk.sk_item(w, j).peers));
        }
      }
    }
  }
  // On the budget (choice_backend sets GemmArgs::sm_count on every call).
  run_all(cases, "ProdChoices " + name, choice_backend(choice, name, budget));
  return shape;
}

// The stream-K tail tests, one instance per config that runs one CTA per SM
// (named by the config: ProdStreamKTail.IsCorrect/prod_128x96): each instance
// stays well inside ctest's per-test limit, where a loop over every config
// took 230-250 s on an H100, and one row can be run alone.
std::vector<int> one_cta_per_sm_configs() {
  std::vector<int> configs;
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm == 1) configs.push_back(config);
  }
  return configs;
}

std::string config_param_name(const ::testing::TestParamInfo<int>& info) {
  return sanitize_name(std::string(tcgemm::prod::kConfigs[info.param].name));
}

class ProdStreamKTail : public HopperTestWithParam<int> {};

// Unsplit, on budgets of 4 SMs (2 clusters of 2, or 4 CTAs), 6, and 5
// workers (10 SMs in clusters of 2, 5 without: heads that add two partial
// sums, as most of 8192^3's do), in the native orientation and flipped.
TEST_P(ProdStreamKTail, IsCorrect) {
  const int config = GetParam();
  const tcgemm::prod::TileConfig& t = tcgemm::prod::kConfigs[config].tile;
  for (const int budget : {4, 6, 5 * t.cluster_m}) {
    for (const bool flipped : {false, true}) {
      const int peers = run_stream_k_cases(config, budget, flipped, 8000).most_peers;
      if (budget == 5 * t.cluster_m) {
        EXPECT_EQ(peers, 2) << tcgemm::prod::kConfigs[config].name << " on " << budget;
      }
    }
  }
}

// A last round too thin to split alone (1 unit over 3 or 5 workers, 2 over
// 5): the round before it joins the split range, in both orientations. Each
// head adds one partial sum; with 2 over 5 a worker holds three pieces (the
// end of a unit, a whole one, a head).
TEST_P(ProdStreamKTail, WidenedIsCorrect) {
  struct Thin {
    int workers;
    int extra;
    int most_pieces;
  };
  const int config = GetParam();
  const tcgemm::prod::TileConfig& t = tcgemm::prod::kConfigs[config].tile;
  for (const Thin thin : {Thin{3, 1, 2}, Thin{5, 1, 2}, Thin{5, 2, 3}}) {
    for (const bool flipped : {false, true}) {
      const StreamKShape shape =
          run_stream_k_cases(config, thin.workers * t.cluster_m, flipped, 8000, thin.extra);
      const std::string where = std::string(tcgemm::prod::kConfigs[config].name) + ", " +
                                std::to_string(thin.extra) + " over " +
                                std::to_string(thin.workers) + " workers";
      EXPECT_EQ(shape.most_peers, 1) << where;
      EXPECT_EQ(shape.most_pieces, thin.most_pieces) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryConfig, ProdStreamKTail,
                         ::testing::ValuesIn(one_cta_per_sm_configs()), config_param_name);

// The subset for compute-sanitizer: the 128 x 256 row (clusters of 2, the
// TMA store) and the 64 x 256 row (no cluster, one consumer) on 4 SMs, K
// about 3000; guard bands as sanitizer_subset_guard gives them.
TEST_F(ProdChoices, StreamKTailSanitizerSubset) {
  for (const char* name : {"prod-128x256", "prod-64x256"}) {
    int config = 0;
    ASSERT_TRUE(tcgemm::kernels::prod::config_of_kernel(name, &config)) << name;
    run_stream_k_cases(config, 4, /*flipped=*/false, 3000, /*thin_extra=*/0,
                       sanitizer_subset_guard());
  }
}

// The heuristic's count of resident clusters of two (DeviceModel::pair_clusters,
// from an occupancy query on a stand-in kernel) is what the hardware runs at
// once, counted by a launch that holds every SM it gets (not by the query
// again): that many clusters of 384-thread whole-SM CTAs all start together,
// one more and the extra one waits. And it is what a production launch takes:
// a stream-K launch's grid is every resident cluster. 2048 x 3328 x 8192 in
// prod-128x256 pairs is 8 x 13 = 104 units, one round and a partial second on
// 66 clusters (the H200).
TEST_F(ProdChoices, TheDeviceModelCountsTheClustersALaunchGets) {
  tcgemm::prod::DeviceModel model;
  ASSERT_TRUE(tcgemm::kernels::prod::device_model(&model).ok());
  EXPECT_GT(model.pair_clusters, 0);
  EXPECT_LE(model.pair_clusters, model.sm_count / 2);
  for (const int extra : {0, 1}) {
    const tcgemm::testing::ClusterCount count =
        tcgemm::testing::count_resident_clusters(2, model.pair_clusters + extra, 384);
    ASSERT_TRUE(count.error.empty()) << count.error;
    EXPECT_EQ(count.together, model.pair_clusters)
        << model.pair_clusters + extra << " clusters of 2 launched, " << count.together
        << " started together";
  }
  const GemmCase c =
      make_case(2048, 3328, 8192, kOrders[0], DType::kBF16, DType::kBF16, 0x5c0c0001);
  const GuardedProblem p(c);
  tcgemm::kernels::prod::PreparedLaunch prepared;
  ASSERT_TRUE(tcgemm::kernels::prod::prepare(p.args(), tcgemm::prod::Choice{0, 1}, &prepared).ok());
  ASSERT_TRUE(prepared.stream_k);
  EXPECT_EQ(static_cast<int>(prepared.launch.ctas) / 2, model.pair_clusters);
}

// Through the public API: gemm takes the stream-K round with or without a
// workspace (it allocates one when it has none), so the bits do not depend
// on it; with the caller's workspace every flag is back at zero after each
// call; the batch-invariant mode never takes it (whether a round is partial
// depends on M).
TEST_F(ProdChoices, StreamKTailIsTheSameWithOrWithoutAWorkspaceAndLeavesFlagsZero) {
  tcgemm::GemmOptions options;
  options.kernel = "prod-128x256";
  tcgemm::GemmOptions invariant;
  invariant.batch_invariant = true;
  const std::vector<GemmCase> cases = stream_k_cases(0, 4, /*flipped=*/false, 3000);
  for (const GemmCase& c : cases) {
    const GuardedProblem p(c);
    GemmArgs args = p.args();
    args.sm_count = 4;
    args.workspace = nullptr;
    args.workspace_bytes = 0;
    const tcgemm::Description without = tcgemm::describe(args, options);
    ASSERT_TRUE(without.status.ok()) << without.status.message;
    EXPECT_NE(without.config.find("stream-K last round"), std::string::npos) << without.config;
    const tcgemm::Description inv = tcgemm::describe(args, invariant);
    EXPECT_EQ(inv.config.find("stream-K"), std::string::npos) << inv.config;
  }
  const auto budgeted = [](const GemmArgs& args) {
    GemmArgs a = args;
    a.sm_count = 4;
    return a;
  };
  const Backend no_workspace{"prod-128x256 on 4 SMs, no workspace",
                             [options, budgeted](const GemmArgs& args) {
                               GemmArgs a = budgeted(args);
                               a.workspace = nullptr;
                               a.workspace_bytes = 0;
                               return tcgemm::gemm(a, options);
                             },
                             false};
  run_all(cases, "ProdChoices stream-K without a workspace", no_workspace);
  // One workspace for every case, its flags read back after each call.
  auto workspace = std::make_shared<DeviceBuffer>();
  auto bad_flags = std::make_shared<std::int64_t>(0);
  const Backend flags_checked{
      "prod-128x256 on 4 SMs, flags read back",
      [options, budgeted, workspace, bad_flags](const GemmArgs& args) {
        GemmArgs a = budgeted(args);
        const std::size_t need = tcgemm::workspace_size(a, options);
        if (need > workspace->bytes()) {
          *workspace = DeviceBuffer();
          *workspace = attach_workspace(a, need);
        }
        a.workspace = workspace->get();
        a.workspace_bytes = workspace->bytes();
        const tcgemm::Status s = tcgemm::gemm(a, options);
        if (!s.ok()) return s;
        const std::int64_t left = split_flags_set(workspace->get());
        if (left < 0) {
          return tcgemm::Status{tcgemm::StatusCode::kCudaError, "reading the flags back failed"};
        }
        *bad_flags += left;
        return s;
      },
      false};
  run_all(cases, "ProdChoices stream-K, flags read back", flags_checked);

  // The same inputs through both: C bit for bit the same.
  for (const GemmCase& c : cases) {
    GuardedProblem p(c);
    p.fill(Values::kNormal);
    ASSERT_TRUE(IsOk(no_workspace.gemm(p.args())));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    const HostImage without_workspace = p.download_c();
    p.reset_c();
    ASSERT_TRUE(IsOk(flags_checked.gemm(p.args())));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(p.download_c() == without_workspace)
        << describe_case(c) << ": C differs with and without a workspace";
  }
  EXPECT_EQ(*bad_flags, 0) << "flag words left non-zero after a call";
}

// A configuration that runs several CTAs per SM has no in-place reduction,
// so it refuses a split of the last wave with a clear status.
TEST_F(ProdChoices, SplitOfTheLastWaveNeedsOneCtaPerSm) {
  int checked = 0;
  for (int config = 0; config < tcgemm::prod::kConfigCount; ++config) {
    if (tcgemm::prod::kConfigs[config].tile.ctas_per_sm == 1) continue;
    ++checked;
    const GuardedProblem p(tail_cases()[0]);
    const tcgemm::Status s = tcgemm::kernels::prod::launch_choice(
        p.args(), tcgemm::prod::Choice{config, 3, /*separate_reduction=*/false,
                                       /*split_tail=*/true});
    EXPECT_EQ(s.code, tcgemm::StatusCode::kInvalidValue) << s.message;
    EXPECT_NE(s.message.find("split_tail"), std::string::npos) << s.message;
  }
  EXPECT_GT(checked, 0) << "no config runs several CTAs per SM: the test checks nothing";
}

}  // namespace
}  // namespace tcgemm_test
