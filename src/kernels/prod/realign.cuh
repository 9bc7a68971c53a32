// 16-byte chunks of 16-bit elements realigned in registers: the repack
// (repack.cu) reads an unaligned line as aligned chunks and writes it
// aligned; the staged epilogue (kernel.cuh) reads a column of C
// from shared memory as aligned chunks and writes it to an address that is
// not. Both shift a pair of neighbouring chunks by a few elements (the
// repack's neighbour comes from the next lane by a shuffle, the epilogue's
// from shared memory).
#pragma once

#include <cstdint>

namespace tcgemm::kernels::prod {

// Elements h .. h + 7 of lo and hi end to end (h in 0..7; little-endian:
// element 2i is the low half of word i): a 16-bit funnel shift when h is
// odd, then a word shift of h / 2 in two selects, all register to register
// (no dynamically indexed array, which would live in local memory).
__device__ __forceinline__ uint4 shift_chunk(uint4 lo, uint4 hi, std::uint32_t h) {
  const std::uint32_t c[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const std::uint32_t bits = (h & 1) * 16;
  std::uint32_t half[7];
#pragma unroll
  for (int i = 0; i < 7; ++i) half[i] = __funnelshift_r(c[i], c[i + 1], bits);
  std::uint32_t one[6];
#pragma unroll
  for (int i = 0; i < 6; ++i) one[i] = (h & 2) != 0 ? half[i + 1] : half[i];
  std::uint32_t out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = (h & 4) != 0 ? one[i + 2] : one[i];
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// A 16-byte chunk from lane `from` of this lane's group of `width` lanes
// (every lane of the warp takes part).
__device__ __forceinline__ uint4 shuffle(uint4 v, unsigned from, unsigned width) {
  constexpr unsigned kAll = 0xffffffffu;
  return make_uint4(__shfl_sync(kAll, v.x, from, width), __shfl_sync(kAll, v.y, from, width),
                    __shfl_sync(kAll, v.z, from, width), __shfl_sync(kAll, v.w, from, width));
}

}  // namespace tcgemm::kernels::prod
