// A GEMM problem for the strict tests of the product call (tcgemm::gemm with
// the dispatcher): every operand lives in its own allocation with a guard band
// before and after it, any storage order, leading dimension, 1-element base
// offset and batch stride, and every byte of every allocation is known on the
// host:
//
// - the elements of the matrices hold seeded values (normal(0, 1), or small
//   integers for the exact check), keyed by their position in memory, so a
//   batch stride of 0, or input entries that overlap, read the same values;
// - everything else (the guard bands, the padding between the rows or columns
//   of a sub-view, the gaps between batch entries) holds a NaN with a payload
//   (guard_bits): in A and B a kernel that lets one of those reach its sums
//   fails the value checks (user padding may hold anything, NaN included), and
//   in C every one of those bytes must come back bit-identical;
// - with beta == 0 the elements of C start as the NaN poison fill_poison()
//   writes, so an element the kernel does not write fails.
//
// Checks (each appends what it found to a list of findings, empty = pass):
// check_close (relative Frobenius error of each batch entry against the
// reference GEMM of src/testing, under tolerance_for(out)), check_exact (with
// small-integer inputs the fp32 sums are exact, so every element must equal
// the reference after rounding to the output dtype), check_outside_c (no byte
// of C's allocation outside the matrices changed).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

namespace tcgemm_test {

// ---- host-side element coding ------------------------------------------------------

// float -> bf16 bits, round to nearest even (what __float2bfloat16_rn does).
inline std::uint16_t float_to_bf16_bits(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

// float -> fp16 bits, round to nearest even, subnormals and overflow to
// infinity included (what __float2half_rn does).
inline std::uint16_t float_to_half_bits(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (x >= 0x38800000u) {  // normal in fp16 (>= 2^-14): rebias, round off 13 bits
    x -= 0x38000000u;
    x += 0x0fffu + ((x >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (x >> 13));
  }
  if (x < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to 0
  // Subnormal: the value is mant * 2^(e - 150); in units of 2^-24 that is
  // mant >> (126 - e), rounded to nearest even.
  const std::uint32_t e = x >> 23;
  const std::uint32_t mant = (x & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - e;  // 14 .. 24
  std::uint32_t r = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return static_cast<std::uint16_t>(sign | r);
}

inline std::uint32_t encode(float v, DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return float_to_bf16_bits(v);
    case DType::kFP16:
      return float_to_half_bits(v);
    case DType::kFP32:
      break;
  }
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

inline float decode(std::uint32_t bits, DType dtype) {
  float f;
  switch (dtype) {
    case DType::kBF16: {
      const std::uint32_t wide = bits << 16;
      std::memcpy(&f, &wide, sizeof f);
      return f;
    }
    case DType::kFP16:
      return half_bits_to_float(static_cast<std::uint16_t>(bits));
    case DType::kFP32:
      break;
  }
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// v rounded to `dtype` (to nearest even) and back.
inline float round_to(DType dtype, float v) { return decode(encode(v, dtype), dtype); }

// What fills every byte of an allocation that is not a matrix element: a NaN
// with a payload. GPU arithmetic never produces these bits (its NaNs are
// canonical), so a kernel that copies, scales or recomputes one changes it.
inline std::uint32_t guard_bits(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return 0x7fa5u;
    case DType::kFP16:
      return 0x7d5au;
    case DType::kFP32:
      break;
  }
  return 0x7fa5a5a5u;
}

// What the elements of C start as when beta == 0: fill_poison()'s quiet NaN.
inline std::uint32_t unwritten_bits(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return 0x7fc0u;
    case DType::kFP16:
      return 0x7e00u;
    case DType::kFP32:
      break;
  }
  return 0x7fc00000u;
}

// ---- seeded values, keyed by position ------------------------------------------------

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline std::uint64_t hash_at(std::uint64_t key, std::int64_t pos) {
  return mix64(key + (static_cast<std::uint64_t>(pos) + 1) * 0x9E3779B97F4A7C15ull);
}

// normal(0, 1) by Box-Muller on 48 hash bits.
inline float normal_at(std::uint64_t key, std::int64_t pos) {
  const std::uint64_t h = hash_at(key, pos);
  const double u1 = static_cast<double>((h >> 40) + 1) * 0x1p-24;  // (0, 1]
  const double u2 = static_cast<double>(h & 0xffffffull) * 0x1p-24;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

// The small integers of the exact check: uniform in {-3, ..., -1, 1, ..., 3}.
// No zeros: with K == 1 every product is nonzero, so where beta != 0 an
// element the kernel leaves unwritten (still beta-free C) differs from
// alpha * A * B + beta * C (for K > 1 all but a few percent of elements do).
inline constexpr int kSmallIntegerBound = 3;
inline float small_integer_at(std::uint64_t key, std::int64_t pos) {
  const std::uint64_t h = hash_at(key, pos);
  const int v = static_cast<int>((h >> 32) % (2 * kSmallIntegerBound)) - kSmallIntegerBound;
  return static_cast<float>(v >= 0 ? v + 1 : v);
}

// ---- a host image of one device allocation --------------------------------------------

class HostImage {
 public:
  HostImage() = default;
  HostImage(DType dtype, std::int64_t count, std::uint32_t fill)
      : dtype_(dtype),
        elem_(tcgemm::size_of(dtype)),
        bytes_(static_cast<std::size_t>(count) * elem_) {
    for (std::int64_t i = 0; i < count; ++i) set_bits(i, fill);
  }

  DType dtype() const { return dtype_; }
  std::int64_t count() const { return static_cast<std::int64_t>(bytes_.size() / elem_); }
  std::size_t size_bytes() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  std::uint32_t bits(std::int64_t i) const {
    if (elem_ == 2) {
      std::uint16_t b;
      std::memcpy(&b, &bytes_[static_cast<std::size_t>(i) * 2], 2);
      return b;
    }
    std::uint32_t b;
    std::memcpy(&b, &bytes_[static_cast<std::size_t>(i) * 4], 4);
    return b;
  }
  void set_bits(std::int64_t i, std::uint32_t b) {
    if (elem_ == 2) {
      const auto h = static_cast<std::uint16_t>(b);
      std::memcpy(&bytes_[static_cast<std::size_t>(i) * 2], &h, 2);
    } else {
      std::memcpy(&bytes_[static_cast<std::size_t>(i) * 4], &b, 4);
    }
  }
  float value(std::int64_t i) const { return decode(bits(i), dtype_); }
  void set_value(std::int64_t i, float v) { set_bits(i, encode(v, dtype_)); }

  bool operator==(const HostImage& other) const { return bytes_ == other.bytes_; }

 private:
  DType dtype_ = DType::kBF16;
  std::size_t elem_ = 2;
  std::vector<unsigned char> bytes_;
};

// ---- where an operand's elements live --------------------------------------------------

// One operand of a batched problem inside its allocation:
//   [guard][offset][entry 0 ... entry batch-1 at multiples of stride][guard]
// Element (i, j) of entry b is at index(b, i, j) (in elements from the start
// of the allocation).
struct OperandLayout {
  DType dtype = DType::kBF16;
  Layout layout = Layout::kRowMajor;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  std::int64_t stride = 0;  // between batch entries (any value >= 0 when batch == 1)
  std::int64_t batch = 1;
  std::int64_t offset = 0;  // elements between the guard and entry 0's (0, 0)
  std::int64_t guard = 0;   // elements of guard band before and after

  std::int64_t row_step() const { return layout == Layout::kRowMajor ? ld : 1; }
  std::int64_t col_step() const { return layout == Layout::kRowMajor ? 1 : ld; }
  std::int64_t entry_span() const { return tcgemm::testing::span_elements(rows, cols, layout, ld); }
  std::int64_t first() const { return guard + offset; }
  // One past the last element of the last entry.
  std::int64_t end() const { return first() + (batch - 1) * stride + entry_span(); }
  std::int64_t total() const { return end() + guard; }
  std::int64_t index(std::int64_t b, std::int64_t i, std::int64_t j) const {
    return first() + b * stride + i * row_step() + j * col_step();
  }
  // Entries whose elements are distinct memory (a stride of 0 repeats entry 0).
  std::int64_t distinct_entries() const { return stride == 0 ? 1 : batch; }
};

// A device allocation laid out as `shape`, with its host image.
struct GuardedOperand {
  OperandLayout shape;
  DeviceBuffer buffer;
  HostImage image;  // what the device buffer holds since the last upload()

  GuardedOperand() = default;
  explicit GuardedOperand(const OperandLayout& s)
      : shape(s),
        buffer(static_cast<std::size_t>(s.total()) * tcgemm::size_of(s.dtype)),
        image(s.dtype, s.total(), guard_bits(s.dtype)) {}

  // Device address of entry b's element (0, 0).
  void* entry(std::int64_t b) const {
    return static_cast<unsigned char*>(buffer.get()) +
           static_cast<std::size_t>(shape.first() + b * shape.stride) *
               tcgemm::size_of(shape.dtype);
  }
  // Sets every element of every entry from value(position) (everything else
  // keeps the guard pattern).
  template <typename ValueAt>
  void set_elements(ValueAt value) {
    image = HostImage(shape.dtype, shape.total(), guard_bits(shape.dtype));
    for (std::int64_t b = 0; b < shape.distinct_entries(); ++b) {
      for (std::int64_t j = 0; j < shape.cols; ++j) {
        for (std::int64_t i = 0; i < shape.rows; ++i) {
          const std::int64_t pos = shape.index(b, i, j);
          image.set_value(pos, value(pos));
        }
      }
    }
  }
  void upload() const {
    TCGEMM_CHECK_CUDA(
        cudaMemcpy(buffer.get(), image.data(), image.size_bytes(), cudaMemcpyHostToDevice));
  }
  HostImage download() const {
    HostImage now(shape.dtype, shape.total(), 0);
    TCGEMM_CHECK_CUDA(
        cudaMemcpy(now.data(), buffer.get(), now.size_bytes(), cudaMemcpyDeviceToHost));
    return now;
  }
};

// ---- a problem case ---------------------------------------------------------------------

// How the batch entries of A, B and C are placed (strides from the spans of
// the entries, which depend on the leading dimensions).
enum class BatchMode : int {
  kSingle,             // batch_count 1
  kTight,              // entries back to back (stride = span) in A, B and C
  kSharedB,            // B's stride 0 (one weight matrix for every entry)
  kSharedA,            // A's stride 0; a gap of 2 elements between C's entries
  kPadded,             // gaps between entries: strides span + 3 (A), + 5 (B), + 7 (C)
  kCSideBySide,        // C's entries side by side within each line (ldc spans them all)
  kOverlappingInputs,  // A's stride 1 element, B's one line: input entries overlap
  kCInterleaved,       // C's entry b starts b lines down, beside the entries before it
};

inline const char* to_string(BatchMode mode) {
  switch (mode) {
    case BatchMode::kSingle:
      return "single";
    case BatchMode::kTight:
      return "tight";
    case BatchMode::kSharedB:
      return "shared-B";
    case BatchMode::kSharedA:
      return "shared-A";
    case BatchMode::kPadded:
      return "padded";
    case BatchMode::kCSideBySide:
      return "C-side-by-side";
    case BatchMode::kOverlappingInputs:
      return "overlapping-inputs";
    case BatchMode::kCInterleaved:
      return "C-interleaved";
  }
  return "?";
}

// Elements of guard band around each operand in most tests.
inline constexpr std::int64_t kDefaultGuard = 256;

struct GemmCase {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  Layout la = Layout::kRowMajor;
  Layout lb = Layout::kColMajor;
  Layout lc = Layout::kColMajor;
  DType in = DType::kBF16;
  DType out = DType::kBF16;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::int64_t lda_pad = 0;  // elements beyond the tight leading dimension
  std::int64_t ldb_pad = 0;
  std::int64_t ldc_pad = 0;
  std::int64_t a_offset = 0;  // elements past an aligned address (1: 2-byte aligned)
  std::int64_t b_offset = 0;
  std::int64_t c_offset = 0;
  BatchMode batch = BatchMode::kSingle;
  std::int64_t batch_count = 3;  // entries when batch != kSingle
  // Guard band, in elements, around each operand. The sanitizer subset uses
  // 0, so that an access past an operand leaves its allocation and
  // compute-sanitizer memcheck reports it.
  std::int64_t guard = kDefaultGuard;
  std::uint64_t seed = 1;
};

struct CaseLayouts {
  OperandLayout a;
  OperandLayout b;
  OperandLayout c;
};

inline CaseLayouts layouts_of(const GemmCase& c) {
  CaseLayouts l;
  const std::int64_t batch = c.batch == BatchMode::kSingle ? 1 : c.batch_count;
  auto base = [&](DType dtype, Layout layout, std::int64_t rows, std::int64_t cols,
                  std::int64_t pad, std::int64_t offset) {
    OperandLayout o;
    o.dtype = dtype;
    o.layout = layout;
    o.rows = rows;
    o.cols = cols;
    o.ld = tight_ld(rows, cols, layout) + pad;
    o.batch = batch;
    o.offset = offset;
    o.guard = c.guard;
    return o;
  };
  l.a = base(c.in, c.la, c.m, c.k, c.lda_pad, c.a_offset);
  l.b = base(c.in, c.lb, c.k, c.n, c.ldb_pad, c.b_offset);
  l.c = base(c.out, c.lc, c.m, c.n, c.ldc_pad, c.c_offset);
  const std::int64_t c_line = c.lc == Layout::kRowMajor ? c.n : c.m;
  switch (c.batch) {
    case BatchMode::kSingle:
      break;
    case BatchMode::kTight:
      l.a.stride = l.a.entry_span();
      l.b.stride = l.b.entry_span();
      l.c.stride = l.c.entry_span();
      break;
    case BatchMode::kSharedB:
      l.a.stride = l.a.entry_span();
      l.b.stride = 0;
      l.c.stride = l.c.entry_span();
      break;
    case BatchMode::kSharedA:
      l.a.stride = 0;
      l.b.stride = l.b.entry_span();
      l.c.stride = l.c.entry_span() + 2;
      break;
    case BatchMode::kPadded:
      l.a.stride = l.a.entry_span() + 3;
      l.b.stride = l.b.entry_span() + 5;
      l.c.stride = l.c.entry_span() + 7;
      break;
    case BatchMode::kCSideBySide:
      // Entry b of C starts b * (line + 1) elements into each line; ldc holds
      // all of them (the gaps of 1 and the pad are guard).
      l.a.stride = l.a.entry_span();
      l.b.stride = l.b.entry_span();
      l.c.stride = c_line + 1;
      l.c.ld = c_line + (batch - 1) * l.c.stride + c.ldc_pad;
      break;
    case BatchMode::kOverlappingInputs:
      l.a.stride = 1;
      l.b.stride = l.b.ld;
      l.c.stride = l.c.entry_span();
      break;
    case BatchMode::kCInterleaved:
      // As kCSideBySide, but entry b also starts b lines down: its line i
      // lies beside entry 0's line i + b. Each entry starts inside the span
      // of the ones before it, and no two share an element.
      l.a.stride = l.a.entry_span();
      l.b.stride = l.b.entry_span();
      l.c.ld = c_line + (batch - 1) * (c_line + 1) + c.ldc_pad;
      l.c.stride = l.c.ld + c_line + 1;
      break;
  }
  return l;
}

inline std::string layout_name(Layout l) { return l == Layout::kRowMajor ? "row" : "col"; }

// Every parameter of a case, resolved (leading dimensions and strides as
// numbers), on one line.
inline std::string describe_case(const GemmCase& c) {
  const CaseLayouts l = layouts_of(c);
  std::ostringstream os;
  os << "m=" << c.m << " n=" << c.n << " k=" << c.k << " A=" << layout_name(c.la)
     << " B=" << layout_name(c.lb) << " C=" << layout_name(c.lc) << " ("
     << (c.la == Layout::kRowMajor ? 'T' : 'N') << (c.lb == Layout::kRowMajor ? 'T' : 'N')
     << (c.lc == Layout::kRowMajor ? "_Crow" : "_Ccol") << ") " << tcgemm::to_string(c.in) << "->"
     << tcgemm::to_string(c.out) << " alpha=" << c.alpha << " beta=" << c.beta << " lda=" << l.a.ld
     << " (tight+" << c.lda_pad << ") ldb=" << l.b.ld << " (tight+" << c.ldb_pad
     << ") ldc=" << l.c.ld << " (+" << c.ldc_pad << ") offsets a=" << c.a_offset
     << " b=" << c.b_offset << " c=" << c.c_offset << " batch=" << l.c.batch << " "
     << to_string(c.batch);
  if (l.c.batch > 1) {
    os << " (strides a=" << l.a.stride << " b=" << l.b.stride << " c=" << l.c.stride << ")";
  }
  os << " guard=" << c.guard << " seed=0x" << std::hex << c.seed << std::dec;
  return os.str();
}

using Findings = std::vector<std::string>;

enum class Values { kNormal, kSmallIntegers };

// A case on the device: A, B and C in guarded allocations, and args pointing
// at them (no workspace).
class GuardedProblem {
 public:
  explicit GuardedProblem(const GemmCase& c) : case_(c) {
    const CaseLayouts l = layouts_of(c);
    a_ = GuardedOperand(l.a);
    b_ = GuardedOperand(l.b);
    c_ = GuardedOperand(l.c);
    in_c_.assign(static_cast<std::size_t>(l.c.total()), 0);
    for (std::int64_t b = 0; b < l.c.batch; ++b) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        for (std::int64_t i = 0; i < c.m; ++i) in_c_[l.c.index(b, i, j)] = 1;
      }
    }
    args_.m = c.m;
    args_.n = c.n;
    args_.k = c.k;
    args_.alpha = c.alpha;
    args_.beta = c.beta;
    args_.batch_count = l.c.batch;
    args_.a = {a_.entry(0), c.in, c.la, l.a.ld, l.a.stride};
    args_.b = {b_.entry(0), c.in, c.lb, l.b.ld, l.b.stride};
    args_.c = {c_.entry(0), c.out, c.lc, l.c.ld, l.c.stride};
  }

  const GemmArgs& args() const { return args_; }
  const GemmCase& spec() const { return case_; }
  const OperandLayout& c_layout() const { return c_.shape; }
  // The allocations (the harness's own tests corrupt them on purpose).
  const GuardedOperand& a_operand() const { return a_; }
  const GuardedOperand& c_operand() const { return c_; }

  // New values in A and B, and in C when beta != 0 (with beta == 0 C's
  // elements are the unwritten poison); uploads all three allocations.
  void fill(Values values) {
    values_ = values;
    const std::uint64_t tag = values == Values::kNormal ? 0x100 : 0x200;
    const std::uint64_t key_a = mix64(case_.seed ^ (tag + 1));
    const std::uint64_t key_b = mix64(case_.seed ^ (tag + 2));
    const std::uint64_t key_c = mix64(case_.seed ^ (tag + 3));
    auto pick = [values](std::uint64_t key) {
      return [key, values](std::int64_t pos) {
        return values == Values::kNormal ? normal_at(key, pos) : small_integer_at(key, pos);
      };
    };
    a_.set_elements(pick(key_a));
    b_.set_elements(pick(key_b));
    if (case_.beta != 0.0f) {
      c_.set_elements(pick(key_c));
    } else {
      const float poison = decode(unwritten_bits(case_.out), case_.out);
      c_.set_elements([poison](std::int64_t) { return poison; });
    }
    a_.upload();
    b_.upload();
    c_.upload();
  }

  // C as fill() left it (for a second run on the same inputs).
  void reset_c() const { c_.upload(); }
  HostImage download_c() const { return c_.download(); }

  // The reference result (testing::reference_gemm, fp32 accumulation) of
  // every batch entry, computed from the device buffers as they are now:
  // entry b's M x N values, column-major, at [b * M * N].
  std::vector<float> reference() const {
    const std::int64_t mn = case_.m * case_.n;
    const std::int64_t batch = args_.batch_count;
    DeviceBuffer ref(bytes_for(mn * batch, DType::kFP32));
    for (std::int64_t b = 0; b < batch; ++b) {
      GemmArgs one = args_;
      one.batch_count = 1;
      one.a.ptr = a_.entry(b);
      one.b.ptr = b_.entry(b);
      one.c.ptr = c_.entry(b);
      tcgemm::testing::reference_gemm(one, static_cast<float*>(ref.get()) + b * mn);
    }
    std::vector<float> host(static_cast<std::size_t>(mn * batch));
    TCGEMM_CHECK_CUDA(
        cudaMemcpy(host.data(), ref.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
  }

  // Relative Frobenius error of each entry under tolerance_for(out); any
  // non-finite element fails.
  void check_close(const HostImage& c, const std::vector<float>& ref, const std::string& what,
                   Findings& findings) const {
    const double tol = tcgemm::testing::tolerance_for(case_.out);
    const std::int64_t mn = case_.m * case_.n;
    int reported = 0;
    std::int64_t bad_entries = 0;
    for (std::int64_t b = 0; b < args_.batch_count; ++b) {
      double err2 = 0.0;
      double ref2 = 0.0;
      tcgemm::testing::ErrorStats e;
      std::int64_t first_nonfinite = -1;
      for (std::int64_t j = 0; j < case_.n; ++j) {
        for (std::int64_t i = 0; i < case_.m; ++i) {
          const double got = c.value(c_.shape.index(b, i, j));
          const double expected = ref[static_cast<std::size_t>(b * mn + i + j * case_.m)];
          if (!std::isfinite(got)) {
            if (e.nonfinite++ == 0) first_nonfinite = i + j * case_.m;
            continue;
          }
          const double diff = std::fabs(got - expected);
          err2 += diff * diff;
          ref2 += expected * expected;
          if (e.max_row < 0 || diff > e.max_abs) {
            e.max_abs = diff;
            e.max_row = i;
            e.max_col = j;
          }
        }
      }
      e.rel_fro = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
      if (e.passed(tol)) continue;
      ++bad_entries;
      if (reported++ < 3) {
        std::ostringstream os;
        os << what << ": entry " << b << ": rel_fro=" << e.rel_fro << " (tolerance " << tol
           << ") max_abs=" << e.max_abs << " at (" << e.max_row << ", " << e.max_col
           << ") nonfinite=" << e.nonfinite;
        if (first_nonfinite >= 0) {
          os << " (first at (" << first_nonfinite % case_.m << ", " << first_nonfinite / case_.m
             << "))";
        }
        findings.push_back(os.str());
      }
    }
    if (bad_entries > reported) {
      findings.push_back(what + ": " + std::to_string(bad_entries) + " of " +
                         std::to_string(args_.batch_count) + " entries fail the tolerance");
    }
  }

  // Every element equals the reference rounded to the output dtype (values
  // compared, so -0 equals +0; NaN equals nothing). Needs fill(kSmallIntegers):
  // then every product and partial sum is a small integer, exact in fp32 in
  // any order, and the rounding to the output happens once, to nearest even.
  void check_exact(const HostImage& c, const std::vector<float>& ref, const std::string& what,
                   Findings& findings) const {
    const std::int64_t mn = case_.m * case_.n;
    std::int64_t wrong = 0;
    std::int64_t not_integer = 0;
    std::ostringstream first;
    for (std::int64_t b = 0; b < args_.batch_count; ++b) {
      for (std::int64_t j = 0; j < case_.n; ++j) {
        for (std::int64_t i = 0; i < case_.m; ++i) {
          const float r = ref[static_cast<std::size_t>(b * mn + i + j * case_.m)];
          if (r != std::nearbyint(r)) ++not_integer;
          const float expected = round_to(case_.out, r);
          const std::int64_t pos = c_.shape.index(b, i, j);
          const float got = c.value(pos);
          if (got == expected) continue;
          if (wrong++ < 4) {
            first << " entry " << b << " (" << i << ", " << j << "): got " << got << " (bits 0x"
                  << std::hex << c.bits(pos) << std::dec << "), expected " << expected << ";";
          }
        }
      }
    }
    if (values_ != Values::kSmallIntegers || not_integer > 0) {
      findings.push_back(what + ": the exact check needs small-integer inputs, and " +
                         std::to_string(not_integer) +
                         " reference values are not integers (test defect)");
    }
    if (wrong > 0) {
      findings.push_back(what + ": " + std::to_string(wrong) + " of " +
                         std::to_string(mn * args_.batch_count) +
                         " elements differ from the exactly rounded reference:" + first.str());
    }
  }

  // A and B hold, bit for bit, what fill() uploaded: a kernel never writes
  // its inputs (nor their padding and guard bands).
  void check_inputs_unchanged(const std::string& what, Findings& findings) const {
    const std::pair<const char*, const GuardedOperand*> inputs[] = {{"A", &a_}, {"B", &b_}};
    for (const auto& [name, operand] : inputs) {
      const HostImage now = operand->download();
      if (now == operand->image) continue;
      std::int64_t changed = 0;
      for (std::int64_t i = 0; i < now.count(); ++i)
        changed += now.bits(i) != operand->image.bits(i);
      findings.push_back(what + ": " + std::to_string(changed) + " element(s) of " + name +
                         "'s allocation changed (an input was written)");
    }
  }

  // Every element of C's allocation that is not an element of an entry (the
  // guard bands, the padding of each line beyond M or N, the gaps between
  // entries) has the bits fill() gave it.
  void check_outside_c(const HostImage& c, const std::string& what, Findings& findings) const {
    const OperandLayout& s = c_.shape;
    std::int64_t changed = 0;
    std::ostringstream first;
    for (std::int64_t pos = 0; pos < s.total(); ++pos) {
      if (in_c_[static_cast<std::size_t>(pos)] || c.bits(pos) == c_.image.bits(pos)) continue;
      if (changed++ < 4) {
        first << " ";
        if (pos < s.first()) {
          first << s.first() - pos << " element(s) before C";
        } else if (pos >= s.end()) {
          first << pos - s.end() + 1 << " element(s) after the last entry's last element";
        } else {
          const std::int64_t rel = pos - s.first();
          first << "padding at line " << rel / s.ld << ", position " << rel % s.ld << " of ld "
                << s.ld << " (from entry 0's first element)";
        }
        first << " now 0x" << std::hex << c.bits(pos) << std::dec << ";";
      }
    }
    if (changed > 0) {
      findings.push_back(
          what + ": " + std::to_string(changed) +
          " element(s) of C's allocation outside the matrices changed:" + first.str());
    }
  }

 private:
  GemmCase case_;
  GuardedOperand a_;
  GuardedOperand b_;
  GuardedOperand c_;
  std::vector<unsigned char> in_c_;  // 1 where C's allocation holds an element of an entry
  GemmArgs args_;
  Values values_ = Values::kNormal;
};

// Elements that differ between two images of one allocation (0: bit-identical);
// `first` gets the index of the first.
inline std::int64_t count_differences(const HostImage& x, const HostImage& y, std::int64_t& first) {
  first = -1;
  if (x == y) return 0;
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < x.count(); ++i) {
    if (x.bits(i) != y.bits(i) && differ++ == 0) first = i;
  }
  return differ;
}

// One workspace for a run of cases, as the README allows: zeroed once when it
// is allocated (or grown) and then reused by every call, each kernel leaving
// what it needs zero.
class SharedWorkspace {
 public:
  // Gives args tcgemm::workspace_size(args, options) bytes of the shared
  // buffer (none when that is 0); returns the byte count.
  std::size_t attach(GemmArgs& args, const tcgemm::GemmOptions& options = {}) {
    args.workspace = nullptr;
    args.workspace_bytes = 0;
    const std::size_t need = tcgemm::workspace_size(args, options);
    if (need == 0) return 0;
    if (need > buffer_.bytes()) {
      buffer_ = DeviceBuffer();  // free the old one first
      buffer_ = attach_workspace(args, need);
    }
    args.workspace = buffer_.get();
    args.workspace_bytes = need;
    return need;
  }

 private:
  DeviceBuffer buffer_;
};

}  // namespace tcgemm_test
