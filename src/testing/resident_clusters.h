// A direct count of the clusters of whole-SM CTAs a GPU runs at once,
// beside what cudaOccupancyMaxActiveClusters says for the same launch (the
// count the production family's device model takes,
// DeviceModel::pair_clusters). Used by tcgemm-cluster-probe and the GPU
// tests; independent of the library's kernels.
#pragma once

#include <string>

namespace tcgemm::testing {

struct ClusterCount {
  int queried = 0;    // cudaOccupancyMaxActiveClusters for the launch
  int together = 0;   // clusters whose CTAs all started in the first wave
  std::string error;  // empty, or what failed (a size the device cannot run)
};

// Launches `clusters` clusters of `cluster_size` CTAs of `threads` threads,
// each CTA asking for all the opt-in shared memory (one per SM). Every CTA
// records when it starts, then holds its SM for 300 us; the clusters whose
// CTAs all started within 100 us of the first were resident at once, the
// rest waited for an SM to free up. Synchronizes the device before and
// after; the count assumes nothing else (another process, another
// context) runs on the GPU meanwhile, which would only lower it.
ClusterCount count_resident_clusters(int cluster_size, int clusters, int threads);

}  // namespace tcgemm::testing
