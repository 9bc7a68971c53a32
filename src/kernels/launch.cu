#include <cstdio>
#include <cstdlib>

#include "kernels/launch.cuh"

namespace tcgemm::kernels {

bool print_config_enabled() {
  static const bool enabled = std::getenv("TCGEMM_PRINT_CONFIG") != nullptr;
  return enabled;
}

void print_config(std::string_view name, dim3 grid, int threads, std::size_t smem_bytes,
                  int cluster_x) {
  std::fprintf(stderr, "tcgemm: %.*s grid=%ux%u threads=%d smem=%zu cluster=%d\n",
               static_cast<int>(name.size()), name.data(), grid.x, grid.y, threads, smem_bytes,
               cluster_x);
}

}  // namespace tcgemm::kernels
