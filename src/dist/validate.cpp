// The per-rank argument checks of the tensor-parallel GEMMs and the
// reduce-scatter's workspace size: host code, no NCCL, no device.
#include <cstdint>
#include <string>

#include "dispatch.h"  // validate_workspace
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

// m == m_local x ranks, without overflowing int64.
Status check_rows(std::string_view op, std::int64_t m, std::int64_t m_local, int ranks) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(m_local, std::int64_t{ranks}, &product) || m != product) {
    return invalid(op, "m=" + std::to_string(m) + " is not m_local=" + std::to_string(m_local) +
                           " times the communicator's " + std::to_string(ranks) + " ranks");
  }
  return Status::success();
}

// A stand-in address for an operand a check needs but does not look at
// (256-byte aligned, never dereferenced).
void* stand_in() { return reinterpret_cast<void*>(std::uintptr_t{kWorkspaceAlignment}); }

// tcgemm::validate's checks of one matrix read by the call (pointer,
// element alignment, ld, and its span, batched when `batch` > 1 with
// `ref.stride` between entries, within the address space), on a GEMM whose
// other operands are stand-ins: `ref` is the rows x cols A of rows x 1 x
// cols products.
Status check_read(std::string_view op, std::int64_t rows, std::int64_t cols, const MatrixRef& ref,
                  std::int64_t batch = 1) {
  GemmArgs g = shard_gemm(
      rows, 1, cols, ref, MatrixRef{stand_in(), ref.dtype, Layout::kColMajor, cols, 0},
      MutableMatrixRef{stand_in(), DType::kBF16, Layout::kColMajor, rows, rows}, 1.0f, 0.0f);
  g.batch_count = batch;
  return check_gemm(op, g);
}

// The same of a matrix written by the call (the rows x cols C of rows x
// cols x 1 products).
Status check_written(std::string_view op, std::int64_t rows, std::int64_t cols,
                     const MutableMatrixRef& ref) {
  const DType in = DType::kBF16;
  return check_gemm(
      op, shard_gemm(rows, cols, 1, MatrixRef{stand_in(), in, Layout::kColMajor, rows, 0},
                     MatrixRef{stand_in(), in, Layout::kRowMajor, cols, 0}, ref, 1.0f, 0.0f));
}

}  // namespace

Status validate(const AllGatherGemmArgs& args, int ranks) {
  constexpr std::string_view kOp = "all_gather_gemm";
  if (Status s = check_common(kOp, ranks, args.a_shard.dtype, args.b.dtype); !s.ok()) return s;
  if (args.m_local < 1 || args.n < 1 || args.k < 1) {
    return invalid(kOp, "m_local, n and k must be >= 1 (m_local=" + std::to_string(args.m_local) +
                            " n=" + std::to_string(args.n) + " k=" + std::to_string(args.k) + ")");
  }
  if (Status s = check_rows(kOp, args.m, args.m_local, ranks); !s.ok()) return s;
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
  if (Status s = check_gemm(kOp, shard_gemm(args.m_local, args.n, args.k, args.a_shard, args.b,
                                            args.c, args.alpha, args.beta));
      !s.ok()) {
    return s;
  }
  // What the shard GEMM's checks leave out: A's shard is copied into
  // gathered_a and sent round the ring even with alpha 0 (when the GEMM's
  // checks skip it); gathered_a holds P shards (tight, a_shard's storage
  // order); C's M rows, not the first shard's.
  if (args.alpha == 0.0f) {
    if (Status s = check_read(kOp, args.m_local, args.k, args.a_shard); !s.ok()) return s;
  }
  const std::int64_t slot_ld = args.a_shard.layout == Layout::kRowMajor ? args.k : args.m_local;
  const MatrixRef gathered{args.gathered_a, args.a_shard.dtype, args.a_shard.layout, slot_ld,
                           args.m_local * args.k};
  if (Status s = check_read(kOp, args.m_local, args.k, gathered, ranks); !s.ok()) {
    if (s.message.find("spans more bytes") != std::string::npos) {
      return invalid(kOp, "gathered_a: " + std::to_string(ranks) + " shards of m_local x k (" +
                              std::to_string(args.m_local) + " x " + std::to_string(args.k) +
                              ") from gathered_a span more bytes than the address space holds");
    }
    s.message += " (gathered_a: " + std::to_string(ranks) + " shards of m_local x k)";
    return s;
  }
  // C as in gemm: untouched (and may be null) where alpha is 0 and beta 1.
  if (args.alpha == 0.0f && args.beta == 1.0f) return Status::success();
  return check_written(kOp, m, args.n, args.c);
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
  if (Status s = check_rows(kOp, args.m, args.m_local, ranks); !s.ok()) return s;
  // A's rows past the first block's: its leading dimension for all M rows.
  if (args.a_shard.layout == Layout::kColMajor && args.a_shard.ld < args.m) {
    return invalid(kOp, "a_shard.ld=" + std::to_string(args.a_shard.ld) +
                            " is less than M=" + std::to_string(args.m) + " (column-major A)");
  }
  if (Status s = validate_workspace(args.workspace, args.workspace_bytes); !s.ok()) {
    return invalid(kOp, s.message);
  }
  if (ranks > 1 && reduce_scatter_workspace_size(args, ranks) == SIZE_MAX) {
    return invalid(kOp, "the ring's four m_local x n buffers of C's dtype (m_local=" +
                            std::to_string(args.m_local) + " n=" + std::to_string(args.n) +
                            ") would take more bytes than 64 bits count");
  }
  if (Status s = check_gemm(kOp, shard_gemm(args.m_local, args.n, args.k_local, args.a_shard,
                                            args.b_shard, args.c, args.alpha, args.beta));
      !s.ok()) {
    return s;
  }
  // The ring's last step writes C whatever alpha and beta are (the shard
  // GEMM's check skips C where alpha is 0 and beta 1); without a ring (P =
  // 1) C is the shard GEMM's, as in gemm.
  if (ranks > 1 || !(args.alpha == 0.0f && args.beta == 1.0f)) {
    if (Status s = check_written(kOp, args.m_local, args.n, args.c); !s.ok()) return s;
  }
  // The shard GEMMs read all M rows of A (one m_local-row block a step),
  // where they read A at all.
  if (args.alpha != 0.0f) return check_read(kOp, args.m, args.k_local, args.a_shard);
  return Status::success();
}

std::size_t reduce_scatter_workspace_size(const GemmReduceScatterArgs& args, int ranks) {
  if (ranks <= 1 || args.m_local < 1 || args.n < 1) return 0;
  std::size_t buffer = 0;
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(args.m_local),
                             static_cast<std::size_t>(args.n), &buffer) ||
      __builtin_mul_overflow(buffer, size_of(args.c.dtype), &buffer) ||
      __builtin_add_overflow(buffer, kWorkspaceAlignment - 1, &buffer) ||
      __builtin_mul_overflow(buffer / kWorkspaceAlignment * kWorkspaceAlignment, std::size_t{4},
                             &bytes)) {
    return SIZE_MAX;
  }
  return bytes;
}

}  // namespace tcgemm::dist
