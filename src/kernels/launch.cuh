// Kernel launches for every tcgemm kernel: cudaLaunchKernelEx, optionally
// with a cluster dimension, returning that launch's own error as a Status.
// Launching with <<<>>> and then calling cudaGetLastError would both report
// and clear an error the caller left pending from unrelated CUDA calls.
#pragma once

#include <cuda_runtime.h>
#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace tcgemm::kernels {

// Launch configuration of a 1-D grid of clusters of `cluster_x` CTAs
// (attrs[0]); launch_dependent_kernel adds programmatic stream
// serialization.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attributes[2]{};

  ClusterLaunch(dim3 grid, int threads, std::size_t smem_bytes, int cluster_x,
                cudaStream_t stream) {
    config.gridDim = grid;
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    attributes[0].id = cudaLaunchAttributeClusterDimension;
    attributes[0].val.clusterDim.x = static_cast<unsigned>(cluster_x);
    attributes[0].val.clusterDim.y = 1;
    attributes[0].val.clusterDim.z = 1;
    config.attrs = attributes;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of this shape can be resident at once: the size of a
// persistent clustered grid (GPCs differ in SM count, so this can be less than
// SMs / cluster size).
template <typename Kernel>
Status max_active_clusters(Kernel kernel, std::size_t smem_bytes, int threads, int cluster_x,
                           int* clusters) {
  const ClusterLaunch launch(dim3(static_cast<unsigned>(cluster_x)), threads, smem_bytes, cluster_x,
                             nullptr);
  const cudaError_t err = cudaOccupancyMaxActiveClusters(clusters, kernel, &launch.config);
  if (err != cudaSuccess || *clusters < 1) {
    cudaGetLastError();
    return {StatusCode::kNotSupported, std::string("clusters of ") + std::to_string(cluster_x) +
                                           " CTAs cannot be resident: " + cudaGetErrorString(err)};
  }
  return Status::success();
}

// The clusters of `cluster_x` CTAs the current device holds at once when
// each CTA takes a whole SM (max_active_clusters of a stand-in kernel that
// asks for `smem_optin`, the device's opt-in shared memory per block): the
// production family's clustered rows run one CTA per SM. 66 clusters of 2
// on the H200's 132 SMs, but 30 of 4 (a direct launch agrees:
// bench/results/h200/2026-12-03-resident-clusters.txt).
Status max_whole_sm_clusters(int cluster_x, std::size_t smem_optin, int* clusters);

// Lets `kernel` take `bytes` of dynamic shared memory (above the 48 KiB a
// launch gets without opting in) and asks for the largest shared-memory
// carveout of the SM, so that the occupancy the kernel was sized for is not
// lost to L1. Refuses, with kNotSupported, a size above the device's opt-in
// limit. Being a runtime call that needs a context, it also binds the
// device's primary context to this thread, which the driver-level
// cuTensorMapEncodeTiled requires: TMA kernels call it before encoding maps.
Status allow_dynamic_smem(const void* kernel, std::size_t bytes, std::string_view name);

// True when the environment variable TCGEMM_PRINT_CONFIG is set: launchers
// then print the kernel and launch shape they chose to stderr.
bool print_config_enabled();
void print_config(std::string_view name, dim3 grid, int threads, std::size_t smem_bytes,
                  int cluster_x);

// False when the environment variable TCGEMM_DISABLE_PDL is set (read once):
// launch_dependent_kernel then launches as launch_kernel does, for A/B
// timing of the overlap.
bool programmatic_launch_enabled();

namespace detail {
template <typename... Params, typename... Args>
Status launch(bool programmatic, void (*kernel)(Params...), std::string_view name, dim3 grid,
              int threads, std::size_t smem_bytes, int cluster_x, cudaStream_t stream,
              Args&&... args) {
  ClusterLaunch launch(grid, threads, smem_bytes, cluster_x, stream);
  int count = cluster_x > 1 ? 1 : 0;  // attributes[0]: the cluster dimension
  if (programmatic) {
    launch.attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    launch.attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  launch.config.numAttrs = static_cast<unsigned>(count);
  if (print_config_enabled()) print_config(name, grid, threads, smem_bytes, cluster_x);
  const cudaError_t err = cudaLaunchKernelEx(&launch.config, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    return {StatusCode::kCudaError,
            std::string(name) + " launch failed: " + cudaGetErrorString(err)};
  }
  return Status::success();
}
}  // namespace detail

// Launches `kernel` through cudaLaunchKernelEx (with a cluster dimension when
// cluster_x > 1) and returns that launch's own error as a Status: an error the
// caller left pending from earlier CUDA calls is neither reported nor cleared.
template <typename... Params, typename... Args>
Status launch_kernel(void (*kernel)(Params...), std::string_view name, dim3 grid, int threads,
                     std::size_t smem_bytes, int cluster_x, cudaStream_t stream, Args&&... args) {
  return detail::launch(false, kernel, name, grid, threads, smem_bytes, cluster_x, stream,
                        std::forward<Args>(args)...);
}

// launch_kernel with programmatic dependent launch (programmatic stream
// serialization): the kernel may be scheduled before the kernel ahead of it
// on the stream has finished, once every CTA of that one has called
// ptx::griddep_launch_dependents or exited (the production family's kernels
// call it as they start; any other kernel triggers as its CTAs exit).
// Only for kernels that call ptx::griddep_wait() before touching global
// memory (src/ptx/griddep.cuh): stream order then holds for everything they
// read and write. Under stream capture the dependency becomes a programmatic
// graph edge, with the same meaning.
template <typename... Params, typename... Args>
Status launch_dependent_kernel(void (*kernel)(Params...), std::string_view name, dim3 grid,
                               int threads, std::size_t smem_bytes, int cluster_x,
                               cudaStream_t stream, Args&&... args) {
  return detail::launch(programmatic_launch_enabled(), kernel, name, grid, threads, smem_bytes,
                        cluster_x, stream, std::forward<Args>(args)...);
}

}  // namespace tcgemm::kernels
