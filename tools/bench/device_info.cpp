#include "device_info.h"

#include "cuda_check.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>

#include <array>

#ifndef TCGEMM_NVCC_VERSION
#error "TCGEMM_NVCC_VERSION must be defined by the build (CMAKE_CUDA_COMPILER_VERSION)"
#endif

namespace tcgemm::bench {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string cublas_version_string() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "unknown";
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// The part of NVML's C ABI used here (declared in nvml.h, which the CUDA
// toolkit does not always ship; these entry points and values have been
// stable since the _v2 variants appeared).
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
using nvmlDevice_t = struct nvmlDevice_st*;
enum nvmlClockType_t : int { kNvmlClockSm = 1, kNvmlClockMem = 2 };

using NvmlInitFn = nvmlReturn_t (*)();
using NvmlShutdownFn = nvmlReturn_t (*)();
using NvmlGetHandleByPciBusIdFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using NvmlGetClockInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned*);

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
  }
  return count == 0 ? "0 devices" : "";
}

DeviceInfo query_device(int device) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int driver = 0;
  int runtime = 0;
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  std::array<char, 32> bus_id{};
  check_cuda(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device),
             "cudaDeviceGetPCIBusId");
  return {
      .device = device,
      .name = prop.name,
      .compute_capability = prop.major * 10 + prop.minor,
      .sm_count = prop.multiProcessorCount,
      .l2_bytes = prop.l2CacheSize,
      .memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem),
      .pci_bus_id = bus_id.data(),
      .driver_version = cuda_version_string(driver),
      .runtime_version = cuda_version_string(runtime),
      .nvcc_version = TCGEMM_NVCC_VERSION,
      .cublas_version = cublas_version_string(),
  };
}

std::string to_string(const Clocks& clocks) {
  const auto mhz = [](const std::optional<unsigned>& v) {
    return v ? std::to_string(*v) + " MHz" : std::string("unknown");
  };
  return "SM " + mhz(clocks.sm_mhz) + ", memory " + mhz(clocks.memory_mhz);
}

struct ClockReader::Nvml {
  void* library = nullptr;
  NvmlShutdownFn shutdown = nullptr;
  NvmlGetClockInfoFn get_clock = nullptr;
  nvmlDevice_t device = nullptr;
};

ClockReader::ClockReader(const std::string& pci_bus_id) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return;
  const auto init = symbol<NvmlInitFn>(library, "nvmlInit_v2");
  const auto shutdown = symbol<NvmlShutdownFn>(library, "nvmlShutdown");
  const auto get_handle =
      symbol<NvmlGetHandleByPciBusIdFn>(library, "nvmlDeviceGetHandleByPciBusId_v2");
  const auto get_clock = symbol<NvmlGetClockInfoFn>(library, "nvmlDeviceGetClockInfo");
  if (init == nullptr || shutdown == nullptr || get_handle == nullptr || get_clock == nullptr ||
      init() != kNvmlSuccess) {
    dlclose(library);
    return;
  }
  // NVML numbers devices differently from CUDA (CUDA_VISIBLE_DEVICES,
  // CUDA_DEVICE_ORDER); the PCI bus id names the same GPU in both.
  nvmlDevice_t device = nullptr;
  if (get_handle(pci_bus_id.c_str(), &device) != kNvmlSuccess) {
    shutdown();
    dlclose(library);
    return;
  }
  nvml_ = std::make_unique<Nvml>(Nvml{library, shutdown, get_clock, device});
}

ClockReader::~ClockReader() {
  if (!nvml_) return;
  nvml_->shutdown();
  dlclose(nvml_->library);
}

Clocks ClockReader::read() const {
  Clocks clocks;
  if (!nvml_) return clocks;
  unsigned mhz = 0;
  if (nvml_->get_clock(nvml_->device, kNvmlClockSm, &mhz) == kNvmlSuccess) clocks.sm_mhz = mhz;
  if (nvml_->get_clock(nvml_->device, kNvmlClockMem, &mhz) == kNvmlSuccess) clocks.memory_mhz = mhz;
  return clocks;
}

}  // namespace tcgemm::bench
