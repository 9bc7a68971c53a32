// What the host hands a production kernel launch: the three tensor maps and
// the problem's scalars. Shared by the launch code (launch.cu) and the kernel
// (kernel.cuh).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string_view>

#include <tcgemm/tcgemm.h>

#include "kernels/prod/config.h"

namespace tcgemm::kernels::prod {

using tcgemm::prod::Major;

// The kernel's scalar parameters (one __grid_constant__ struct).
struct Params {
  // C (column-major after canonicalization), batch entry 0.
  void* c = nullptr;
  std::int64_t ldc = 0;
  std::int64_t stride_c = 0;
  std::int64_t m = 0;
  std::int64_t n = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::int64_t tiles_m = 0;  // per batch entry
  std::int64_t tiles_n = 0;
  std::int64_t batch_count = 1;
  int k_tiles = 0;
  // Added to the inner TMA coordinate of A and B (OperandView::shift).
  std::int32_t a_shift = 0;
  std::int32_t b_shift = 0;
  // ANDed with the batch index to give an operand's TMA batch coordinate:
  // -1 for one matrix per entry, 0 for one matrix shared by all.
  std::int32_t a_batch_mask = -1;
  std::int32_t b_batch_mask = -1;
  // 1 when C goes out through TMA stores (16-bit C that TMA can address).
  std::int32_t tma_c = 0;
};

struct Launch {
  CUtensorMap map_a;
  CUtensorMap map_b;
  CUtensorMap map_c;
  Params params;
  cudaStream_t stream = nullptr;
  std::string_view name;
};

// One instantiated kernel's launcher. instances.cuh defines them; launch.cu
// looks them up by (config, A major, B major, input and output dtype).
using InstanceFn = Status (*)(const Launch& launch);

// The instances of one (input, output) dtype pair: index config * 4 +
// a_major * 2 + b_major.
using InstanceTable = std::array<InstanceFn, tcgemm::prod::kConfigCount * 4>;

constexpr int instance_index(int config, Major a, Major b) {
  return config * 4 + static_cast<int>(a) * 2 + static_cast<int>(b);
}

// The six tables, one per instances_<in>_<out>.cu.
const InstanceTable& instances_bf16_bf16();
const InstanceTable& instances_bf16_fp16();
const InstanceTable& instances_bf16_fp32();
const InstanceTable& instances_fp16_bf16();
const InstanceTable& instances_fp16_fp16();
const InstanceTable& instances_fp16_fp32();

}  // namespace tcgemm::kernels::prod
