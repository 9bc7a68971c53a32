// Problems tcgemm-bench runs: the standard shape sets (docs/benchmarking.md),
// the layout names, and the assembly of a full Problem. Pure host code (no
// CUDA calls), so it can be unit-tested without a GPU.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::bench {

// One problem size. `ld_pad` is added to every tight leading dimension (the
// ragged set's "ld = rows + 8" entries), so the padding follows the layout.
struct Shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t ld_pad = 0;
};

// The names --shapes accepts: square, worklog, llm, ragged.
std::span<const std::string_view> shape_set_names();

// The shapes of a named set, or nullopt for an unknown name.
std::optional<std::vector<Shape>> shape_set(std::string_view name);

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
};

// The smallest leading dimension of a rows x cols matrix in `layout`.
std::int64_t tight_ld(std::int64_t rows, std::int64_t cols, Layout layout);

// Explicit leading dimensions from the command line; 0 = tight + shape.ld_pad.
struct LdOverride {
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
};

Problem make_problem(const Shape& shape, DType input, DType output, const OperandLayouts& layouts,
                     float alpha, float beta, const LdOverride& ld = {});

// Empty when every leading dimension is large enough, else what is wrong
// ("lda=100 is smaller than 4096, the tight leading dimension of row-major A").
std::string check_leading_dimensions(const Problem& problem);

// Empty when the device memory the bench needs for the problem (A, B, three
// copies of C and the fp32 reference) can be counted in 64-bit arithmetic,
// else what is wrong. Such a problem fits no device; one that merely does not
// fit this GPU is an out-of-memory error at run time instead. Call after
// check_leading_dimensions().
std::string check_size(const Problem& problem);

// GemmArgs for the problem on the given buffers (batch 1).
GemmArgs make_args(const Problem& problem, const void* a, const void* b, void* c,
                   cudaStream_t stream);

double flops(const Problem& problem);

}  // namespace tcgemm::bench
