// tcgemm::GemmPlan: a GEMM planned once (kernel, config, tensor maps,
// workspace) and run many times with new pointers at the least host cost.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <memory>

namespace tcgemm {

// A GEMM planned once and run many times, in the spirit of cuBLASLt's
// matmul descriptors and CUTLASS's can_implement / initialize / run: create()
// does everything gemm() does before it enqueues (validation, the kernel and
// config choice, device queries, tensor-map encoding, workspace sizing);
// run() then takes new pointers and scalars and only enqueues.
//
//   tcgemm::GemmPlan plan;
//   tcgemm::Status s = tcgemm::GemmPlan::create(args, {}, &plan);  // once
//   s = plan.run(a, b, c, 1.0f, 0.0f, stream);                     // per call
//
// run() makes no allocation, no synchronization and no device or driver
// query, so it may be captured in a CUDA graph. The plan remembers
// everything about the problem except the data: M, N, K, batch count,
// dtypes, layouts, leading dimensions and batch strides are fixed, and the
// pointers given to run() must keep the alignment class of those in the
// args the plan was made with (16-byte aligned where those were; otherwise
// element-aligned), else run() returns kInvalidValue and enqueues nothing.
// A plan whose kernel needs scratch (workspace_size() > 0) owns a zeroed
// workspace of that size, allocated and zeroed by create() (which waits
// for the zeroing: it synchronizes the legacy default stream); run() uses
// the caller's workspace instead when one of at least workspace_size()
// bytes is given. A CUDA graph that captured a run() on the plan's own
// workspace uses it by address: keep the plan alive (not destroyed,
// assigned over or re-created) while such a graph may still be launched.
// Runs of one plan on different streams that may overlap need a workspace
// each. A plan is movable (the moved-from plan is empty), not copyable;
// destroying it frees its workspace (cudaFree: synchronizes the device).
class GemmPlan {
 public:
  GemmPlan();
  ~GemmPlan();
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  // Plans args (its pointers are read for their alignment only; alpha,
  // stream and workspace are ignored, and beta but for whether it is zero:
  // run() takes them). A plan is made for the product whatever alpha is, so
  // args.a, args.b and args.c must be valid as for a nonzero alpha (non-null,
  // element-aligned), even where gemm(args) with alpha == 0 would not read
  // them. The kernel and config are those gemm(args, options) and
  // describe(args, options) choose for a nonzero alpha; a run with a beta of
  // the other kind (zero or not) is as correct, on a choice made for the
  // planned one. The plan belongs to the CUDA device current at create(): its
  // tensor maps and workspace live there, and run() must be called with that
  // device current and a stream of it (run() does not query the device).
  // Errors: those gemm(args, options) would return with a nonzero alpha
  // and a beta other than 1, since run() takes both (kInvalidValue for a
  // null A or B included; and kArchMismatch without an sm_90 device even
  // where K is 0, as a run may scale C); kNotSupported for
  // options.kernel naming a kernel outside the production family (a ladder
  // step runs through gemm() only) where the problem has a product to
  // compute (M, N, K >= 1: a BLAS quick return plans no kernel, as gemm()
  // runs none); kCudaError when the owned workspace cannot be allocated. On
  // error *plan is left empty.
  static Status create(const GemmArgs& args, const GemmOptions& options, GemmPlan* plan);

  // C = alpha * A * B + beta * C on `stream` with the planned problem.
  // kInvalidValue (naming the argument), nothing enqueued, for a null or
  // misaligned pointer, non-finite alpha or beta, a workspace gemm() would
  // refuse (null with workspace_bytes > 0, or not 256-byte aligned, whether
  // or not the plan needs one), a workspace smaller than workspace_size()
  // when the plan needs one, or an empty plan; kCudaError when a launch
  // fails (as for gemm(): what was enqueued before it may still run).
  Status run(const void* a, const void* b, void* c, float alpha, float beta,
             cudaStream_t stream = nullptr, void* workspace = nullptr,
             std::size_t workspace_bytes = 0) const;

  // Whether the plan holds no problem: default-constructed, moved from, or
  // left so by a failed create(). run() on an empty plan is kInvalidValue.
  bool empty() const;
  // Bytes of scratch the planned kernel uses (0: none).
  std::size_t workspace_size() const;
  // The registry kernel and the launch configuration (as describe()).
  const Description& description() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tcgemm
