// tcgemm-cluster-probe: how many clusters of whole-SM CTAs this GPU runs at
// once, counted by a launch, beside what cudaOccupancyMaxActiveClusters says
// (the count the device model takes, DeviceModel::pair_clusters).
//
//   tcgemm-cluster-probe
//
// For cluster sizes 1, 2, 4 and 8 and 128, 384 and 1024 threads per CTA, it
// launches (SMs / size) clusters whose CTAs each ask for the opt-in shared
// memory, so that an SM holds one. Thread 0 of each CTA records the global
// timer, then spins for 300 us. CTAs that start within 100 us of
// the first are resident together; the rest waited for an SM to free up.
// docs/production.md has what the H200 did (66 clusters of 2, 30 of 4).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::uint64_t kSpinNs = 300'000;
constexpr std::uint64_t kFirstWaveNs = 100'000;

#define CHECK_CUDA(call)                                                                 \
  do {                                                                                   \
    const cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_sm(std::uint64_t* start_ns) {
  if (threadIdx.x != 0) return;
  const std::uint64_t t0 = global_ns();
  start_ns[blockIdx.x] = t0;
  while (global_ns() < t0 + kSpinNs) {
  }
}

}  // namespace

int main() {
  int device = 0;
  int sms = 0;
  int optin = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  CHECK_CUDA(cudaFuncSetAttribute(hold_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  CHECK_CUDA(cudaFuncSetAttribute(hold_sm, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  CHECK_CUDA(cudaFuncSetAttribute(hold_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("%s: %d SMs, %d bytes of opt-in shared memory per block\n", prop.name, sms, optin);
  std::printf("%8s %8s %8s %10s %10s\n", "cluster", "threads", "CTAs", "queried", "launched");

  std::uint64_t* start_ns = nullptr;
  CHECK_CUDA(cudaMalloc(&start_ns, sizeof(std::uint64_t) * sms));
  std::vector<std::uint64_t> starts(static_cast<std::size_t>(sms));
  for (const int size : {1, 2, 4, 8}) {
    for (const int threads : {128, 384, 1024}) {
      const int ctas = sms / size * size;
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = static_cast<unsigned>(size);
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(static_cast<unsigned>(ctas));
      config.blockDim = dim3(static_cast<unsigned>(threads));
      config.dynamicSmemBytes = static_cast<std::size_t>(optin);
      config.attrs = &attr;
      config.numAttrs = 1;
      // A size the device cannot run (or a failed query) is reported on
      // its row; the sweep goes on.
      int queried = 0;
      cudaError_t err = cudaOccupancyMaxActiveClusters(&queried, hold_sm, &config);
      if (err == cudaSuccess) err = cudaLaunchKernelEx(&config, hold_sm, start_ns);
      if (err == cudaSuccess) err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        static_cast<void>(cudaGetLastError());
        std::printf("%8d %8d %8d %10s %10s (%s)\n", size, threads, ctas, "-", "-",
                    cudaGetErrorString(err));
        continue;
      }
      CHECK_CUDA(cudaMemcpy(starts.data(), start_ns, sizeof(std::uint64_t) * ctas,
                            cudaMemcpyDeviceToHost));
      const std::uint64_t first = *std::min_element(starts.begin(), starts.begin() + ctas);
      const auto together =
          std::count_if(starts.begin(), starts.begin() + ctas,
                        [&](std::uint64_t t) { return t < first + kFirstWaveNs; });
      std::printf("%8d %8d %8d %10d %10d\n", size, threads, ctas, queried,
                  static_cast<int>(together / size));
    }
  }
  CHECK_CUDA(cudaFree(start_ns));
  return 0;
}
