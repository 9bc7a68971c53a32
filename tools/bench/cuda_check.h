// CUDA errors in tcgemm-bench become exceptions, never aborts, so the report
// of what ran so far is still printed and the exit status stays one of the
// documented ones.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace tcgemm::bench {

// A CUDA error the run cannot continue after: an asynchronous error from a
// kernel (an illegal address, say) usually leaves the context unusable, and
// a failing event or stream call means the same. The run stops with what it
// has.
class DeviceFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws DeviceFault("<what>: <CUDA error string>") unless err is cudaSuccess.
inline void check_cuda(cudaError_t err, std::string_view what) {
  if (err != cudaSuccess) throw DeviceFault(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace tcgemm::bench
