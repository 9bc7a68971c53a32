#include "shapes.h"

#include <algorithm>
#include <array>

namespace tcgemm::bench {
namespace {

constexpr std::array<std::string_view, 4> kSetNames = {"square", "worklog", "llm", "ragged"};

std::vector<Shape> cubes(std::span<const std::int64_t> sizes) {
  std::vector<Shape> shapes;
  for (std::int64_t s : sizes) shapes.push_back({s, s, s});
  return shapes;
}

std::vector<Shape> square_set() {
  constexpr std::array<std::int64_t, 9> kSizes = {512,  1024, 2048,  3072, 4096,
                                                  6144, 8192, 12288, 16384};
  return cubes(kSizes);
}

// The headline M = N = K = 4096 and the powers of two around it.
std::vector<Shape> worklog_set() {
  constexpr std::array<std::int64_t, 5> kSizes = {512, 1024, 2048, 4096, 8192};
  return cubes(kSizes);
}

// Token counts M against the (N, K) of transformer projections; grouped by
// (N, K) so each group reads as one TFLOP/s-vs-M curve.
std::vector<Shape> llm_set() {
  constexpr std::array<std::int64_t, 8> kTokens = {1, 16, 64, 128, 512, 1024, 4096, 16384};
  constexpr std::array<std::array<std::int64_t, 2>, 5> kProjections = {
      {{4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192}, {8192, 28672}}};
  std::vector<Shape> shapes;
  for (const auto& [n, k] : kProjections) {
    for (std::int64_t m : kTokens) shapes.push_back({m, n, k});
  }
  return shapes;
}

// Sizes that are not tile multiples, degenerate sizes, and padded leading
// dimensions: +8 keeps 16-byte row alignment, +1 breaks it.
std::vector<Shape> ragged_set() {
  return {
      {4095, 4097, 4093},    {4000, 4000, 4000},    {1, 1, 1},
      {17, 9, 33},           {1000, 1000, 8},       {4096, 4096, 4096, 8},
      {4096, 4096, 4096, 1}, {4095, 4097, 4093, 8}, {17, 9, 33, 1},
      {1000, 1000, 8, 8},
  };
}

}  // namespace

std::span<const std::string_view> shape_set_names() { return kSetNames; }

std::optional<std::vector<Shape>> shape_set(std::string_view name) {
  if (name == "square") return square_set();
  if (name == "worklog") return worklog_set();
  if (name == "llm") return llm_set();
  if (name == "ragged") return ragged_set();
  return std::nullopt;
}

std::optional<OperandLayouts> parse_layouts(std::string_view name) {
  if (name.size() != 2 && name.size() != 3) return std::nullopt;
  const auto op = [](char letter) -> std::optional<Layout> {
    if (letter == 'n') return Layout::kColMajor;
    if (letter == 't') return Layout::kRowMajor;
    return std::nullopt;
  };
  const std::optional<Layout> a = op(name[0]);
  const std::optional<Layout> b = op(name[1]);
  if (!a || !b) return std::nullopt;
  OperandLayouts layouts{*a, *b, Layout::kColMajor};
  if (name.size() == 3) {
    if (name[2] == 'r') {
      layouts.c = Layout::kRowMajor;
    } else if (name[2] != 'c') {
      return std::nullopt;
    }
  }
  return layouts;
}

std::string layouts_name(const OperandLayouts& layouts) {
  const auto op = [](Layout l) { return l == Layout::kRowMajor ? 't' : 'n'; };
  std::string name{op(layouts.a), op(layouts.b)};
  if (layouts.c == Layout::kRowMajor) name += 'r';
  return name;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::kBF16, DType::kFP16, DType::kFP32}) {
    if (name == to_string(d)) return d;
  }
  return std::nullopt;
}

std::int64_t tight_ld(std::int64_t rows, std::int64_t cols, Layout layout) {
  return std::max<std::int64_t>(1, layout == Layout::kRowMajor ? cols : rows);
}

Problem make_problem(const Shape& shape, DType input, DType output, const OperandLayouts& layouts,
                     float alpha, float beta, const LdOverride& ld) {
  const auto pick = [&](std::int64_t given, std::int64_t rows, std::int64_t cols, Layout layout) {
    return given != 0 ? given : tight_ld(rows, cols, layout) + shape.ld_pad;
  };
  return {
      .m = shape.m,
      .n = shape.n,
      .k = shape.k,
      .input = input,
      .output = output,
      .layouts = layouts,
      .lda = pick(ld.lda, shape.m, shape.k, layouts.a),
      .ldb = pick(ld.ldb, shape.k, shape.n, layouts.b),
      .ldc = pick(ld.ldc, shape.m, shape.n, layouts.c),
      .alpha = alpha,
      .beta = beta,
  };
}

std::string check_leading_dimensions(const Problem& p) {
  const struct {
    const char* ld_name;
    const char* matrix;
    std::int64_t ld, rows, cols;
    Layout layout;
  } operands[] = {
      {"lda", "A", p.lda, p.m, p.k, p.layouts.a},
      {"ldb", "B", p.ldb, p.k, p.n, p.layouts.b},
      {"ldc", "C", p.ldc, p.m, p.n, p.layouts.c},
  };
  for (const auto& o : operands) {
    const std::int64_t tight = tight_ld(o.rows, o.cols, o.layout);
    if (o.ld < tight) {
      return std::string(o.ld_name) + "=" + std::to_string(o.ld) + " is smaller than " +
             std::to_string(tight) + ", the tight leading dimension of " +
             (o.layout == Layout::kRowMajor ? "row" : "column") + "-major " + o.matrix + " (" +
             std::to_string(o.rows) + " x " + std::to_string(o.cols) + ")";
    }
  }
  return {};
}

namespace {

// Bytes a rows x cols matrix in `layout` with leading dimension `ld` spans,
// or nullopt when that overflows int64.
std::optional<std::int64_t> span_bytes(std::int64_t rows, std::int64_t cols, Layout layout,
                                       std::int64_t ld, DType dtype) {
  const bool row_major = layout == Layout::kRowMajor;
  const std::int64_t outer = row_major ? rows : cols;
  const std::int64_t inner = row_major ? cols : rows;
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(outer - 1, ld, &elements) ||
      __builtin_add_overflow(elements, inner, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::int64_t>(size_of(dtype)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace

std::string check_size(const Problem& p) {
  const std::optional<std::int64_t> c = span_bytes(p.m, p.n, p.layouts.c, p.ldc, p.output);
  // One buffer set (A, B, C), the two saved copies of C the checks keep, and
  // the fp32 reference.
  const std::optional<std::int64_t> buffers[] = {
      span_bytes(p.m, p.k, p.layouts.a, p.lda, p.input),
      span_bytes(p.k, p.n, p.layouts.b, p.ldb, p.input),
      c,
      c,
      c,
      span_bytes(p.m, p.n, Layout::kColMajor, p.m, DType::kFP32),
  };
  std::int64_t total = 0;
  for (const std::optional<std::int64_t>& bytes : buffers) {
    if (!bytes || __builtin_add_overflow(total, *bytes, &total)) {
      return std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k) +
             " (lda=" + std::to_string(p.lda) + ", ldb=" + std::to_string(p.ldb) +
             ", ldc=" + std::to_string(p.ldc) + ") needs more than 2^63 bytes of device memory";
    }
  }
  return {};
}

GemmArgs make_args(const Problem& p, const void* a, const void* b, void* c, cudaStream_t stream) {
  return {
      .m = p.m,
      .n = p.n,
      .k = p.k,
      .a = {.ptr = a, .dtype = p.input, .layout = p.layouts.a, .ld = p.lda},
      .b = {.ptr = b, .dtype = p.input, .layout = p.layouts.b, .ld = p.ldb},
      .c = {.ptr = c, .dtype = p.output, .layout = p.layouts.c, .ld = p.ldc},
      .alpha = p.alpha,
      .beta = p.beta,
      .batch_count = 1,
      .stream = stream,
  };
}

double flops(const Problem& p) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
}

}  // namespace tcgemm::bench
