// tcgemm public API: one GEMM call shaped like cublasGemmEx.
//
//   C = alpha * A * B + beta * C
//
// A is M x K, B is K x N, C is M x N (logical shapes). Each matrix is stored
// row- or column-major with a leading dimension, exactly as in BLAS:
//   row-major    element (i, j) at ptr[i * ld + j], ld >= max(1, cols)
//   column-major element (i, j) at ptr[i + j * ld], ld >= max(1, rows)
// In cuBLAS terms (everything column-major), a row-major A is op(A) = T.
// The worklog's "TN" problem is A row-major, B column-major, C column-major.
//
// Inputs A and B are bf16 or fp16 (both the same); C is bf16, fp16 or fp32.
// Accumulation is always fp32. alpha and beta are fp32; when beta == 0, C is
// not read (NaN or garbage in C does not propagate), as in BLAS.
//
// The call is asynchronous: it enqueues work on `stream` and never
// synchronizes the device. It is thread-safe: its only shared state is
// initialized once or guarded by a lock (the driver's tensor-map entry
// points, a per-device cache of SM count and limits, the device names the
// tuned table is looked up by). Every error tcgemm decides itself
// (kInvalidValue, kNotSupported, kArchMismatch) is found before anything is
// enqueued: nothing runs and C is untouched. kCudaError reports a CUDA call
// that failed part way through (an allocation, a launch); what was enqueued
// before it (a scratch allocation, an operand repack, the first of a split
// GEMM's kernels, earlier batch chunks of C = beta * C) may still run, so C
// may be partly written, as after CUBLAS_STATUS_EXECUTION_FAILED.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tcgemm {

enum class DType : int { kBF16 = 0, kFP16 = 1, kFP32 = 2 };
enum class Layout : int { kRowMajor = 0, kColMajor = 1 };

enum class StatusCode : int {
  kSuccess = 0,
  kInvalidValue,  // an argument is wrong (names the argument)
  kNotSupported,  // valid problem no kernel implements yet (names what is missing)
  kArchMismatch,  // no device, or the device lacks what the kernels need (sm_90a)
  kCudaError,     // a CUDA runtime / driver call failed (names the call)
};

// Result of every API call: a code and a human-readable message.
struct Status {
  StatusCode code = StatusCode::kSuccess;
  std::string message;

  bool ok() const { return code == StatusCode::kSuccess; }
  static Status success() { return {}; }
};

std::string_view to_string(StatusCode code);
std::string_view to_string(DType dtype);    // "bf16", "fp16", "fp32"
std::string_view to_string(Layout layout);  // "row", "col"
std::size_t size_of(DType dtype);           // bytes per element

// One matrix operand: pointer, dtype, storage order and leading dimension (in
// elements). `stride` is the distance in elements between consecutive batch
// entries, at least 0 (a negative one is kInvalidValue, even where the
// operand is not read); it is ignored when batch_count == 1. A and B entries
// may overlap (stride 0 shares one matrix); C entries must not share an
// element, but may interleave (entries side by side in each line of ldc, or
// starting inside one another's gaps): validate() checks exactly which
// elements meet.
struct MatrixRef {
  const void* ptr = nullptr;
  DType dtype = DType::kBF16;
  Layout layout = Layout::kRowMajor;
  std::int64_t ld = 0;
  std::int64_t stride = 0;
};

struct MutableMatrixRef {
  void* ptr = nullptr;
  DType dtype = DType::kBF16;
  Layout layout = Layout::kColMajor;
  std::int64_t ld = 0;
  std::int64_t stride = 0;
};

// The alignment validate() asks of a non-null GemmArgs::workspace, in bytes
// (what cudaMalloc returns).
inline constexpr std::size_t kWorkspaceAlignment = 256;

// A full GEMM problem. Sizes are 64-bit; batch_count >= 1.
struct GemmArgs {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  MatrixRef a;         // M x K
  MatrixRef b;         // K x N
  // M x N, read when beta != 0, always written. C must not overlap A, B or
  // the workspace (as in cuBLAS, no in-place product: the results are then
  // undefined; validate() does not look for it). Its batch entries must not
  // overlap each other (validate() checks that).
  MutableMatrixRef c;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::int64_t batch_count = 1;
  cudaStream_t stream = nullptr;
  // Device memory the kernel may use as scratch (the production family's
  // aligned copies of operands TMA cannot address and a K split's partial
  // sums and tile flags; a stream-K kernel's partial sums and flags);
  // kernels that need none ignore it. Size it with
  // tcgemm::workspace_size. Contract, as for cuBLAS's workspace:
  // - zero-fill it (cudaMemset 0) once before its first use; every tcgemm
  //   kernel leaves the bytes it needs zero (flags) zero again when it
  //   finishes, the rest being scratch, so later calls on the same stream
  //   reuse it without zeroing it again;
  // - two calls that may run concurrently (on different streams) must not
  //   share one workspace;
  // - a non-null workspace is kWorkspaceAlignment (256)-byte aligned, and
  //   workspace_bytes > 0 needs a non-null workspace.
  // Calling gemm without a workspace (or a smaller one) is always allowed:
  // the production family then allocates what it needs with cudaMallocAsync
  // on `stream` and frees it after the launch (still asynchronous; a
  // workspace avoids the allocation). A ladder kernel named in GemmOptions
  // that needs one is kNotSupported without it.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // The most SMs the GEMM kernel may keep busy at once, 0 for all the
  // device has (cuBLASLt's CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), leaving
  // the other SMs to kernels that run beside it, e.g. NCCL's
  // (tcgemm/dist.h). Below the device's SM count, the production family
  // launches at most that many CTAs, one per SM (its persistent kernels in
  // whole clusters, at least one; the small-M path's blocks looping over
  // its work), chooses its config and split as for a device of that many
  // SMs, and does not consult the tuned table (timed on the whole device).
  // The short kernels around a GEMM (repacks of unaligned operands, a
  // second-kernel split reduction, the K == 0 scaling of C) are not capped.
  // At or above the device's count it changes nothing. Ladder kernels
  // named in GemmOptions ignore it. >= 0.
  // The CTAs of a persistent kernel wait on each other (a K split reduced
  // in place, a stream-K last round) and so need to be resident together:
  // beside a kernel that keeps SMs until something after the GEMM happens
  // (a persistent communication kernel), give the GEMM a budget that leaves
  // that kernel its SMs.
  int sm_count = 0;
};

// Options that do not change the mathematical result.
struct GemmOptions {
  // Run exactly this registry kernel (see tcgemm::registry()); empty means let
  // the dispatcher choose. A named kernel that cannot run the problem returns
  // kNotSupported with its reason. The BLAS quick returns (M or N == 0; K == 0
  // or alpha == 0, which only scale C) run no GEMM kernel, so they succeed
  // whatever registry kernel is named (a name the registry does not hold is
  // kInvalidValue).
  std::string_view kernel;
  // Batch-invariant results: row i of C has the same bits whatever M is
  // (given the same row of A, the same B, K and dtypes), the property an
  // inference server needs when it batches requests. The production family
  // then never splits K and picks its config without looking at M (registry
  // kernel "prod-invariant"); small-M problems get slower. Cannot be combined
  // with a named kernel (kInvalidValue).
  bool batch_invariant = false;
};

// Checks the arguments only (no device access): kInvalidValue naming the first
// bad argument, or kSuccess. A pointer is checked (non-null, aligned to its
// element) only when the problem dereferences it. Host-testable.
Status validate(const GemmArgs& args);

// Whether gemm(args) has anything to enqueue, and so needs a device: false
// for the BLAS quick returns described below (M or N == 0; K or alpha == 0
// with beta == 1), true otherwise. Reads the sizes and scalars only; it
// does not validate. Host-testable.
bool has_work(const GemmArgs& args);

// C = alpha * A * B + beta * C on args.stream. Every problem validate()
// accepts runs on an sm_90 device, on the production family unless
// options.kernel names another.
// Errors: kInvalidValue (bad argument, named), kNotSupported (where there is
// a product to compute, M, N or K over 2^31 - 257 or batch_count over
// 2^31 - 1, past 32-bit TMA coordinates; the quick returns below have no
// such limit;
// aligned copies of misaligned operands that would need over 2^62 bytes, or
// whose batch entries would lie 2^40 bytes or more apart; or
// a named kernel that cannot run the problem, with its reason),
// kArchMismatch (no sm_90 device), kCudaError (launch, allocation or driver
// failure).
// Degenerate cases follow BLAS: M == 0 or N == 0 does nothing (pointers may
// be null, no device is needed); K == 0 or alpha == 0 sets C = beta * C
// without reading A or B (nothing at all when beta == 1: then C's pointer is
// neither read nor checked, may be null, and no device is needed). Non-finite alpha or
// beta is kInvalidValue. Leading dimensions are checked even for empty
// matrices (ld >= max(1, rows or cols)), as cuBLAS does.
// Stream order holds as for any kernel. The production family's tile
// kernels, repacks and split reductions are launched as programmatic
// dependents (each waits for the kernel before it on `stream` before
// touching memory), and its kernels let the next kernel on `stream` be
// scheduled early: a caller's kernel launched right after with programmatic
// stream serialization must call cudaGridDependencySynchronize() before it
// reads C, as CUDA requires.
Status gemm(const GemmArgs& args, const GemmOptions& options = {});

// What gemm(args, options) would run, without running it: the registry kernel
// and, for the production family, its full configuration (tile shape, stages,
// consumers, cluster and multicast, operand major-ness after the C^T = B^T A^T
// swap, epilogue, how each operand is fed). `status` is what gemm would return
// before launching (kInvalidValue, kArchMismatch, kNotSupported); on success,
// `kernel` is the registry name ("" for the BLAS quick returns, which run no
// GEMM kernel: then `config` says which) and `config` one line of text.
// Reads the current device; does not synchronize it or enqueue anything.
struct Description {
  Status status;
  std::string kernel;
  std::string config;
};
Description describe(const GemmArgs& args, const GemmOptions& options = {});

// Bytes of workspace (GemmArgs::workspace) that the kernel gemm(args, options)
// would run needs. The kernel is picked exactly as gemm picks it, except that
// the workspace args gives (args.workspace, args.workspace_bytes) is taken to
// be unlimited: the answer is for the kernel gemm runs once it has that much.
// 0 when that kernel needs none, when the problem runs no GEMM kernel (M, N,
// K or alpha is 0) and on any error gemm would return (bad arguments, no
// sm_90 device, no kernel for the problem). For the production family it is
// 260 KiB of flags (4 KiB it leaves untouched, 256 KiB of K-split and
// stream-K flags) plus its scratch (the aligned copies of operands TMA cannot
// address, the fp32 partial sums of a K split or of a stream-K last round:
// a BM x BN tile per CTA, 17.3 MB for 128 x 256 tiles on 132 SMs), or 0 when
// it needs none: with it, gemm allocates nothing.
// Reads the current device; does not synchronize it.
std::size_t workspace_size(const GemmArgs& args, const GemmOptions& options = {});

}  // namespace tcgemm
