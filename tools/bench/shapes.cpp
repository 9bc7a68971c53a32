#include "shapes.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <system_error>

namespace tcgemm::bench {
namespace {

constexpr std::array<std::string_view, 6> kSetNames = {"square",  "worklog", "llm",
                                                       "heldout", "ragged",  "batched"};

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

// Projections and token counts the llm set (and so the tuned tables of the
// standard sets) does not have: the widths of other model families (fused
// QKV of 8B and 70B models, 13B's attention and MLP, a 7B MLP of 18944)
// against token counts between the llm set's. How the dispatcher does on
// problems its tuned table does not hold: the heuristic's own choices.
std::vector<Shape> heldout_set() {
  constexpr std::array<std::int64_t, 7> kTokens = {8, 32, 96, 256, 768, 2048, 6144};
  constexpr std::array<std::array<std::int64_t, 2>, 6> kProjections = {
      {{6144, 4096}, {10240, 8192}, {5120, 5120}, {13824, 5120}, {5120, 13824}, {18944, 3584}}};
  std::vector<Shape> shapes;
  for (const auto& [n, k] : kProjections) {
    for (std::int64_t m : kTokens) shapes.push_back({m, n, k});
  }
  return shapes;
}

// Sizes that are not tile multiples, degenerate sizes, padded leading
// dimensions (+8 keeps 16-byte row alignment, +1 breaks it), odd K with a
// tight lda and a misaligned base: what tile-multiple, 16-byte-aligned fast
// paths do not cover.
std::vector<Shape> ragged_set() {
  return {
      {.m = 4095, .n = 4097, .k = 4093},  // odd everything, tight: TN's lda = K is odd
      {.m = 4000, .n = 4000, .k = 4000},
      {.m = 1, .n = 1, .k = 1},
      {.m = 17, .n = 9, .k = 33},
      {.m = 1000, .n = 1000, .k = 8},
      {.m = 4096, .n = 4096, .k = 4096, .ld_pad = 8},
      {.m = 4096, .n = 4096, .k = 4096, .ld_pad = 1},  // lda = ldb = ldc = 4097
      {.m = 4095, .n = 4097, .k = 4093, .ld_pad = 8},
      {.m = 17, .n = 9, .k = 33, .ld_pad = 1},
      {.m = 1000, .n = 1000, .k = 8, .ld_pad = 8},
      {.m = 4096, .n = 4096, .k = 4093},  // only K odd: aligned M and N, tight lda = 4093
      {.m = 8191, .n = 8192, .k = 8192},  // one row short of a tile multiple
      {.m = 4096, .n = 4096, .k = 4096, .offset = 1},  // 2-byte-aligned A, B and C
      // The aligned neighbour the odd shapes are held against, in the same run.
      {.m = 4096, .n = 4096, .k = 4096},
  };
}

// Strided batches, each at the dtype it is a target for (issue 10): a few
// large entries, and very many tiny ones that only a batched launch can fill
// the GPU with.
std::vector<Shape> batched_set() {
  return {
      {.m = 2048, .n = 2048, .k = 2048, .batch = 8, .dtype = DType::kBF16},
      {.m = 8, .n = 64, .k = 8, .batch = 65536, .dtype = DType::kFP16},
  };
}

}  // namespace

std::span<const std::string_view> shape_set_names() { return kSetNames; }

std::optional<std::vector<Shape>> shape_set(std::string_view name) {
  if (name == "square") return square_set();
  if (name == "worklog") return worklog_set();
  if (name == "llm") return llm_set();
  if (name == "heldout") return heldout_set();
  if (name == "ragged") return ragged_set();
  if (name == "batched") return batched_set();
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

bool fixes_dtype(std::span<const Shape> shapes) {
  return std::any_of(shapes.begin(), shapes.end(),
                     [](const Shape& s) { return s.dtype.has_value(); });
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::kBF16, DType::kFP16, DType::kFP32}) {
    if (name == to_string(d)) return d;
  }
  return std::nullopt;
}

std::optional<Shape> parse_shape(std::string_view text) {
  std::int64_t dims[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find_first_of("xX") : text.size();
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view part = text.substr(0, end);
    const char* last = part.data() + part.size();
    const std::from_chars_result read = std::from_chars(part.data(), last, dims[i]);
    if (part.empty() || read.ec != std::errc() || read.ptr != last || dims[i] < 1 ||
        dims[i] > kMaxShapeExtent) {
      return std::nullopt;
    }
    text.remove_prefix(i < 2 ? end + 1 : end);
  }
  return Shape{.m = dims[0], .n = dims[1], .k = dims[2]};
}

std::int64_t tight_ld(std::int64_t rows, std::int64_t cols, Layout layout) {
  return std::max<std::int64_t>(1, layout == Layout::kRowMajor ? cols : rows);
}

namespace {

// The per-operand facts the arithmetic below needs, read from the problem.
struct OperandView {
  const char* ld_name;  // "lda"
  const char* matrix;   // "A"
  std::int64_t rows;
  std::int64_t cols;
  Layout layout;
  std::int64_t ld;
  std::int64_t stride;
  DType dtype;
};

OperandView view(const Problem& p, Operand operand) {
  switch (operand) {
    case Operand::kA:
      return {"lda", "A", p.m, p.k, p.layouts.a, p.lda, p.stride_a, p.input};
    case Operand::kB:
      return {"ldb", "B", p.k, p.n, p.layouts.b, p.ldb, p.stride_b, p.input};
    case Operand::kC:
      break;
  }
  return {"ldc", "C", p.m, p.n, p.layouts.c, p.ldc, p.stride_c, p.output};
}

constexpr Operand kOperands[] = {Operand::kA, Operand::kB, Operand::kC};

// Elements one rows x cols matrix spans (the last element's index + 1), or
// nullopt when that overflows int64. Sizes are >= 1 (the CLI insists).
std::optional<std::int64_t> span_elements(const OperandView& o) {
  const bool row_major = o.layout == Layout::kRowMajor;
  const std::int64_t lines = row_major ? o.rows : o.cols;
  const std::int64_t line_length = row_major ? o.cols : o.rows;
  std::int64_t elements = 0;
  if (__builtin_mul_overflow(lines - 1, o.ld, &elements) ||
      __builtin_add_overflow(elements, line_length, &elements)) {
    return std::nullopt;
  }
  return elements;
}

}  // namespace

std::int64_t tight_stride(const Problem& p, Operand operand) {
  return span_elements(view(p, operand)).value_or(INT64_MAX);
}

Problem make_problem(const Shape& shape, DType input, std::optional<DType> output,
                     const OperandLayouts& layouts, float alpha, float beta, const LdOverride& ld) {
  const auto pick_ld = [&](std::int64_t given, std::int64_t rows, std::int64_t cols,
                           Layout layout) {
    return given != 0 ? given : tight_ld(rows, cols, layout) + shape.ld_pad;
  };
  const DType in = shape.dtype.value_or(input);
  Problem p{
      .m = shape.m,
      .n = shape.n,
      .k = shape.k,
      .input = in,
      .output = output.value_or(in),
      .layouts = layouts,
      .lda = pick_ld(ld.lda, shape.m, shape.k, layouts.a),
      .ldb = pick_ld(ld.ldb, shape.k, shape.n, layouts.b),
      .ldc = pick_ld(ld.ldc, shape.m, shape.n, layouts.c),
      .alpha = alpha,
      .beta = beta,
      .batch = shape.batch,
      .offset = shape.offset,
  };
  // With one entry the API ignores strides; they stay 0.
  if (p.batch > 1) {
    p.stride_a = ld.stride_a.value_or(tight_stride(p, Operand::kA));
    p.stride_b = ld.stride_b.value_or(tight_stride(p, Operand::kB));
    p.stride_c = ld.stride_c.value_or(tight_stride(p, Operand::kC));
  }
  return p;
}

std::string check_leading_dimensions(const Problem& p) {
  for (const Operand operand : kOperands) {
    const OperandView o = view(p, operand);
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

std::optional<std::int64_t> operand_bytes(const Problem& p, Operand operand) {
  const OperandView o = view(p, operand);
  const std::optional<std::int64_t> span = span_elements(o);
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
  if (!span || __builtin_mul_overflow(p.batch - 1, o.stride, &elements) ||
      __builtin_add_overflow(elements, *span, &elements) ||
      __builtin_add_overflow(elements, p.offset, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::int64_t>(size_of(o.dtype)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

namespace {

// The fp32 reference: M x N per batch entry.
std::optional<std::int64_t> reference_bytes(const Problem& p) {
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(p.m, p.n, &bytes) || __builtin_mul_overflow(bytes, p.batch, &bytes) ||
      __builtin_mul_overflow(bytes, std::int64_t{sizeof(float)}, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace

std::string check_size(const Problem& p) {
  const std::optional<std::int64_t> c = operand_bytes(p, Operand::kC);
  // One buffer set (A, B, C), the two saved copies of C the checks keep, and
  // the reference.
  const std::optional<std::int64_t> buffers[] = {
      operand_bytes(p, Operand::kA), operand_bytes(p, Operand::kB), c, c, c, reference_bytes(p),
  };
  std::int64_t total = 0;
  for (const std::optional<std::int64_t>& bytes : buffers) {
    if (!bytes || __builtin_add_overflow(total, *bytes, &total)) {
      std::string problem = std::to_string(p.m) + " x " + std::to_string(p.n) + " x " +
                            std::to_string(p.k) + " (lda=" + std::to_string(p.lda) +
                            ", ldb=" + std::to_string(p.ldb) + ", ldc=" + std::to_string(p.ldc);
      if (p.batch > 1) {
        problem += ", batch " + std::to_string(p.batch) + ", strides " +
                   std::to_string(p.stride_a) + ", " + std::to_string(p.stride_b) + ", " +
                   std::to_string(p.stride_c);
      }
      if (p.offset != 0) problem += ", offset " + std::to_string(p.offset);
      return problem + ") needs more than 2^63 bytes of device memory";
    }
  }
  return {};
}

namespace {

// cudaMalloc's alignment, which the bench gives every allocation.
constexpr std::uintptr_t kAllocationAlignment = 256;

std::uintptr_t round_up(std::uintptr_t value) {
  return (value + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

}  // namespace

std::string check_arguments(const Problem& p) {
  // validate() reads no memory: stand-in addresses, laid out as three
  // allocations one after another, give it the real alignments and extents.
  // check_size() has made the sum fit.
  const std::uintptr_t a = kAllocationAlignment;
  const std::uintptr_t b =
      a + round_up(static_cast<std::uintptr_t>(*operand_bytes(p, Operand::kA)));
  const std::uintptr_t c =
      b + round_up(static_cast<std::uintptr_t>(*operand_bytes(p, Operand::kB)));
  const GemmArgs args =
      make_args(p, reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b),
                reinterpret_cast<void*>(c), nullptr);
  if (const Status s = validate(args); !s.ok()) {
    return "tcgemm::validate refuses the problem: " + s.message;
  }
  return {};
}

GemmArgs make_args(const Problem& p, const void* a, const void* b, void* c, cudaStream_t stream) {
  const std::size_t input_offset = static_cast<std::size_t>(p.offset) * size_of(p.input);
  const std::size_t output_offset = static_cast<std::size_t>(p.offset) * size_of(p.output);
  return {
      .m = p.m,
      .n = p.n,
      .k = p.k,
      .a = {.ptr = static_cast<const std::byte*>(a) + input_offset,
            .dtype = p.input,
            .layout = p.layouts.a,
            .ld = p.lda,
            .stride = p.stride_a},
      .b = {.ptr = static_cast<const std::byte*>(b) + input_offset,
            .dtype = p.input,
            .layout = p.layouts.b,
            .ld = p.ldb,
            .stride = p.stride_b},
      .c = {.ptr = static_cast<std::byte*>(c) + output_offset,
            .dtype = p.output,
            .layout = p.layouts.c,
            .ld = p.ldc,
            .stride = p.stride_c},
      .alpha = p.alpha,
      .beta = p.beta,
      .batch_count = p.batch,
      .stream = stream,
  };
}

double flops(const Problem& p) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
         static_cast<double>(p.batch);
}

}  // namespace tcgemm::bench
