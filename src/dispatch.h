// Kernel selection: which registry kernel runs a problem, apart from the
// device query and the BLAS quick returns around it (src/api.cpp), so that
// the rules are tested on the CPU with made-up kernels.
#pragma once

#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <span>

namespace tcgemm {

// A kernel that can run the problem, or (kernel == nullptr) the status that
// says why none can.
struct KernelChoice {
  Status status;
  const KernelInfo* kernel = nullptr;
};

// The kernel for `args` on `device`: `forced` when it is non-null and can run
// the problem (kNotSupported with its reason when it cannot), otherwise the
// kernel of `kernels` with the highest positive dispatch rank that can
// (kNotSupported listing every ranked kernel's reason when none can). A kernel
// can run the problem when its constraints accept it, args gives it the
// workspace it needs and it is not passed over (KernelInfo::passed_over, not
// asked of `forced`); with `unlimited_workspace` the workspace is taken to be
// large enough (what tcgemm::workspace_size asks). Assumes validate(args)
// passed and M, N, K > 0.
KernelChoice choose_kernel(std::span<const KernelInfo> kernels, const KernelInfo* forced,
                           const GemmArgs& args, const DeviceCaps& device,
                           bool unlimited_workspace);

// The kernel `options` name (GemmOptions::kernel, or the batch-invariant
// kernel for GemmOptions::batch_invariant) into *forced, nullptr for none:
// kInvalidValue for a name no registry kernel has, or for both options at
// once. Checked on every call, quick returns included.
Status options_kernel(const GemmOptions& options, const KernelInfo** forced);

// What gemm(args, options) runs (src/api.cpp): validation, the options'
// named or batch-invariant kernel, the device check, then choose_kernel;
// kernel == nullptr with an ok status for the BLAS quick returns (M, N, K
// or alpha 0).
KernelChoice choose_for_call(const GemmArgs& args, const GemmOptions& options,
                             bool unlimited_workspace);

// validate()'s check of a caller's workspace, whatever the problem needs: a
// null workspace with workspace_bytes > 0, a non-null one not
// kWorkspaceAlignment-byte aligned, or one running past the end of the
// address space is kInvalidValue naming it. GemmPlan::run checks its
// workspace argument with it too.
Status validate_workspace(const void* workspace, std::size_t workspace_bytes);

}  // namespace tcgemm
