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
// docs/production-log.md has what the H200 did (66 clusters of 2, 30 of 4). The
// launch and its count are testing/resident_clusters.h's, which the GPU test
// ProdChoices.TheDeviceModelCountsTheClustersALaunchGets runs too.
#include <cuda_runtime.h>

#include <cstdio>

#include "testing/resident_clusters.h"

#define CHECK_CUDA(call)                                                                 \
  do {                                                                                   \
    const cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main() {
  int device = 0;
  int sms = 0;
  int optin = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("%s: %d SMs, %d bytes of opt-in shared memory per block\n", prop.name, sms, optin);
  std::printf("%8s %8s %8s %10s %10s\n", "cluster", "threads", "CTAs", "queried", "launched");
  for (const int size : {1, 2, 4, 8}) {
    for (const int threads : {128, 384, 1024}) {
      const int clusters = sms / size;
      // A size the device cannot run (or a failed query) is reported on
      // its row; the sweep goes on.
      const tcgemm::testing::ClusterCount count =
          tcgemm::testing::count_resident_clusters(size, clusters, threads);
      if (!count.error.empty()) {
        std::printf("%8d %8d %8d %10s %10s (%s)\n", size, threads, clusters * size, "-", "-",
                    count.error.c_str());
        continue;
      }
      std::printf("%8d %8d %8d %10d %10d\n", size, threads, clusters * size, count.queried,
                  count.together);
    }
  }
  return 0;
}
