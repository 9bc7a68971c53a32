// count_resident_clusters (resident_clusters.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "testing/resident_clusters.h"

namespace tcgemm::testing {
namespace {

constexpr std::uint64_t kHoldNs = 300'000;
constexpr std::uint64_t kFirstWaveNs = 100'000;

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_sm(std::uint64_t* start_ns) {
  if (threadIdx.x != 0) return;
  const std::uint64_t t0 = global_ns();
  start_ns[blockIdx.x] = t0;
  while (global_ns() < t0 + kHoldNs) {
  }
}

ClusterCount failed(ClusterCount count, const char* what, cudaError_t err) {
  static_cast<void>(cudaGetLastError());
  count.error = std::string(what) + ": " + cudaGetErrorString(err);
  return count;
}

}  // namespace

ClusterCount count_resident_clusters(int cluster_size, int clusters, int threads) {
  ClusterCount count;
  if (cluster_size < 1 || clusters < 1 || threads < 1) {
    count.error = "cluster_size, clusters and threads must be at least 1";
    return count;
  }
  int device = 0;
  int optin = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(hold_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(hold_sm, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(hold_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  }
  if (err != cudaSuccess) return failed(count, "setup", err);
  const int ctas = clusters * cluster_size;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(cluster_size);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(ctas));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(optin);
  config.attrs = &attr;
  config.numAttrs = 1;
  if (err = cudaOccupancyMaxActiveClusters(&count.queried, hold_sm, &config); err != cudaSuccess) {
    return failed(count, "cudaOccupancyMaxActiveClusters", err);
  }
  std::uint64_t* start_ns = nullptr;
  if (err = cudaMalloc(&start_ns, sizeof(std::uint64_t) * ctas); err != cudaSuccess) {
    return failed(count, "cudaMalloc", err);
  }
  // Nothing of ours may hold an SM when the launch starts.
  err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaLaunchKernelEx(&config, hold_sm, start_ns);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  std::vector<std::uint64_t> starts(static_cast<std::size_t>(ctas));
  if (err == cudaSuccess) {
    err = cudaMemcpy(starts.data(), start_ns, sizeof(std::uint64_t) * ctas, cudaMemcpyDeviceToHost);
  }
  static_cast<void>(cudaFree(start_ns));
  if (err != cudaSuccess) return failed(count, "launch", err);
  const std::uint64_t first = *std::min_element(starts.begin(), starts.end());
  for (int c = 0; c < clusters; ++c) {
    const auto begin = starts.begin() + static_cast<std::ptrdiff_t>(c) * cluster_size;
    if (std::all_of(begin, begin + cluster_size,
                    [&](std::uint64_t t) { return t < first + kFirstWaveNs; })) {
      ++count.together;
    }
  }
  return count;
}

}  // namespace tcgemm::testing
