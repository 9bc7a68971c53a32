// How tcgemm classes a failed CUDA call made to find or select a device:
// shared by the library (src/api.cpp) and the Python extension
// (python/src/ext.cpp), so both report the same StatusCode for one error.
#pragma once

#include <cuda_runtime_api.h>

namespace tcgemm {

// Whether `err`, from cudaGetDevice, cudaSetDevice or a device attribute
// query, means there is no device tcgemm can use (kArchMismatch: no device
// or driver, a device index past the count, a driver too old for the
// runtime, a GPU not ready or unavailable) rather than a CUDA failure on a
// device that exists, such as a sticky error left by an earlier kernel
// (kCudaError).
inline bool means_no_device(cudaError_t err) {
  switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorSystemNotReady:
    case cudaErrorInitializationError:
      return true;
    default:
      return false;
  }
}

}  // namespace tcgemm
