// tcgemm::validate, tcgemm::gemm and tcgemm::workspace_size: argument checks,
// BLAS quick returns, device checks, and dispatch over the registry.
#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda_errors.h"
#include "dispatch.h"
#include "kernels/kernels.h"

namespace tcgemm {

std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kSuccess:
      return "success";
    case StatusCode::kInvalidValue:
      return "invalid value";
    case StatusCode::kNotSupported:
      return "not supported";
    case StatusCode::kArchMismatch:
      return "architecture mismatch";
    case StatusCode::kCudaError:
      return "CUDA error";
  }
  return "unknown status";
}

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "bf16";
    case DType::kFP16:
      return "fp16";
    case DType::kFP32:
      return "fp32";
  }
  return "unknown dtype";
}

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::kRowMajor:
      return "row";
    case Layout::kColMajor:
      return "col";
  }
  return "unknown layout";
}

std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
    case DType::kFP16:
      return 2;
    case DType::kFP32:
      return 4;
  }
  return 0;
}

namespace {

bool known(DType d) { return d == DType::kBF16 || d == DType::kFP16 || d == DType::kFP32; }
bool known(Layout l) { return l == Layout::kRowMajor || l == Layout::kColMajor; }

Status invalid(const std::string& message) { return {StatusCode::kInvalidValue, message}; }

// Elements spanned by one rows x cols matrix (last index + 1), or -1 on
// int64 overflow. Assumes rows, cols >= 1 and a valid ld.
std::int64_t span(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t ld) {
  const std::int64_t lines = layout == Layout::kRowMajor ? rows : cols;
  const std::int64_t line_len = layout == Layout::kRowMajor ? cols : rows;
  std::int64_t offset = 0;
  if (__builtin_mul_overflow(lines - 1, ld, &offset) ||
      __builtin_add_overflow(offset, line_len, &offset)) {
    return -1;
  }
  return offset;
}

enum class Overlap { kNo, kYes, kUnknown };

// Whether two of `batch` (>= 2) entries overlap, entry b holding the
// elements b * stride + i * ld + j for i < lines, j < len (1 <= len <= ld,
// stride >= 0). Entries b < b' share an element where (b' - b) * stride =
// p * ld + q with |p| < lines and |q| < len: where a multiple t * stride
// (0 < t < batch) lies within len - 1 of a multiple p * ld (0 <= p < lines).
// The search walks whichever of t and p has fewer values, at most 2^20 of
// them: kUnknown when the walk would be longer and found nothing (both
// counts then exceed 2^20, and disjoint entries would hold over 2^40
// elements).
Overlap batch_entries_overlap(std::int64_t lines, std::int64_t len, std::int64_t ld,
                              std::int64_t stride, std::int64_t batch) {
  __extension__ typedef __int128 Wide;        // holds products of two int64 values
  const Wide reach = len - 1;                 // the largest |q|
  if (stride <= reach) return Overlap::kYes;  // entries 0 and 1 share line 0
  // t * stride can meet a line start p * ld only up to the last line's end,
  // and p * ld meets a multiple of stride only up to the last entry's start.
  const Wide t_last = std::min<Wide>(batch - 1, (Wide{lines - 1} * ld + reach) / stride);
  const Wide p_last = std::min<Wide>(lines - 1, (Wide{batch - 1} * stride + reach) / ld);
  constexpr Wide kMaxSteps = Wide{1} << 20;
  if (t_last <= p_last + 1) {
    for (Wide t = 1; t <= std::min(t_last, kMaxSteps); ++t) {
      // The line starts nearest t * stride: p * ld at or below it, and the next.
      const Wide p = t * stride / ld;
      const Wide q = t * stride % ld;
      if ((q <= reach && p < lines) || (ld - q <= reach && p + 1 < lines)) return Overlap::kYes;
    }
    return t_last > kMaxSteps ? Overlap::kUnknown : Overlap::kNo;
  }
  for (Wide p = 0; p <= std::min(p_last, kMaxSteps - 1); ++p) {
    // A multiple of stride in [p * ld - reach, p * ld + reach] with 0 < t < batch.
    const Wide lo = std::max<Wide>(p * ld - reach, stride);
    const Wide hi = std::min<Wide>(p * ld + reach, Wide{batch - 1} * stride);
    if (lo <= hi && hi / stride * stride >= lo) return Overlap::kYes;
  }
  return p_last + 1 > kMaxSteps ? Overlap::kUnknown : Overlap::kNo;
}

// Checks one operand: dtype, layout, ld, pointer and batch stride. `name` is
// "a", "b" or "c"; the matrix is rows x cols; `needed` says whether the
// pointer is dereferenced for this problem.
template <typename Ref>
Status check_operand(const char* name, const Ref& ref, std::int64_t rows, std::int64_t cols,
                     std::int64_t batch_count, bool needed, bool is_output) {
  const std::string n(name);
  if (!known(ref.dtype)) {
    return invalid(n + ".dtype is not a known DType (value " +
                   std::to_string(static_cast<int>(ref.dtype)) + ")");
  }
  if (!is_output && ref.dtype == DType::kFP32) {
    return invalid(n + ".dtype must be bf16 or fp16 (inputs are half precision)");
  }
  if (!known(ref.layout)) {
    return invalid(n + ".layout is not a known Layout (value " +
                   std::to_string(static_cast<int>(ref.layout)) + ")");
  }
  const std::int64_t min_ld =
      std::max<std::int64_t>(1, ref.layout == Layout::kRowMajor ? cols : rows);
  if (ref.ld < min_ld) {
    return invalid("ld" + n + "=" + std::to_string(ref.ld) + " is smaller than the " +
                   std::to_string(rows) + " x " + std::to_string(cols) + " " +
                   (ref.layout == Layout::kRowMajor ? "row" : "column") + "-major matrix needs (" +
                   std::to_string(min_ld) + ")");
  }
  // A negative batch stride is refused whether or not the operand is read
  // (a quick return reads none), as non-finite alpha and beta are.
  if (batch_count > 1 && ref.stride < 0) {
    return invalid(n + ".stride=" + std::to_string(ref.stride) + " is negative");
  }
  if (!needed) return Status::success();
  if (ref.ptr == nullptr) return invalid(n + " is a null pointer");
  const std::int64_t elem = static_cast<std::int64_t>(size_of(ref.dtype));
  if (reinterpret_cast<std::uintptr_t>(ref.ptr) % static_cast<std::uintptr_t>(elem) != 0) {
    return invalid(n + " is not aligned to its " + std::to_string(elem) + "-byte element");
  }
  const std::int64_t elements = span(rows, cols, ref.layout, ref.ld);
  std::int64_t total = elements;  // elements of all batch entries together
  if (batch_count > 1) {
    // Entries of C must not overlap (inputs may be shared, e.g. stride 0);
    // entries one after another (stride >= span) cannot.
    std::int64_t last_offset = 0;
    const bool offsets_fit = !__builtin_mul_overflow(batch_count - 1, ref.stride, &last_offset);
    if (is_output && elements >= 0 && ref.stride < elements) {
      const bool row_major = ref.layout == Layout::kRowMajor;
      switch (batch_entries_overlap(row_major ? rows : cols, row_major ? cols : rows, ref.ld,
                                    ref.stride, batch_count)) {
        case Overlap::kNo:
          break;
        case Overlap::kYes:
          return invalid("c.stride=" + std::to_string(ref.stride) +
                         " makes batch entries of C overlap (each spans " +
                         std::to_string(elements) + " elements)");
        case Overlap::kUnknown:
          return invalid("c.stride=" + std::to_string(ref.stride) +
                         " interleaves batch entries of C too finely to check that they do not "
                         "overlap (disjoint entries so interleaved would span over 2^40 "
                         "elements)");
      }
    }
    if (!offsets_fit || elements < 0 || __builtin_add_overflow(last_offset, elements, &total)) {
      total = -1;
    }
  }
  // The bytes touched must fit in 64 bits and must not wrap the address space.
  std::int64_t bytes = 0;
  if (elements < 0 || total < 0 || __builtin_mul_overflow(total, elem, &bytes) ||
      reinterpret_cast<std::uintptr_t>(ref.ptr) >
          UINTPTR_MAX - static_cast<std::uintptr_t>(bytes)) {
    return invalid(n + ": the matrix (ld" + n + "=" + std::to_string(ref.ld) +
                   (batch_count > 1 ? ", " + n + ".stride=" + std::to_string(ref.stride) : "") +
                   ") spans more bytes than the address space holds");
  }
  return Status::success();
}

DeviceCaps current_device(Status& status) {
  int device = 0;
  const char* call = "cudaGetDevice";
  cudaError_t err = cudaGetDevice(&device);
  int major = 0;
  int minor = 0;
  if (err == cudaSuccess) {
    call = "cudaDeviceGetAttribute";
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  }
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (err != cudaSuccess) {
    // The failed query set the runtime's last error; clear it, the status
    // reports it (a sticky error stays: it is the context's, not this call's).
    cudaGetLastError();
    if (means_no_device(err)) {
      status = {StatusCode::kArchMismatch,
                std::string("no usable CUDA device: ") + call + ": " + cudaGetErrorString(err)};
    } else {
      status = {StatusCode::kCudaError, std::string(call) + " failed: " + cudaGetErrorString(err)};
    }
    return {};
  }
  return {major * 10 + minor};
}

}  // namespace

Status validate(const GemmArgs& args) {
  if (args.m < 0) return invalid("m=" + std::to_string(args.m) + " is negative");
  if (args.n < 0) return invalid("n=" + std::to_string(args.n) + " is negative");
  if (args.k < 0) return invalid("k=" + std::to_string(args.k) + " is negative");
  if (args.sm_count < 0) {
    return invalid("sm_count=" + std::to_string(args.sm_count) + " is negative");
  }
  if (args.batch_count < 1) {
    return invalid("batch_count=" + std::to_string(args.batch_count) + " must be >= 1");
  }
  if (!std::isfinite(args.alpha)) return invalid("alpha is not finite");
  if (!std::isfinite(args.beta)) return invalid("beta is not finite");

  // BLAS quick returns: with M or N zero nothing is touched; with K zero or
  // alpha zero A and B are not read, and C neither where beta is 1.
  const bool any_output = args.m > 0 && args.n > 0;
  const bool reads_inputs = any_output && args.k > 0 && args.alpha != 0.0f;
  const bool touches_c = reads_inputs || (any_output && args.beta != 1.0f);
  if (Status s = check_operand("a", args.a, args.m, args.k, args.batch_count, reads_inputs, false);
      !s.ok()) {
    return s;
  }
  if (Status s = check_operand("b", args.b, args.k, args.n, args.batch_count, reads_inputs, false);
      !s.ok()) {
    return s;
  }
  if (args.b.dtype != args.a.dtype) {
    return invalid("b.dtype (" + std::string(to_string(args.b.dtype)) + ") differs from a.dtype (" +
                   std::string(to_string(args.a.dtype)) + ")");
  }
  if (Status s = check_operand("c", args.c, args.m, args.n, args.batch_count, touches_c, true);
      !s.ok()) {
    return s;
  }
  // The workspace is checked whatever the problem: it describes the caller's
  // buffer, not this problem's need of it.
  return validate_workspace(args.workspace, args.workspace_bytes);
}

Status validate_workspace(const void* workspace, std::size_t workspace_bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(workspace);
  if (address == 0) {
    if (workspace_bytes == 0) return Status::success();
    return invalid("workspace is a null pointer, but workspace_bytes=" +
                   std::to_string(workspace_bytes));
  }
  if (address % kWorkspaceAlignment != 0) {
    return invalid("workspace is not " + std::to_string(kWorkspaceAlignment) + "-byte aligned");
  }
  if (address > UINTPTR_MAX - workspace_bytes) {
    return invalid("workspace: workspace_bytes=" + std::to_string(workspace_bytes) +
                   " runs past the end of the address space");
  }
  return Status::success();
}

namespace {

// What GemmOptions::batch_invariant runs (src/registry.cpp).
constexpr std::string_view kBatchInvariantKernel = "prod-invariant";

}  // namespace

bool has_work(const GemmArgs& args) {
  return args.m != 0 && args.n != 0 && !((args.k == 0 || args.alpha == 0.0f) && args.beta == 1.0f);
}

Status options_kernel(const GemmOptions& options, const KernelInfo** forced) {
  *forced = nullptr;
  if (options.batch_invariant) {
    if (!options.kernel.empty()) {
      return invalid(
          "options.batch_invariant runs the kernel 'prod-invariant'; options.kernel "
          "must be empty (it is '" +
          std::string(options.kernel) + "')");
    }
    *forced = find_kernel(kBatchInvariantKernel);
  } else if (!options.kernel.empty()) {
    *forced = find_kernel(options.kernel);
    if (*forced == nullptr) {
      return invalid("options.kernel names no registry kernel: '" + std::string(options.kernel) +
                     "'");
    }
  }
  return Status::success();
}

// With `unlimited_workspace`, every kernel is taken to have the workspace it
// needs (workspace_size asks so).
KernelChoice choose_for_call(const GemmArgs& args, const GemmOptions& options,
                             bool unlimited_workspace) {
  if (Status s = validate(args); !s.ok()) return {s};
  const KernelInfo* forced = nullptr;
  if (Status s = options_kernel(options, &forced); !s.ok()) return {s};
  if (!has_work(args)) return {};  // a quick return needs no device

  Status device_status;
  const DeviceCaps device = current_device(device_status);
  if (!device_status.ok()) return {device_status};
  // The library's device code is built for sm_90a only; it runs on 9.0 alone.
  if (device.compute_capability != 90) {
    return {{StatusCode::kArchMismatch,
             "tcgemm kernels are built for sm_90a (Hopper); this device is sm_" +
                 std::to_string(device.compute_capability)}};
  }
  if (args.k == 0 || args.alpha == 0.0f) return {};
  return choose_kernel(registry(), forced, args, device, unlimited_workspace);
}

Status gemm(const GemmArgs& args, const GemmOptions& options) {
  const KernelChoice choice = choose_for_call(args, options, /*unlimited_workspace=*/false);
  if (!choice.status.ok()) return choice.status;
  if (choice.kernel != nullptr) return choice.kernel->launch(args);
  // No GEMM kernel: a quick return, or K == 0 or alpha == 0 with beta != 1,
  // which sets C = beta * C.
  if (!has_work(args)) return Status::success();
  return kernels::launch_scale_c(args);
}

Description describe(const GemmArgs& args, const GemmOptions& options) {
  const KernelChoice choice = choose_for_call(args, options, /*unlimited_workspace=*/false);
  Description d;
  d.status = choice.status;
  if (!choice.status.ok()) return d;
  if (choice.kernel == nullptr) {
    d.config = !has_work(args) ? "no kernel: nothing to compute (BLAS quick return)"
                               : "no GEMM kernel: C = beta * C (K or alpha is 0)";
    return d;
  }
  if (choice.kernel->limits != nullptr) {
    // What the launch would refuse (gemm returns it from the launch, before
    // anything is enqueued).
    if (Status s = choice.kernel->limits(args); !s.ok()) {
      d.status = s;
      return d;
    }
  }
  d.kernel = std::string(choice.kernel->name);
  d.config = choice.kernel->describe_config != nullptr ? choice.kernel->describe_config(args)
                                                       : std::string(choice.kernel->description);
  return d;
}

std::size_t workspace_size(const GemmArgs& args, const GemmOptions& options) {
  const KernelChoice choice = choose_for_call(args, options, /*unlimited_workspace=*/true);
  if (!choice.status.ok() || choice.kernel == nullptr ||
      choice.kernel->workspace_bytes == nullptr) {
    return 0;
  }
  return choice.kernel->workspace_bytes(args);
}

}  // namespace tcgemm
