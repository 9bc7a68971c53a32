// The per-rank argument checks of the tensor-parallel GEMMs and the
// reduce-scatter's workspace size: host code, no NCCL, no device.
#include <cstdint>
#include <string>

#include "dist/shard_gemm.h"
#include "tcgemm/dist.h"

namespace tcgemm::dist {
namespace {

Status invalid(std::string_view op, const std::string& what) {
  return {StatusCode::kInvalidValue, std::string(op) + ": " + what};
}

bool sixteen_bit(DType t) { return t == DType::kBF16 || t == DType::kFP16; }

// The shard GEMM's own checks (tcgemm::validate), its message prefixed.
Status check_gemm(std::string_view op, const GemmArgs& g) {
  Status s = tcgemm::validate(g);
  if (!s.ok()) s.message = std::string(op) + ": " + s.message;
  return s;
}

Status check_common(std::string_view op, int ranks, DType a, DType b) {
  if (ranks < 1) return invalid(op, "the communicator has " + std::to_string(ranks) + " ranks");
  if (!sixteen_bit(a)) return invalid(op, "A's dtype must be bf16 or fp16");
  if (b != a) return invalid(op, "B's dtype must be A's");
  return Status::success();
}

}  // namespace

Status validate(const AllGatherGemmArgs& args, int ranks) {
  constexpr std::string_view kOp = "all_gather_gemm";
  if (Status s = check_common(kOp, ranks, args.a_shard.dtype, args.b.dtype); !s.ok()) return s;
  if (args.m_local < 1 || args.n < 1 || args.k < 1) {
    return invalid(kOp, "m_local, n and k must be >= 1 (m_local=" + std::to_string(args.m_local) +
                            " n=" + std::to_string(args.n) + " k=" + std::to_string(args.k) + ")");
  }
  if (args.m != args.m_local * ranks) {
    return invalid(kOp, "m=" + std::to_string(args.m) +
                            " is not m_local=" + std::to_string(args.m_local) +
                            " times the communicator's " + std::to_string(ranks) + " ranks");
  }
  const std::int64_t m = args.m;
  // C's rows past the first shard's: its leading dimension for all M rows.
  if (args.c.layout == Layout::kColMajor && args.c.ld < m) {
    return invalid(kOp, "c.ld=" + std::to_string(args.c.ld) +
                            " is less than M=" + std::to_string(m) + " (column-major C)");
  }
  if (args.gathered_a == nullptr) return invalid(kOp, "gathered_a is null");
  if (reinterpret_cast<std::uintptr_t>(args.gathered_a) % kWorkspaceAlignment != 0) {
    return invalid(kOp,
                   "gathered_a is not " + std::to_string(kWorkspaceAlignment) + "-byte aligned");
  }
  return check_gemm(kOp, shard_gemm(args.m_local, args.n, args.k, args.a_shard, args.b, args.c,
                                    args.alpha, args.beta));
}

Status validate(const GemmReduceScatterArgs& args, int ranks) {
  constexpr std::string_view kOp = "gemm_reduce_scatter";
  if (Status s = check_common(kOp, ranks, args.a_shard.dtype, args.b_shard.dtype); !s.ok()) {
    return s;
  }
  if (args.m < 1 || args.n < 1 || args.k_local < 1) {
    return invalid(kOp, "m, n and k_local must be >= 1 (m=" + std::to_string(args.m) +
                            " n=" + std::to_string(args.n) +
                            " k_local=" + std::to_string(args.k_local) + ")");
  }
  if (args.m != args.m_local * ranks) {
    return invalid(kOp, "m=" + std::to_string(args.m) +
                            " is not m_local=" + std::to_string(args.m_local) +
                            " times the communicator's " + std::to_string(ranks) + " ranks");
  }
  // A's rows past the first block's: its leading dimension for all M rows.
  if (args.a_shard.layout == Layout::kColMajor && args.a_shard.ld < args.m) {
    return invalid(kOp, "a_shard.ld=" + std::to_string(args.a_shard.ld) +
                            " is less than M=" + std::to_string(args.m) + " (column-major A)");
  }
  if (args.workspace_bytes > 0 && args.workspace == nullptr) {
    return invalid(kOp, "workspace_bytes > 0 with a null workspace");
  }
  if (reinterpret_cast<std::uintptr_t>(args.workspace) % kWorkspaceAlignment != 0) {
    return invalid(kOp,
                   "workspace is not " + std::to_string(kWorkspaceAlignment) + "-byte aligned");
  }
  return check_gemm(kOp, shard_gemm(args.m_local, args.n, args.k_local, args.a_shard, args.b_shard,
                                    args.c, args.alpha, args.beta));
}

std::size_t reduce_scatter_workspace_size(const GemmReduceScatterArgs& args, int ranks) {
  if (ranks <= 1 || args.m_local < 1 || args.n < 1) return 0;
  const auto buffer = static_cast<std::size_t>(args.m_local) * static_cast<std::size_t>(args.n) *
                      size_of(args.c.dtype);
  const std::size_t aligned =
      (buffer + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  return 4 * aligned;
}

}  // namespace tcgemm::dist
