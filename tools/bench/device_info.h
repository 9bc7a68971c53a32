// What tcgemm-bench prints about the machine before any number: the GPU, the
// software versions, and the clocks (read through NVML, loaded at run time so
// the binary does not need the driver's libnvidia-ml to start).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tcgemm::bench {

struct DeviceInfo {
  int device = 0;
  std::string name;
  int compute_capability = 0;  // major * 10 + minor
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  std::string pci_bus_id;
  std::string driver_version;   // CUDA version the driver supports, e.g. "13.0"
  std::string runtime_version;  // CUDA runtime loaded at run time
  std::string nvcc_version;     // the nvcc that compiled tcgemm and this tool
  std::string cublas_version;
};

// Why there is no CUDA device to run on ("cudaGetDeviceCount: <CUDA's error
// text>" or "0 devices"), or "" when there is one. Clears the error.
std::string no_gpu_reason();

// Reads everything for CUDA device `device`; throws DeviceFault on a CUDA
// error (the caller has already established that a device exists).
DeviceInfo query_device(int device);

struct Clocks {
  std::optional<unsigned> sm_mhz;
  std::optional<unsigned> memory_mhz;
};

// "SM 1980 MHz, memory 3201 MHz", with "unknown" for what could not be read.
std::string to_string(const Clocks& clocks);

// Current clocks of one GPU through NVML; every read is "unknown" when
// libnvidia-ml.so.1 or the device cannot be found.
class ClockReader {
 public:
  explicit ClockReader(const std::string& pci_bus_id);
  ~ClockReader();
  ClockReader(const ClockReader&) = delete;
  ClockReader& operator=(const ClockReader&) = delete;

  Clocks read() const;

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace tcgemm::bench
