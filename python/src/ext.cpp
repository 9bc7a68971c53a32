// tcgemm._C: the nanobind extension under the tcgemm Python package.
//
// Deliberately thin: the Python layer (python/tcgemm/_matmul.py) turns
// tensors into a tcgemm problem (shapes, strides -> layouts and leading
// dimensions, batch strides, dtypes, stream, device) and maps a Status to an
// exception naming the argument. This file only
// - runs tcgemm::gemm / validate / describe / workspace_size on such a
//   problem, given as plain integers, on the tensors' device;
// - reads a DLPack tensor (nb::ndarray: any producer, zero copy) into
//   (pointer, dtype, shape, strides, device);
// - allocates device memory and exports it through DLPack, for frameworks
//   that cannot allocate an output themselves (JAX, unknown ones);
// - makes one stream wait for another (the DLPack stream handshake);
// - keeps tcgemm::GemmPlans for the per-call path of torch code (a problem
//   seen before runs with new pointers at the least host cost);
// - lists the kernel registry.
// Every function reports errors as values or Python exceptions; nothing here
// aborts the interpreter.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <tcgemm/gemm_plan.h>
#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_errors.h"  // src/: how a failed device query is classed

namespace nb = nanobind;

namespace {

// DLPack dtype codes (dlpack.h's DLDataTypeCode).
constexpr std::uint8_t kDLFloat = 2;
constexpr std::uint8_t kDLBfloat = 4;
// DLPack device type of plain CUDA device memory.
constexpr int kDLCUDA = 2;

// A problem as the Python layer hands it over: every field of GemmArgs, as
// integers, in declaration order.
struct Problem {
  std::int64_t m, n, k;
  std::uintptr_t a_ptr;
  int a_layout;
  std::int64_t lda, stride_a;
  std::uintptr_t b_ptr;
  int b_layout;
  std::int64_t ldb, stride_b;
  std::uintptr_t c_ptr;
  int c_layout;
  std::int64_t ldc, stride_c;
  int in_dtype, out_dtype;
  double alpha, beta;  // Python floats; tcgemm computes in fp32
  std::int64_t batch;
  std::uintptr_t stream;
};

// A double as the fp32 scalar tcgemm takes; one beyond fp32's range becomes
// an infinity (which validate() refuses, naming it) rather than undefined.
float to_f32(double d) {
  if (d > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  if (d < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(d);
}

tcgemm::GemmArgs to_args(const Problem& p) {
  tcgemm::GemmArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  // Member by member, so a field added to the public structs keeps its default.
  const auto in = static_cast<tcgemm::DType>(p.in_dtype);
  args.a.ptr = reinterpret_cast<const void*>(p.a_ptr);
  args.a.dtype = in;
  args.a.layout = static_cast<tcgemm::Layout>(p.a_layout);
  args.a.ld = p.lda;
  args.a.stride = p.stride_a;
  args.b.ptr = reinterpret_cast<const void*>(p.b_ptr);
  args.b.dtype = in;
  args.b.layout = static_cast<tcgemm::Layout>(p.b_layout);
  args.b.ld = p.ldb;
  args.b.stride = p.stride_b;
  args.c.ptr = reinterpret_cast<void*>(p.c_ptr);
  args.c.dtype = static_cast<tcgemm::DType>(p.out_dtype);
  args.c.layout = static_cast<tcgemm::Layout>(p.c_layout);
  args.c.ld = p.ldc;
  args.c.stride = p.stride_c;
  args.alpha = to_f32(p.alpha);
  args.beta = to_f32(p.beta);
  args.batch_count = p.batch;
  args.stream = reinterpret_cast<cudaStream_t>(p.stream);
  return args;
}

using StatusTuple = std::optional<std::tuple<int, std::string>>;

StatusTuple to_tuple(const tcgemm::Status& s) {
  if (s.ok()) return std::nullopt;
  return std::make_tuple(static_cast<int>(s.code), s.message);
}

tcgemm::Status cuda_status(cudaError_t err, const char* call) {
  cudaGetLastError();  // a failed call must not poison the caller's next one
  return {tcgemm::StatusCode::kCudaError, std::string(call) + ": " + cudaGetErrorString(err)};
}

// Makes `device` current for the scope and restores the caller's device,
// as the CUDA calls below act on the current device. A device of -1 leaves
// the current one alone.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0) return;
    if (cudaError_t err = cudaGetDevice(&previous_); err != cudaSuccess) {
      fail(device, err, "cudaGetDevice");
      return;
    }
    if (previous_ == device) return;
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) {
      fail(device, err, "cudaSetDevice");
      return;
    }
    switched_ = true;
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  // Why the device cannot be used: kArchMismatch where the error means
  // there is no usable device, else kCudaError (tcgemm::means_no_device, as
  // tcgemm::gemm classes its own device query).
  const tcgemm::Status& status() const { return status_; }

 private:
  void fail(int device, cudaError_t err, const char* call) {
    const tcgemm::Status s = cuda_status(err, call);
    status_ = {tcgemm::means_no_device(err) ? tcgemm::StatusCode::kArchMismatch : s.code,
               "cannot use CUDA device " + std::to_string(device) + ": " + s.message};
  }

  int previous_ = 0;
  bool switched_ = false;
  tcgemm::Status status_;
};

tcgemm::GemmOptions options_for(const std::string& kernel) {
  tcgemm::GemmOptions options;
  options.kernel = kernel;
  return options;
}

// The workspace run_gemm gives a call for a kernel named in options that
// must have one (ladder step 15): its workspace_size, else 0 (the
// production family allocates its own scratch when it is not given any).
std::size_t call_workspace_bytes(const tcgemm::GemmArgs& args, const std::string& kernel) {
  if (kernel.empty()) return 0;
  const tcgemm::KernelInfo* info = tcgemm::find_kernel(kernel);
  if (info == nullptr || info->workspace_optional) return 0;
  return tcgemm::workspace_size(args, options_for(kernel));
}

tcgemm::Status run_gemm(const Problem& p, int device, const std::string& kernel) {
  nb::gil_scoped_release release;
  tcgemm::GemmArgs args = to_args(p);
  const tcgemm::GemmOptions options = options_for(kernel);
  // Nothing to run (tcgemm::has_work): gemm answers after its argument
  // checks without a device, so none is switched to either.
  if (!tcgemm::has_work(args)) return tcgemm::gemm(args, options);
  DeviceScope scope(device);
  if (!scope.status().ok()) return scope.status();
  // A kernel named in options that needs a workspace (ladder step 15) gets
  // one for this call, stream-ordered, as the production family allocates its
  // repack scratch: zeroed (its flags must start zero), freed after the launch.
  if (const std::size_t bytes = call_workspace_bytes(args, kernel); bytes > 0) {
    void* workspace = nullptr;
    if (cudaError_t err = cudaMallocAsync(&workspace, bytes, args.stream); err != cudaSuccess) {
      return cuda_status(err, "cudaMallocAsync (workspace)");
    }
    args.workspace = workspace;
    args.workspace_bytes = bytes;
    tcgemm::Status s;
    if (cudaError_t err = cudaMemsetAsync(workspace, 0, bytes, args.stream); err != cudaSuccess) {
      s = cuda_status(err, "cudaMemsetAsync (workspace)");
    } else {
      s = tcgemm::gemm(args, options);
    }
    cudaFreeAsync(workspace, args.stream);
    return s;
  }
  return tcgemm::gemm(args, options);
}

// (data pointer, dtype name, shape, strides in elements, device type, device
// id) of any DLPack tensor or capsule; None when `obj` exports none.
// Strides of a tensor exported without them (C-contiguous) are filled in.
using TensorInfo = std::tuple<std::uintptr_t, std::string, std::vector<std::int64_t>,
                              std::vector<std::int64_t>, int, int>;

std::string dtype_name(nb::dlpack::dtype d) {
  if (d.lanes == 1 && d.code == kDLBfloat && d.bits == 16) return "bf16";
  if (d.lanes == 1 && d.code == kDLFloat && d.bits == 16) return "fp16";
  if (d.lanes == 1 && d.code == kDLFloat && d.bits == 32) return "fp32";
  // Named as DLPack would, for error messages.
  static const char* const kCodes[] = {"int",    "uint",    "float", "opaque",
                                       "bfloat", "complex", "bool"};
  const std::string code = d.code < sizeof(kCodes) / sizeof(kCodes[0])
                               ? kCodes[d.code]
                               : "code" + std::to_string(d.code);
  return code + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

template <typename Array>
TensorInfo info_of(const Array& a) {
  const std::size_t ndim = a.ndim();
  std::vector<std::int64_t> shape(ndim);
  std::vector<std::int64_t> strides(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    shape[i] = static_cast<std::int64_t>(a.shape(i));
    strides[i] = static_cast<std::int64_t>(a.stride(i));
  }
  return {reinterpret_cast<std::uintptr_t>(a.data()),
          dtype_name(a.dtype()),
          std::move(shape),
          std::move(strides),
          static_cast<int>(a.device_type()),
          static_cast<int>(a.device_id())};
}

// `writable`: refuse a tensor its producer marks read-only (DLPack 1.0's
// flag; a JAX array, say), as an output must be.
std::optional<TensorInfo> inspect(nb::handle obj, bool writable) {
  if (writable) {
    nb::ndarray<> array;
    if (!nb::try_cast(obj, array)) return std::nullopt;
    return info_of(array);
  }
  nb::ndarray<nb::ro> array;
  if (!nb::try_cast(obj, array)) return std::nullopt;
  return info_of(array);
}

// Device memory of `bytes`, exported through DLPack as a tensor of `shape`
// (C-contiguous) and `dtype` (bf16 / fp16 / fp32 as tcgemm::DType) on CUDA
// device `device`, with its address; or (None, 0, status) when the device
// cannot be used (kArchMismatch, as run_gemm reports it) or the allocation
// fails (kCudaError). cudaMalloc, not stream-ordered: whoever ends up owning
// it may free it from any stream; cudaFree waits for work using it.
std::tuple<nb::object, std::uintptr_t, StatusTuple> empty(const std::vector<std::int64_t>& shape,
                                                          int dtype, int device) {
  std::size_t elements = 1;
  std::vector<std::size_t> dims;
  for (std::int64_t s : shape) {
    if (s < 0) throw nb::value_error("tcgemm: negative dimension");
    dims.push_back(static_cast<std::size_t>(s));
    elements *= static_cast<std::size_t>(s);
  }
  const auto d = static_cast<tcgemm::DType>(dtype);
  const std::size_t bytes = std::max<std::size_t>(1, elements) * tcgemm::size_of(d);
  void* ptr = nullptr;
  {
    DeviceScope scope(device);
    if (!scope.status().ok()) return {nb::none(), 0, to_tuple(scope.status())};
    if (cudaError_t err = cudaMalloc(&ptr, bytes); err != cudaSuccess) {
      const tcgemm::Status s = cuda_status(err, "cudaMalloc");
      return {nb::none(), 0,
              to_tuple({s.code, "allocating the " + std::to_string(bytes) +
                                    "-byte result failed: " + s.message})};
    }
  }
  nb::capsule owner(ptr, [](void* p) noexcept { cudaFree(p); });
  const nb::dlpack::dtype dl = d == tcgemm::DType::kBF16   ? nb::dlpack::dtype{kDLBfloat, 16, 1}
                               : d == tcgemm::DType::kFP16 ? nb::dlpack::dtype{kDLFloat, 16, 1}
                                                           : nb::dlpack::dtype{kDLFloat, 32, 1};
  nb::ndarray<> array(ptr, dims.size(), dims.data(), owner, nullptr, dl, kDLCUDA, device);
  return {nb::cast(array), reinterpret_cast<std::uintptr_t>(ptr), std::nullopt};
}

// Makes `consumer` wait for the work enqueued so far on `producer` (an event
// recorded there), on device `device`: what a DLPack producer does when a
// consumer hands it its stream.
void stream_wait(std::uintptr_t consumer, std::uintptr_t producer, int device) {
  if (consumer == producer) return;
  nb::gil_scoped_release release;
  DeviceScope scope(device);
  if (!scope.status().ok()) throw std::runtime_error("tcgemm: " + scope.status().message);
  cudaEvent_t event = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
  if (err == cudaSuccess)
    err = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), event, 0);
  if (event != nullptr) cudaEventDestroy(event);  // released once the wait is done
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("tcgemm: stream handshake failed: ") +
                             cudaGetErrorString(err));
  }
}

void synchronize(std::uintptr_t stream, int device) {
  nb::gil_scoped_release release;
  DeviceScope scope(device);
  if (!scope.status().ok()) throw std::runtime_error("tcgemm: " + scope.status().message);
  if (cudaError_t err = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
      err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("tcgemm: cudaStreamSynchronize: ") +
                             cudaGetErrorString(err));
  }
}

// A tcgemm::GemmPlan and the device it was made on: the Python layer keeps
// one per problem key (shapes, strides, dtypes, alignment, device, stream)
// and runs it with each call's pointers. run() only enqueues.
class Plan {
 public:
  Plan(tcgemm::GemmPlan plan, int device) : plan_(std::move(plan)), device_(device) {}

  StatusTuple run(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, double alpha, double beta,
                  std::uintptr_t stream) const {
    nb::gil_scoped_release release;
    DeviceScope scope(device_);
    if (!scope.status().ok()) return to_tuple(scope.status());
    return to_tuple(plan_.run(reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b),
                              reinterpret_cast<void*>(c), to_f32(alpha), to_f32(beta),
                              reinterpret_cast<cudaStream_t>(stream)));
  }

  std::string kernel() const { return plan_.description().kernel; }

 private:
  tcgemm::GemmPlan plan_;
  int device_;
};

// A Plan for the problem, or None: when tcgemm::GemmPlan::create refuses it
// (a kernel it does not plan, an error gemm() would report too) or the
// stream is being captured into a CUDA graph (create() may allocate and
// clear its workspace, which a capture must not hold). The caller then
// calls gemm().
std::optional<Plan> plan_create(const Problem& p, int device) {
  nb::gil_scoped_release release;
  DeviceScope scope(device);
  if (!scope.status().ok()) return std::nullopt;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(p.stream), &capture) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  if (capture != cudaStreamCaptureStatusNone) return std::nullopt;
  tcgemm::GemmPlan plan;
  if (!tcgemm::GemmPlan::create(to_args(p), tcgemm::GemmOptions{}, &plan).ok()) {
    return std::nullopt;
  }
  return Plan(std::move(plan), device);
}

nb::list kernels() {
  nb::list out;
  for (const tcgemm::KernelInfo& k : tcgemm::registry()) {
    nb::dict d;
    d["name"] = std::string(k.name);
    d["description"] = std::string(k.description);
    d["constraints"] = tcgemm::describe(k.constraints);
    d["dispatch_rank"] = k.dispatch_rank;
    d["needs_workspace"] = k.workspace_bytes != nullptr && !k.workspace_optional;
    out.append(d);
  }
  return out;
}

// The Problem fields as Python positional arguments, then the extras.
#define TCGEMM_PROBLEM_PARAMS                                                             \
  std::int64_t m, std::int64_t n, std::int64_t k, std::uintptr_t a_ptr, int a_layout,     \
      std::int64_t lda, std::int64_t stride_a, std::uintptr_t b_ptr, int b_layout,        \
      std::int64_t ldb, std::int64_t stride_b, std::uintptr_t c_ptr, int c_layout,        \
      std::int64_t ldc, std::int64_t stride_c, int in_dtype, int out_dtype, double alpha, \
      double beta, std::int64_t batch, std::uintptr_t stream
#define TCGEMM_PROBLEM_ARGS                                                                        \
  Problem {                                                                                        \
    m, n, k, a_ptr, a_layout, lda, stride_a, b_ptr, b_layout, ldb, stride_b, c_ptr, c_layout, ldc, \
        stride_c, in_dtype, out_dtype, alpha, beta, batch, stream                                  \
  }

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "tcgemm's C++ core (use the tcgemm package, not this module)";

  m.def(
      "gemm",
      [](TCGEMM_PROBLEM_PARAMS, int device, const std::string& kernel) {
        return to_tuple(run_gemm(TCGEMM_PROBLEM_ARGS, device, kernel));
      },
      "tcgemm::gemm on the problem; None on success, else (StatusCode, message).");
  m.def(
      "validate",
      [](TCGEMM_PROBLEM_PARAMS) {
        return to_tuple(tcgemm::validate(to_args(TCGEMM_PROBLEM_ARGS)));
      },
      "tcgemm::validate (no device access); None when valid, else (StatusCode, message).");
  m.def(
      "has_work",
      [](TCGEMM_PROBLEM_PARAMS) { return tcgemm::has_work(to_args(TCGEMM_PROBLEM_ARGS)); },
      "tcgemm::has_work: whether gemm enqueues anything for the problem (needs a device).");
  m.def(
      "describe",
      [](TCGEMM_PROBLEM_PARAMS, int device, const std::string& kernel) {
        if (const tcgemm::GemmArgs args = to_args(TCGEMM_PROBLEM_ARGS); !tcgemm::has_work(args)) {
          const tcgemm::Description d = tcgemm::describe(args, options_for(kernel));
          return std::make_tuple(static_cast<int>(d.status.code), d.status.message, d.kernel,
                                 d.config);
        }
        DeviceScope scope(device);
        tcgemm::Description d;
        if (!scope.status().ok()) {
          d.status = scope.status();
        } else {
          // As run_gemm would call it: with the workspace it gives a named
          // kernel that must have one (a stand-in address, never touched).
          tcgemm::GemmArgs args = to_args(TCGEMM_PROBLEM_ARGS);
          if (const std::size_t bytes = call_workspace_bytes(args, kernel); bytes > 0) {
            args.workspace = reinterpret_cast<void*>(std::uintptr_t{1} << 40);
            args.workspace_bytes = bytes;
          }
          d = tcgemm::describe(args, options_for(kernel));
        }
        return std::make_tuple(static_cast<int>(d.status.code), d.status.message, d.kernel,
                               d.config);
      },
      "tcgemm::describe: (StatusCode, message, kernel, config).");
  m.def(
      "workspace_size",
      [](TCGEMM_PROBLEM_PARAMS, int device, const std::string& kernel) -> std::size_t {
        DeviceScope scope(device);
        if (!scope.status().ok()) return 0;
        return tcgemm::workspace_size(to_args(TCGEMM_PROBLEM_ARGS), options_for(kernel));
      },
      "tcgemm::workspace_size in bytes.");
  nb::class_<Plan>(m, "Plan")
      .def("run", &Plan::run, "(a, b, c, alpha, beta, stream): None, or (StatusCode, message).")
      .def_prop_ro("kernel", &Plan::kernel);
  m.def(
      "plan_create",
      [](TCGEMM_PROBLEM_PARAMS, int device) { return plan_create(TCGEMM_PROBLEM_ARGS, device); },
      "A Plan for the problem (tcgemm::GemmPlan), or None where none is made.");
  m.def("inspect", &inspect, nb::arg("obj"), nb::arg("writable") = false,
        "(ptr, dtype, shape, strides, device_type, device_id) of a DLPack tensor, or None.");
  m.def("empty", &empty, nb::arg("shape"), nb::arg("dtype"), nb::arg("device"),
        "(array, pointer, None): C-contiguous CUDA memory exported through DLPack "
        "(cudaMalloc/cudaFree); (None, 0, (code, message)) when the device cannot be used or the "
        "allocation fails.");
  m.def("stream_wait", &stream_wait, nb::arg("consumer"), nb::arg("producer"), nb::arg("device"),
        "Make `consumer` wait for the work enqueued on `producer` so far.");
  m.def("synchronize", &synchronize, nb::arg("stream"), nb::arg("device"),
        "cudaStreamSynchronize on device `device`.");
  m.def("kernels", &kernels, "The kernel registry: a list of dicts.");
  m.def(
      "device_count",
      []() {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
          cudaGetLastError();
          return 0;
        }
        return count;
      },
      "CUDA devices visible to the CUDA runtime (0 without a driver or GPU).");
  m.def(
      "device_name",
      [](int device) -> std::string {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
          cudaGetLastError();
          return "";
        }
        return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
               std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
               " SMs, L2 " + std::to_string(prop.l2CacheSize) + " bytes)";
      },
      "A one-line description of CUDA device `device`; empty when there is none.");
  m.def(
      "l2_bytes",
      [](int device) -> std::int64_t {
        int bytes = 0;
        if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
          cudaGetLastError();
          return 0;
        }
        return bytes;
      },
      "The L2 cache size of device `device` in bytes (0 when unknown).");
  m.attr("STATUS_SUCCESS") = static_cast<int>(tcgemm::StatusCode::kSuccess);
  m.attr("STATUS_INVALID_VALUE") = static_cast<int>(tcgemm::StatusCode::kInvalidValue);
  m.attr("STATUS_NOT_SUPPORTED") = static_cast<int>(tcgemm::StatusCode::kNotSupported);
  m.attr("STATUS_ARCH_MISMATCH") = static_cast<int>(tcgemm::StatusCode::kArchMismatch);
  m.attr("STATUS_CUDA_ERROR") = static_cast<int>(tcgemm::StatusCode::kCudaError);
}
