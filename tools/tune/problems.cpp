#include "problems.h"

#include <algorithm>
#include <cstdint>

namespace tcgemm::tune {

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
