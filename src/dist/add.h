// The reduce-scatter ring's elementwise sums (src/dist/dist.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm::dist {

// out = x + y + beta * out over `outer` lines of `inner` elements of `dtype`
// (bf16, fp16 or fp32): x and y tight (line i at i * inner), out's lines
// ld_out apart; out is read only when beta != 0. Enqueued on `stream`;
// kCudaError naming the launch when it fails.
Status add_lines(DType dtype, void* out, std::int64_t ld_out, const void* x, const void* y,
                 std::int64_t inner, std::int64_t outer, float beta, cudaStream_t stream);

}  // namespace tcgemm::dist
