#include <cuda_runtime_api.h>

#include "kernels/hopper/common.cuh"

namespace tcgemm::kernels::hopper {

Status make_tn_tensor_maps(const GemmArgs& args, std::uint32_t box_k, std::uint32_t box_m,
                           std::uint32_t box_n, CUtensorMap* map_a, CUtensorMap* map_b) {
  const auto k = static_cast<std::uint64_t>(args.k);
  Status status = encode_tensor_map(
      {args.a.ptr, args.a.dtype, k, static_cast<std::uint64_t>(args.m),
       static_cast<std::uint64_t>(args.a.ld), box_k, box_m, CU_TENSOR_MAP_SWIZZLE_128B},
      map_a);
  if (!status.ok()) return status;
  return encode_tensor_map(
      {args.b.ptr, args.b.dtype, k, static_cast<std::uint64_t>(args.n),
       static_cast<std::uint64_t>(args.b.ld), box_k, box_n, CU_TENSOR_MAP_SWIZZLE_128B},
      map_b);
}

Status multiprocessor_count(int* count) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) {
    return {StatusCode::kCudaError,
            std::string("SM count query failed: ") + cudaGetErrorString(err)};
  }
  return Status::success();
}

}  // namespace tcgemm::kernels::hopper
