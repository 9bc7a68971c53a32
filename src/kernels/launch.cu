#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/launch.cuh"

namespace tcgemm::kernels {

namespace {

// Stands in for a kernel that fills an SM in occupancy queries (every thread a
// block may have, all of the opt-in shared memory); never launched.
constexpr int kMaxThreadsPerBlock = 1024;
__global__ void __launch_bounds__(kMaxThreadsPerBlock) whole_sm_stand_in() {}

}  // namespace

Status max_whole_sm_clusters(int cluster_x, std::size_t smem_optin, int* clusters) {
  *clusters = 0;
  // Set up as the production kernels are (the opt-in size and the largest
  // shared-memory carveout), so that the occupancy calculator sees one CTA
  // per SM.
  if (Status s = allow_dynamic_smem(reinterpret_cast<const void*>(&whole_sm_stand_in), smem_optin,
                                    "cluster occupancy query");
      !s.ok()) {
    return s;
  }
  return max_active_clusters(&whole_sm_stand_in, smem_optin, kMaxThreadsPerBlock, cluster_x,
                             clusters);
}

Status allow_dynamic_smem(const void* kernel, std::size_t bytes, std::string_view name) {
  int device = 0;
  int optin = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  }
  if (err == cudaSuccess && static_cast<std::size_t>(optin) < bytes) {
    return {StatusCode::kNotSupported, std::string(name) + ": needs " + std::to_string(bytes) +
                                           " bytes of shared memory per block, the device allows " +
                                           std::to_string(optin)};
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(bytes));
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  }
  if (err != cudaSuccess) {
    return {StatusCode::kCudaError,
            std::string(name) + ": device setup failed: " + cudaGetErrorString(err)};
  }
  return Status::success();
}

bool print_config_enabled() {
  static const bool enabled = std::getenv("TCGEMM_PRINT_CONFIG") != nullptr;
  return enabled;
}

bool programmatic_launch_enabled() {
  static const bool enabled = std::getenv("TCGEMM_DISABLE_PDL") == nullptr;
  return enabled;
}

void print_config(std::string_view name, dim3 grid, int threads, std::size_t smem_bytes,
                  int cluster_x) {
  std::fprintf(stderr, "tcgemm: %.*s grid=%ux%u threads=%d smem=%zu cluster=%d\n",
               static_cast<int>(name.size()), name.data(), grid.x, grid.y, threads, smem_bytes,
               cluster_x);
}

}  // namespace tcgemm::kernels
