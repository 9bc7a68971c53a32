#include "problems.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <system_error>

namespace tcgemm::tune {

std::optional<bench::Shape> parse_shape(std::string_view text) {
  std::int64_t dims[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find_first_of("xX") : text.size();
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view part = text.substr(0, end);
    const char* last = part.data() + part.size();
    const std::from_chars_result read = std::from_chars(part.data(), last, dims[i]);
    if (part.empty() || read.ec != std::errc() || read.ptr != last || dims[i] < 1 ||
        dims[i] > kMaxExtent) {
      return std::nullopt;
    }
    text.remove_prefix(i < 2 ? end + 1 : end);
  }
  return bench::Shape{.m = dims[0], .n = dims[1], .k = dims[2]};
}

ProblemList make_problems(std::span<const bench::Shape> shapes, std::span<const DType> dtypes,
                          std::optional<DType> output,
                          std::span<const bench::OperandLayouts> layouts) {
  ProblemList list;
  for (const DType dtype : dtypes) {
    for (const bench::OperandLayouts& layout : layouts) {
      for (const bench::Shape& shape : shapes) {
        const bench::Problem p = bench::make_problem(shape, dtype, output, layout, 1.0f, 0.0f);
        for (const auto check :
             {bench::check_leading_dimensions, bench::check_size, bench::check_arguments}) {
          if (std::string error = check(p); !error.empty()) {
            list.error = std::move(error);
            return list;
          }
        }
        const ShapeKey key = key_of(p);
        if (std::find(list.keys.begin(), list.keys.end(), key) != list.keys.end()) continue;
        list.problems.push_back(p);
        list.keys.push_back(key);
      }
    }
  }
  return list;
}

}  // namespace tcgemm::tune
