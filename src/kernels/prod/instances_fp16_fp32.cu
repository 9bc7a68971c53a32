// The production kernels with fp16 inputs and fp32 output: every config of
// the table (config.h), every A and B major-ness. One file per dtype pair so
// the instances compile in parallel.
#include "kernels/prod/kernel.cuh"

namespace tcgemm::kernels::prod {

const InstanceTable& instances_fp16_fp32() { return instance_table<__half, float>(); }

}  // namespace tcgemm::kernels::prod
