// Problems tcgemm-bench runs: the standard shape sets (docs/benchmarking.md),
// the layout names, and the assembly of a full Problem: leading dimensions,
// strided batches and base offsets, the arguments handed to the GEMM, and the
// checks a problem passes before any device work. Pure host code (no CUDA
// calls), so it can be unit-tested without a GPU
// (tests/host/test_bench_shapes.cpp).
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::bench {

// One entry of a shape set (or the --m/--n/--k problem). The other fields
// carry what a set entry may pin down beyond its size; their defaults are the
// plain problem.
struct Shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  // Added to every tight leading dimension (the ragged set's "ld = rows + 8"
  // entries), so the padding follows the layout.
  std::int64_t ld_pad = 0;
  // Elements between each operand's 256-byte-aligned allocation and its base
  // pointer: 1 gives 2-byte-aligned bases for 16-bit types.
  std::int64_t offset = 0;
  // Strided batch entries, with tight strides.
  std::int64_t batch = 1;
  // The input dtype the entry is defined for (the batched set's targets);
  // unset: the entry runs for every --dtype.
  std::optional<DType> dtype = std::nullopt;
};

// The names --shapes accepts: square, worklog, llm, ragged, batched.
std::span<const std::string_view> shape_set_names();

// The shapes of a named set, or nullopt for an unknown name.
std::optional<std::vector<Shape>> shape_set(std::string_view name);

// Whether any of `shapes` fixes its own input dtype (the batched set's
// entries): then a --dtype flag would be ignored, and the tools refuse it.
bool fixes_dtype(std::span<const Shape> shapes);

// Storage orders of A, B and C, named BLAS-style: two letters give op(A) and
// op(B), 'n' = column-major (not transposed), 't' = row-major (transposed in
// column-major BLAS terms); C is column-major. An optional third letter gives
// C's storage: 'c' column-major, 'r' row-major. "tn" is the worklog's problem.
struct OperandLayouts {
  Layout a = Layout::kRowMajor;
  Layout b = Layout::kColMajor;
  Layout c = Layout::kColMajor;
};

std::optional<OperandLayouts> parse_layouts(std::string_view name);
// The canonical name: two letters when C is column-major, else three ("tnr").
std::string layouts_name(const OperandLayouts& layouts);

// "bf16", "fp16", "fp32" -> DType.
std::optional<DType> parse_dtype(std::string_view name);

// The largest M, N or K parse_shape takes: 2^31 - 1, what a tuned table
// holds (cmake/tuned_table.cmake).
inline constexpr std::int64_t kMaxShapeExtent = 2147483647;

// "4096x14336x4096" (M x N x K, each a decimal integer from 1 to
// kMaxShapeExtent; an 'X' works too) as a plain shape: tight leading
// dimensions, no batch, no offset. nullopt for anything else.
std::optional<Shape> parse_shape(std::string_view text);

// Everything that defines one benchmarked GEMM except the buffers.
struct Problem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType input = DType::kBF16;   // A and B
  DType output = DType::kBF16;  // C
  OperandLayouts layouts;
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::int64_t batch = 1;  // strided batch entries (GemmArgs::batch_count)
  // Elements between consecutive batch entries of each operand (0 on A or B:
  // one matrix shared by every entry). 0 for all three when batch == 1, where
  // the API ignores them.
  std::int64_t stride_a = 0;
  std::int64_t stride_b = 0;
  std::int64_t stride_c = 0;
  std::int64_t offset = 0;  // elements from each 256-byte-aligned allocation to its base pointer
};

// The three operands, for the per-operand arithmetic below.
enum class Operand { kA, kB, kC };

// The smallest leading dimension of a rows x cols matrix in `layout`.
std::int64_t tight_ld(std::int64_t rows, std::int64_t cols, Layout layout);

// The stride of a tight batch: one entry's span (the last element's index + 1)
// of `operand`, given the problem's size, layout and leading dimension.
// Saturates at INT64_MAX where the span does not fit, which check_size() then
// reports.
std::int64_t tight_stride(const Problem& problem, Operand operand);

// Explicit leading dimensions and batch strides from the command line. An
// unset leading dimension (0) is tight + shape.ld_pad; an unset stride is
// tight_stride().
struct LdOverride {
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
  std::optional<std::int64_t> stride_a = std::nullopt;
  std::optional<std::int64_t> stride_b = std::nullopt;
  std::optional<std::int64_t> stride_c = std::nullopt;
};

// The problem for `shape`. `input` is the dtype of A and B unless the shape
// fixes its own (Shape::dtype); `output` unset means the same as the input.
Problem make_problem(const Shape& shape, DType input, std::optional<DType> output,
                     const OperandLayouts& layouts, float alpha, float beta,
                     const LdOverride& ld = {});

// Empty when every leading dimension is large enough, else what is wrong
// ("lda=100 is smaller than 4096, the tight leading dimension of row-major A").
std::string check_leading_dimensions(const Problem& problem);

// Bytes from an operand's allocation to the end of its last batch entry: the
// offset, then `batch` entries `stride` elements apart, each one matrix with
// its leading dimension. nullopt when that does not fit in int64.
std::optional<std::int64_t> operand_bytes(const Problem& problem, Operand operand);

// Empty when the device memory the bench needs for the problem (A, B, three
// copies of C and the fp32 reference of every batch entry) can be counted in
// 64-bit arithmetic, else what is wrong. Such a problem fits no device; one
// that merely does not fit this GPU is an out-of-memory error at run time
// instead. Call after check_leading_dimensions().
std::string check_size(const Problem& problem);

// Empty when tcgemm::validate() accepts the problem's arguments (placed as the
// bench places them, in three disjoint allocations), else its message: a
// batch whose entries of C overlap (stride_c = 0, say) is refused here, before
// any GPU work, as the API would refuse it. Call after check_size().
std::string check_arguments(const Problem& problem);

// GemmArgs for the problem, each operand's base pointer `offset` elements
// past its allocation (`a`, `b`, `c`: 256-byte aligned, as cudaMalloc returns),
// with the problem's batch count and strides.
GemmArgs make_args(const Problem& problem, const void* a, const void* b, void* c,
                   cudaStream_t stream);

// 2 * M * N * K * batch: the epilogue is not counted.
double flops(const Problem& problem);

}  // namespace tcgemm::bench
