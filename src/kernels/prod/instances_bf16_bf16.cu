// The production kernels with bf16 inputs and bf16 output: every config of
// the table (config.h), every A and B major-ness. One file per dtype pair so
// the instances compile in parallel.
#include "kernels/prod/kernel.cuh"

namespace tcgemm::kernels::prod {

const InstanceTable& instances_bf16_bf16() {
  return instance_table<__nv_bfloat16, __nv_bfloat16>();
}

}  // namespace tcgemm::kernels::prod
