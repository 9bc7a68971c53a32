#include "measure.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace tcgemm::bench {
namespace {

using testing::DeviceBuffer;

// cudaMalloc returns 256-byte aligned memory; carving every buffer set at that
// alignment gives each set the alignment of a fresh allocation (TMA needs 16).
constexpr std::size_t kSetAlignment = 256;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

class CudaEvent {
 public:
  CudaEvent() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~CudaEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

struct EventPair {
  CudaEvent start;
  CudaEvent stop;

  double elapsed_ms() const {
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    return ms;
  }
};

std::int64_t elements(const DeviceBuffer& pool, DType dtype) {
  return static_cast<std::int64_t>(pool.bytes() / size_of(dtype));
}

Timing summarize(const std::vector<double>& ms, int launches_per_sample) {
  const auto [least, most] = std::minmax_element(ms.begin(), ms.end());
  return {median(ms), *least, *most, launches_per_sample};
}

}  // namespace

void sync_or_throw(cudaStream_t stream, const std::string& what) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaGetLastError();
  check_cuda(err, what);
}

void clear_pending_error() { static_cast<void>(cudaGetLastError()); }

Launch launch_outcome(const Status& s, bool not_supported_skips) {
  if (s.ok()) return {};
  clear_pending_error();
  const std::string message = std::string(to_string(s.code)) + ": " + s.message;
  if (s.code == StatusCode::kArchMismatch) return {Launch::Kind::kSkipped, s.message};
  if (s.code == StatusCode::kNotSupported && not_supported_skips) {
    return {Launch::Kind::kSkipped, message};
  }
  return {Launch::Kind::kError, message};
}

SetPlan plan_sets(const Problem& p, std::int64_t l2_bytes) {
  const auto bytes = [&p](Operand operand) {
    return static_cast<std::size_t>(*operand_bytes(p, operand));
  };
  SetPlan plan;
  plan.a_bytes = bytes(Operand::kA) - static_cast<std::size_t>(p.offset) * size_of(p.input);
  plan.b_bytes = bytes(Operand::kB) - static_cast<std::size_t>(p.offset) * size_of(p.input);
  plan.c_bytes = bytes(Operand::kC) - static_cast<std::size_t>(p.offset) * size_of(p.output);
  plan.a_stride = round_up(bytes(Operand::kA), kSetAlignment);
  plan.b_stride = round_up(bytes(Operand::kB), kSetAlignment);
  plan.c_stride = round_up(bytes(Operand::kC), kSetAlignment);
  // Sizes are >= 1 (the CLI insists), so every stride is >= kSetAlignment.
  const std::size_t set_bytes = plan.a_stride + plan.b_stride + plan.c_stride;
  const auto rotate_bytes = static_cast<std::size_t>(kL2Multiple * l2_bytes);
  plan.sets = set_bytes > rotate_bytes ? 1 : static_cast<int>(rotate_bytes / set_bytes + 1);
  return plan;
}

OperandSets::OperandSets(const Problem& p, const SetPlan& plan, std::uint64_t seed,
                         cudaStream_t stream)
    : problem_(p), plan_(plan) {
  const auto sets = static_cast<std::size_t>(plan.sets);
  a_ = DeviceBuffer(plan.a_stride * sets);
  b_ = DeviceBuffer(plan.b_stride * sets);
  c_ = DeviceBuffer(plan.c_stride * sets);
  fill(seed, stream);
}

void OperandSets::fill(std::uint64_t seed, cudaStream_t stream) {
  testing::fill_normal(a_.get(), problem_.input, elements(a_, problem_.input), seed, stream);
  testing::fill_normal(b_.get(), problem_.input, elements(b_, problem_.input), seed + 1, stream);
  testing::fill_normal(c_.get(), problem_.output, elements(c_, problem_.output), seed + 2, stream);
}

GemmArgs OperandSets::args(int set, cudaStream_t stream) const {
  const auto at = [set](const DeviceBuffer& pool, std::size_t stride) {
    return static_cast<std::byte*>(pool.get()) + static_cast<std::size_t>(set) * stride;
  };
  return make_args(problem_, at(a_, plan_.a_stride), at(b_, plan_.b_stride), at(c_, plan_.c_stride),
                   stream);
}

GemmWorkspace::GemmWorkspace(std::size_t bytes, cudaStream_t stream) {
  buffer_ = DeviceBuffer(bytes);
  if (bytes > 0) {
    check_cuda(cudaMemsetAsync(buffer_.get(), 0, bytes, stream),
               "cudaMemsetAsync (zero the GEMM workspace)");
  }
}

GemmArgs GemmWorkspace::attach(GemmArgs args) const {
  args.workspace = buffer_.get();
  args.workspace_bytes = buffer_.bytes();
  return args;
}

namespace {

// A buffer of `bytes` whose first byte sits as far past a 256-byte boundary
// as `like` does (cudaMalloc returns 256-byte aligned memory); *at gets it.
DeviceBuffer placed_like(const void* like, std::size_t bytes, void** at) {
  const std::size_t offset = reinterpret_cast<std::uintptr_t>(like) % kSetAlignment;
  DeviceBuffer buffer(bytes + offset);
  *at = static_cast<std::byte*>(buffer.get()) + offset;
  return buffer;
}

// The small-integer operands' seeds are exact_seed + 100, + 101, + 102: away
// from the normal operands' seed, + 1, + 2 when both come from one seed.
constexpr std::uint64_t kExactSeedOffset = 100;

}  // namespace

float* Verifier::Operands::entry_ref(std::int64_t entry) const {
  return static_cast<float*>(ref.get()) + entry * args.m * args.n;
}

Verifier::Verifier(const GemmArgs& args, const OperandSets& sets, cudaStream_t stream,
                   std::uint64_t exact_seed)
    : c_bytes_(sets.c_bytes()), stream_(stream) {
  const std::size_t ref_bytes =
      sizeof(float) * static_cast<std::size_t>(args.m * args.n * args.batch_count);
  set0_.args = args;
  set0_.ref = DeviceBuffer(ref_bytes);
  // With beta != 0 the reference reads set 0's random C: keep that C0 to
  // restore before every checked run.
  if (args.beta != 0.0f) {
    set0_.c0 = DeviceBuffer(c_bytes_);
    check_cuda(cudaMemcpyAsync(set0_.c0.get(), args.c.ptr, c_bytes_, cudaMemcpyDeviceToDevice,
                               stream),
               "cudaMemcpyAsync (keep C0)");
  }
  // The repeat check's copy of the first run's C, before the small-integer
  // buffers, which are the ones to go without when memory runs short.
  first_ = DeviceBuffer(c_bytes_);
  if (testing::exact_on_small_integers(args)) {
    // Their own copies of A, B and C and a second reference: where they do
    // not fit beside the timed operands, the problem is checked without
    // them (exact_mismatches empty) rather than not at all.
    try {
      exact_.emplace();
      place_exact_operands(args, sets, exact_seed + kExactSeedOffset);
    } catch (const testing::DeviceAllocError& e) {
      if (e.error() != cudaErrorMemoryAllocation) throw;
      exact_.reset();
    }
  }
  for (const Operands* operands : {static_cast<const Operands*>(&set0_),
                                   static_cast<const Operands*>(exact_ ? &*exact_ : nullptr)}) {
    if (operands == nullptr) continue;
    for (std::int64_t entry = 0; entry < args.batch_count; ++entry) {
      testing::reference_gemm(batch_entry(operands->args, entry), operands->entry_ref(entry),
                              stream);
    }
  }
  sync_or_throw(stream, "reference GEMM");
}

void Verifier::place_exact_operands(const GemmArgs& args, const OperandSets& sets,
                                    std::uint64_t seed) {
  ExactOperands& x = *exact_;
  x.args = args;
  void* at = nullptr;
  x.a = placed_like(args.a.ptr, sets.a_bytes(), &at);
  x.args.a.ptr = at;
  testing::fill_small_integers(at, args.a.dtype,
                               static_cast<std::int64_t>(sets.a_bytes() / size_of(args.a.dtype)),
                               seed, stream_);
  x.b = placed_like(args.b.ptr, sets.b_bytes(), &at);
  x.args.b.ptr = at;
  testing::fill_small_integers(at, args.b.dtype,
                               static_cast<std::int64_t>(sets.b_bytes() / size_of(args.b.dtype)),
                               seed + 1, stream_);
  x.c = placed_like(args.c.ptr, c_bytes_, &at);
  x.args.c.ptr = at;
  x.ref = DeviceBuffer(sizeof(float) * static_cast<std::size_t>(args.m * args.n * args.batch_count));
  if (args.beta != 0.0f) {
    const auto c_elems = static_cast<std::int64_t>(c_bytes_ / size_of(args.c.dtype));
    testing::fill_small_integers(at, args.c.dtype, c_elems, seed + 2, stream_);
    x.c0 = DeviceBuffer(c_bytes_);
    check_cuda(cudaMemcpyAsync(x.c0.get(), at, c_bytes_, cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync (keep the small-integer C0)");
  }
}

std::optional<Verifier::Checked> Verifier::check(const Launcher& launch, Result& result,
                                                 bool repeat) {
  const GemmArgs& args = set0_.args;
  if (!run_once(launch, result, set0_)) return std::nullopt;
  Checked checked;
  for (std::int64_t entry = 0; entry < args.batch_count; ++entry) {
    add_entry(checked.stats,
              testing::compare(batch_entry(args, entry), set0_.entry_ref(entry), stream_), entry);
  }
  checked.repeatable = true;
  if (repeat) {
    check_cuda(
        cudaMemcpyAsync(first_.get(), args.c.ptr, c_bytes_, cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpyAsync (keep the first run's C)");
    if (!run_once(launch, result, set0_)) return std::nullopt;
    checked.repeatable = testing::bitwise_equal(args.c.ptr, first_.get(), c_bytes_);
  }
  if (exact_) {
    if (!run_once(launch, result, *exact_)) return std::nullopt;
    std::int64_t wrong = 0;
    for (std::int64_t entry = 0; entry < args.batch_count; ++entry) {
      const testing::ErrorStats e = testing::compare(batch_entry(exact_->args, entry),
                                                     exact_->entry_ref(entry), stream_);
      wrong += e.mismatches + e.nonfinite;
    }
    checked.exact_mismatches = wrong;
  }
  return checked;
}

void Verifier::verify(const Launcher& launch, Result& result, bool repeat) {
  const std::optional<Checked> checked = check(launch, result, repeat);
  if (!checked) return;
  const BatchErrorStats& stats = checked->stats;
  result.error = stats;
  result.exact_mismatches = checked->exact_mismatches;
  const bool baseline = result.kind == Contender::Kind::kCublas;

  if (stats.nonfinite > 0) {
    result.status = "FAIL(nonfinite)";
  } else if (!(stats.rel_fro < testing::tolerance_for(set0_.args.c.dtype))) {
    result.status = "FAIL(rel_err)";
  } else if (checked->exact_mismatches.value_or(0) > 0 && !baseline) {
    result.status = "FAIL(exact)";
  } else if (!checked->repeatable) {
    result.status = "FAIL(repeat)";
  } else {
    result.status = "ok";
  }
  result.failed = result.status != "ok";
}

void Verifier::reset_c(const Operands& operands) {
  const GemmArgs& args = operands.args;
  if (operands.c0.get() != nullptr) {
    check_cuda(cudaMemcpyAsync(args.c.ptr, operands.c0.get(), c_bytes_, cudaMemcpyDeviceToDevice,
                               stream_),
               "cudaMemcpyAsync (restore C0)");
  } else {
    testing::fill_poison(args.c.ptr, args.c.dtype,
                         static_cast<std::int64_t>(c_bytes_ / size_of(args.c.dtype)), stream_);
  }
}

bool Verifier::run_once(const Launcher& launch, Result& result, const Operands& operands) {
  reset_c(operands);
  const Launch outcome = launch(operands.args);
  if (outcome.kind != Launch::Kind::kOk) {
    const bool skipped = outcome.kind == Launch::Kind::kSkipped;
    result.status = (skipped ? "skipped: " : "error: ") + outcome.message;
    result.failed = !skipped;
    return false;
  }
  try {
    sync_or_throw(stream_, result.kernel);
  } catch (const DeviceFault& fault) {
    result.status = std::string("error: ") + fault.what();
    result.failed = true;
    throw;
  }
  return true;
}

std::vector<TimingOutcome> time_interleaved(std::span<const Launcher> launchers,
                                            const OperandSets& operands,
                                            const GemmWorkspace& workspace, int warmup, int iters,
                                            cudaStream_t stream) {
  std::vector<TimingOutcome> out(launchers.size());
  int next_set = 0;
  const auto enqueue = [&](std::size_t i, int launches, const EventPair& events) {
    check_cuda(cudaEventRecord(events.start.get(), stream), "cudaEventRecord");
    for (int r = 0; r < launches; ++r) {
      const Launch outcome = launchers[i](workspace.attach(operands.args(next_set, stream)));
      next_set = (next_set + 1) % operands.sets();
      if (outcome.kind != Launch::Kind::kOk) {
        out[i].error = outcome.message;
        return false;
      }
    }
    check_cuda(cudaEventRecord(events.stop.get(), stream), "cudaEventRecord");
    return true;
  };

  // Warm-up, which also measures each launch roughly to size its samples.
  warmup = std::max(warmup, 1);
  std::vector<double> estimate_ms(launchers.size(), 0.0);
  for (std::size_t i = 0; i < launchers.size(); ++i) {
    const EventPair warm;
    if (!enqueue(i, warmup, warm)) continue;
    sync_or_throw(stream, "warm-up");
    estimate_ms[i] = warm.elapsed_ms() / warmup;
  }
  const std::vector<int> per_sample = launches_per_sample(estimate_ms);

  std::vector<std::vector<EventPair>> samples(launchers.size());
  for (auto& s : samples) s.reserve(static_cast<std::size_t>(iters));
  for (int iter = 0; iter < iters; ++iter) {
    for (std::size_t i = 0; i < launchers.size(); ++i) {
      if (!out[i].error.empty()) continue;
      if (!enqueue(i, per_sample[i], samples[i].emplace_back())) samples[i].pop_back();
    }
  }
  sync_or_throw(stream, "timing loop");

  for (std::size_t i = 0; i < launchers.size(); ++i) {
    if (!out[i].error.empty() || samples[i].empty()) continue;
    std::vector<double> ms;
    for (const EventPair& sample : samples[i]) ms.push_back(sample.elapsed_ms() / per_sample[i]);
    out[i].timing = summarize(ms, per_sample[i]);
  }
  return out;
}

}  // namespace tcgemm::bench
