// The CPU reference: textbook triple loop in double, for small test problems
// where even the GPU reference kernel should be checked against something.
#include "testing/testing.h"

namespace tcgemm::testing {
namespace {

double at(const std::vector<float>& data, Layout layout, std::int64_t ld, std::int64_t row,
          std::int64_t col) {
  const std::int64_t offset = layout == Layout::kRowMajor ? row * ld + col : row + col * ld;
  return static_cast<double>(data[static_cast<std::size_t>(offset)]);
}

}  // namespace

std::vector<double> cpu_reference_gemm(const GemmArgs& args, const std::vector<float>& a,
                                       const std::vector<float>& b, const std::vector<float>& c) {
  if (args.m <= 0 || args.n <= 0) return {};
  std::vector<double> out(static_cast<std::size_t>(args.m * args.n));
  for (std::int64_t col = 0; col < args.n; ++col) {
    for (std::int64_t row = 0; row < args.m; ++row) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < args.k; ++p) {
        acc += at(a, args.a.layout, args.a.ld, row, p) * at(b, args.b.layout, args.b.ld, p, col);
      }
      double value = static_cast<double>(args.alpha) * acc;
      // BLAS semantics: with beta == 0, C is not read.
      if (args.beta != 0.0f) {
        value += static_cast<double>(args.beta) * at(c, args.c.layout, args.c.ld, row, col);
      }
      out[static_cast<std::size_t>(row + col * args.m)] = value;
    }
  }
  return out;
}

}  // namespace tcgemm::testing
