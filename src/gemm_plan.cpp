// tcgemm::GemmPlan: gemm()'s host work done once. create() runs the
// dispatcher and the production family's prepare step (kernels/prod/
// launch.h, or the small-M path's shape, kernels/prod/skinny.h); run()
// patches the addresses into a copy of the prepared launch and enqueues it.
#include <tcgemm/gemm_plan.h>
#include <tcgemm/registry.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "dispatch.h"
#include "kernels/kernels.h"
#include "kernels/prod/launch.h"
#include "kernels/prod/skinny.h"
#include "tensor_map.h"

namespace tcgemm {

struct GemmPlan::State {
  enum class Kind { kNothing, kScale, kProd, kSkinny };
  Kind kind = Kind::kNothing;
  GemmArgs args;  // the planned problem (pointers and scalars replaced per run)
  kernels::prod::PreparedLaunch prepared;
  prod::SkinnyShape skinny;            // kSkinny: the small-M path's launch shape
  std::int64_t skinny_max_blocks = 0;  // and its block cap (an SM budget)
  Description description;
  bool aligned[3] = {false, false, false};  // A, B, C must be 16-byte aligned
  std::size_t workspace_bytes = 0;          // what run() needs, reserved bytes included
  void* owned_workspace = nullptr;

  ~State() {
    if (owned_workspace != nullptr) cudaFree(owned_workspace);
  }
};

GemmPlan::GemmPlan() = default;
GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;

Status GemmPlan::create(const GemmArgs& args, const GemmOptions& options, GemmPlan* plan) {
  if (plan == nullptr) return {StatusCode::kInvalidValue, "plan is a null pointer"};
  plan->state_.reset();
  // run() takes alpha, beta and the workspace: plan as for a product (a zero
  // alpha would plan C = beta * C, and validate() would check the caller's
  // placeholder scalars and workspace), keeping only whether beta is zero:
  // the heuristic weighs C's read where it is not, so the plan chooses what
  // gemm(args) and describe(args) do. A nonzero beta is planned as 2, not 1:
  // with K == 0, beta == 1 touches no C, and validate() would not check it.
  GemmArgs planned = args;
  planned.alpha = 1.0f;
  planned.beta = args.beta == 0.0f ? 0.0f : 2.0f;
  planned.workspace = nullptr;
  planned.workspace_bytes = 0;
  const KernelChoice choice = choose_for_call(planned, options, /*unlimited_workspace=*/true);
  if (!choice.status.ok()) return choice.status;
  auto state = std::make_unique<State>();
  state->args = planned;
  if (choice.kernel == nullptr) {
    // A BLAS quick return: nothing (M or N is 0) or C = beta * C.
    state->kind = planned.m == 0 || planned.n == 0 ? State::Kind::kNothing : State::Kind::kScale;
    state->description.config = state->kind == State::Kind::kNothing
                                    ? "no kernel: nothing to compute (BLAS quick return)"
                                    : "no GEMM kernel: C = beta * C (K is 0)";
    plan->state_ = std::move(state);
    return Status::success();
  }
  if (choice.kernel->name == "prod-skinny") {
    prod::DeviceModel model;
    if (Status s = kernels::prod::device_model(planned, &model); !s.ok()) return s;
    state->skinny = prod::skinny_shape(planned, model.sm_count);
    state->skinny_max_blocks = kernels::prod::skinny_max_blocks(model);
    if (Status s = kernels::prod::prepare_skinny(planned, state->skinny); !s.ok()) return s;
    state->kind = State::Kind::kSkinny;
    state->description.kernel = std::string(choice.kernel->name);
    state->description.config = prod::to_string(state->skinny);
    // Its loads are 16-byte vectors of A's and B's rows; C is stored element
    // by element.
    state->aligned[0] = state->aligned[1] = true;
    plan->state_ = std::move(state);
    return Status::success();
  }
  int config = 0;
  if (!kernels::prod::config_of_kernel(choice.kernel->name, &config)) {
    return {StatusCode::kNotSupported,
            "GemmPlan: plans are made for the production family ('prod', 'prod-invariant', "
            "'prod-skinny', 'prod-<tile>'); '" +
                std::string(choice.kernel->name) + "' runs through tcgemm::gemm only"};
  }
  prod::Choice prod_choice;
  if (Status s = kernels::prod::resolve_choice(planned, config, &prod_choice); !s.ok()) return s;
  // The batch-invariant mode never takes a stream-K round (launch.cpp).
  if (Status s = kernels::prod::prepare(planned, prod_choice, &state->prepared,
                                        config != kernels::kInvariantConfig);
      !s.ok()) {
    return s;
  }
  state->kind = State::Kind::kProd;
  state->description.kernel = std::string(choice.kernel->name);
  prod::DeviceModel model;
  if (Status s = kernels::prod::device_model(planned, &model); !s.ok()) return s;
  prod::LaunchConfig launch_config =
      prod::launch_config(prod::oriented(planned, prod_choice), prod_choice, model);
  launch_config.stream_k = state->prepared.stream_k;
  state->description.config = prod::to_string(launch_config);
  const kernels::prod::PreparedLaunch& p = state->prepared;
  // Canonical operand 0 is the caller's A unless C^T = B^T A^T swapped them.
  state->aligned[0] = p.tma_operand[p.swapped ? 1 : 0];
  state->aligned[1] = p.tma_operand[p.swapped ? 0 : 1];
  state->aligned[2] = p.tma_c;
  if (p.scratch_bytes > 0) {
    state->workspace_bytes = prod::kReservedWorkspaceBytes + p.scratch_bytes;
    // Zeroed before create() returns: a memset left in a stream's queue
    // would race with a first run() on any stream that does not wait for
    // it (its kernels read the flags). On a stream of its own, so that
    // create() waits for nothing else (the legacy default stream would
    // wait for every blocking stream's work, and break another thread's
    // global-mode graph capture).
    cudaStream_t zeroing = nullptr;
    cudaError_t err = cudaMalloc(&state->owned_workspace, state->workspace_bytes);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking);
    if (err == cudaSuccess) {
      err = cudaMemsetAsync(state->owned_workspace, 0, state->workspace_bytes, zeroing);
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(zeroing);
    if (zeroing != nullptr) {
      const cudaError_t destroyed = cudaStreamDestroy(zeroing);
      if (err == cudaSuccess) err = destroyed;
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      return {StatusCode::kCudaError, "GemmPlan: allocating and zeroing its " +
                                          std::to_string(state->workspace_bytes) +
                                          "-byte workspace failed: " + cudaGetErrorString(err)};
    }
  }
  plan->state_ = std::move(state);
  return Status::success();
}

namespace {

Status check_pointer(const char* name, const void* ptr, DType dtype, bool tma_aligned) {
  if (ptr == nullptr) return {StatusCode::kInvalidValue, std::string(name) + " is a null pointer"};
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  if (address % size_of(dtype) != 0) {
    return {StatusCode::kInvalidValue, std::string(name) + " is not aligned to its " +
                                           std::to_string(size_of(dtype)) + "-byte element"};
  }
  if (tma_aligned && address % kTmaAlignmentBytes != 0) {
    return {StatusCode::kInvalidValue,
            std::string(name) +
                " is not 16-byte aligned, but the plan was made for a 16-byte-aligned " + name +
                " (read with TMA or 16-byte loads): make a plan with this pointer's alignment"};
  }
  return Status::success();
}

}  // namespace

Status GemmPlan::run(const void* a, const void* b, void* c, float alpha, float beta,
                     cudaStream_t stream, void* workspace, std::size_t workspace_bytes) const {
  if (!state_)
    return {StatusCode::kInvalidValue,
            "the plan is empty (not made by GemmPlan::create, its create failed, or it was moved "
            "from)"};
  const State& s = *state_;
  if (!std::isfinite(alpha)) return {StatusCode::kInvalidValue, "alpha is not finite"};
  if (!std::isfinite(beta)) return {StatusCode::kInvalidValue, "beta is not finite"};
  // As gemm() checks GemmArgs::workspace: whether or not the plan needs one.
  if (Status st = validate_workspace(workspace, workspace_bytes); !st.ok()) return st;
  if (s.kind == State::Kind::kNothing) return Status::success();
  if (Status st = check_pointer("c", c, s.args.c.dtype, s.aligned[2]); !st.ok()) return st;
  const bool reads_inputs =
      (s.kind == State::Kind::kProd || s.kind == State::Kind::kSkinny) && alpha != 0.0f;
  if (reads_inputs) {
    if (Status st = check_pointer("a", a, s.args.a.dtype, s.aligned[0]); !st.ok()) return st;
    if (Status st = check_pointer("b", b, s.args.b.dtype, s.aligned[1]); !st.ok()) return st;
  }
  if (!reads_inputs) {
    // C = beta * C (K == 0 in the plan, or alpha == 0 in this run).
    if (beta == 1.0f) return Status::success();
    GemmArgs args = s.args;
    args.c.ptr = c;
    args.beta = beta;
    args.stream = stream;
    return kernels::launch_scale_c(args);
  }
  if (s.kind == State::Kind::kSkinny) {
    GemmArgs args = s.args;
    args.a.ptr = a;
    args.b.ptr = b;
    args.c.ptr = c;
    args.alpha = alpha;
    args.beta = beta;
    args.stream = stream;
    return kernels::prod::launch_skinny(args, s.skinny, s.skinny_max_blocks);
  }
  void* base = nullptr;
  if (s.workspace_bytes > 0) {
    base = s.owned_workspace;
    if (workspace != nullptr) {
      if (workspace_bytes < s.workspace_bytes) {
        return {StatusCode::kInvalidValue,
                "workspace_bytes=" + std::to_string(workspace_bytes) + " is less than the " +
                    std::to_string(s.workspace_bytes) + " the plan needs (workspace_size())"};
      }
      base = workspace;
    }
  }
  return kernels::prod::enqueue(s.prepared, kernels::prod::RunOperands{a, b, c, alpha, beta}, base,
                                stream);
}

bool GemmPlan::empty() const { return !state_; }

std::size_t GemmPlan::workspace_size() const { return state_ ? state_->workspace_bytes : 0; }

const Description& GemmPlan::description() const {
  static const Description kEmpty{{StatusCode::kInvalidValue, "empty plan"}, "", ""};
  return state_ ? state_->description : kEmpty;
}

}  // namespace tcgemm
