// Kernel selection by constraints, workspace and dispatch rank.
#include "dispatch.h"

#include <string>

namespace tcgemm {

KernelChoice choose_kernel(std::span<const KernelInfo> kernels, const KernelInfo* forced,
                           const GemmArgs& args, const DeviceCaps& device,
                           bool unlimited_workspace) {
  // Empty when `kernel` can run the problem, else why not. The workspace is
  // asked about only once the constraints hold (workspace_bytes assumes them).
  const auto refusal = [&](const KernelInfo& kernel) {
    std::string reason = check_constraints(kernel.constraints, args, device);
    if (reason.empty() && !unlimited_workspace) reason = check_workspace(kernel, args);
    return reason;
  };
  if (forced != nullptr) {
    const std::string reason = refusal(*forced);
    if (!reason.empty()) {
      return {{StatusCode::kNotSupported, std::string(forced->name) + ": " + reason}};
    }
    return {{}, forced};
  }
  // The applicable kernel of highest dispatch rank; the reasons of the others
  // go into the kNotSupported message when none applies.
  const KernelInfo* best = nullptr;
  std::string reasons;
  for (const KernelInfo& kernel : kernels) {
    if (kernel.dispatch_rank <= 0) continue;
    std::string reason = refusal(kernel);
    if (reason.empty() && kernel.passed_over != nullptr && kernel.passed_over(args)) {
      reason = "the tuned table measured another kernel faster";
    }
    if (!reason.empty()) {
      reasons += "; " + std::string(kernel.name) + ": " + reason;
    } else if (best == nullptr || kernel.dispatch_rank > best->dispatch_rank) {
      best = &kernel;
    }
  }
  if (best != nullptr) return {{}, best};
  return {{StatusCode::kNotSupported, "no tcgemm kernel supports this problem" + reasons}};
}

}  // namespace tcgemm
