// The rows of tcgemm-bench's reports: which kernels run, as --kernels selects
// them. Pure host code (it reads the registry), unit-tested on the CPU
// (tests/host/test_bench_shapes.cpp).
#pragma once

#include <tcgemm/registry.h>

#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::bench {

// The name of cuBLAS's row in every report.
inline constexpr std::string_view kCublasName = "cublas";
// The name of the row that runs tcgemm::gemm with default options: whatever
// the dispatcher picks, the product as a user gets it.
inline constexpr std::string_view kDispatcherName = "tcgemm";

// What one row of a report runs.
struct Contender {
  enum class Kind {
    kRegistry,    // one registry kernel, by name (GemmOptions::kernel)
    kDispatcher,  // tcgemm::gemm with default options
    kCublas,
  };
  Kind kind = Kind::kCublas;
  std::string_view name;               // the row's name: the kernel's, "tcgemm" or "cublas"
  const KernelInfo* kernel = nullptr;  // kRegistry only
};

// True when `name` contains one of the filters (or there are none).
bool kernel_selected(std::string_view name, const std::vector<std::string>& filters);

// The rows of every problem, in this order: the registry kernels whose names
// `filters` select (registry order), the dispatcher's row when its name
// "tcgemm" is selected the same way, and cuBLAS, always (the baseline every
// ratio is taken against).
std::vector<Contender> select_contenders(const std::vector<std::string>& filters);

}  // namespace tcgemm::bench
