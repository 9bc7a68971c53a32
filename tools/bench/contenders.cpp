#include "contenders.h"

#include <algorithm>

namespace tcgemm::bench {

bool kernel_selected(std::string_view name, const std::vector<std::string>& filters) {
  return filters.empty() || std::any_of(filters.begin(), filters.end(), [name](const auto& f) {
           return name.find(f) != std::string_view::npos;
         });
}

std::vector<Contender> select_contenders(const std::vector<std::string>& filters) {
  std::vector<Contender> contenders;
  for (const KernelInfo& kernel : registry()) {
    if (kernel_selected(kernel.name, filters)) {
      contenders.push_back({Contender::Kind::kRegistry, kernel.name, &kernel});
    }
  }
  if (kernel_selected(kDispatcherName, filters)) {
    contenders.push_back({Contender::Kind::kDispatcher, kDispatcherName});
  }
  contenders.push_back({Contender::Kind::kCublas, kCublasName});
  return contenders;
}

}  // namespace tcgemm::bench
