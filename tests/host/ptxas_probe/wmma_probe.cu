// A WMMA GEMM block in the article's shape (probe_config.h), compiled only so
// that ptxas reports its registers and static shared memory; the planner's
// figures for the same configuration are checked against that report
// (tests/host/test_plan.cpp, Planner.*MatchesPtxas*). Column-major A (M x K),
// B (K x N) and C (M x N), fp16 in, fp32 accumulate, fp16 out; M, N and K are
// assumed multiples of the block tile. Not part of the library, never
// launched: it proves nothing about speed or correctness.
#include <cuda_fp16.h>
#include <mma.h>

#include "probe_config.h"

namespace {

using namespace tcgemm::probe;
namespace wmma = nvcuda::wmma;

constexpr int kLdA = kBM + kPadA;  // A slab: kBK rows of kBM (+pad) M-contiguous halves
constexpr int kLdB = kBK;          // B slab: kBN rows of kBK K-contiguous halves
constexpr int kVec = 8;            // halves per 16-byte copy
static_assert(kBK * kBM % (kVec * kThreads) == 0 && kBN * kBK % (kVec * kThreads) == 0,
              "every thread copies the same number of 16-byte vectors");

// The article's union: A/B slabs in the main loop, C staging in the epilogue.
union SharedStorage {
  struct {
    __half a[kBK][kLdA];
    __half b[kBN][kLdB];
  } ab;
  float c[kWarps][kMmaM * kMmaN];
};

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    tcgemm_wmma_probe(const __half* __restrict__ a, const __half* __restrict__ b,
                      __half* __restrict__ c, int m, int n, int k) {
  // WMMA wants 256-bit aligned pointers.
  __shared__ __align__(128) SharedStorage smem;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / kWarpSize;
  const int lane = tid % kWarpSize;
  const int warp_m = (warp / kWarpsN) * kMmaM * kWarpMmasM;
  const int warp_n = (warp % kWarpsN) * kMmaN * kWarpMmasN;
  const long row0 = static_cast<long>(blockIdx.y) * kBM;
  const long col0 = static_cast<long>(blockIdx.x) * kBN;

  wmma::fragment<wmma::accumulator, kMmaM, kMmaN, kMmaK, float> acc[kWarpMmasM][kWarpMmasN];
#pragma unroll
  for (int i = 0; i < kWarpMmasM; ++i) {
#pragma unroll
    for (int j = 0; j < kWarpMmasN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  for (int k0 = 0; k0 < k; k0 += kBK) {
#pragma unroll
    for (int r = 0; r < kBK * kBM / kVec / kThreads; ++r) {
      const int v = tid + r * kThreads;
      const int kk = v / (kBM / kVec);
      const int mm = v % (kBM / kVec) * kVec;
      *reinterpret_cast<uint4*>(&smem.ab.a[kk][mm]) =
          *reinterpret_cast<const uint4*>(&a[row0 + mm + static_cast<long>(k0 + kk) * m]);
    }
#pragma unroll
    for (int r = 0; r < kBN * kBK / kVec / kThreads; ++r) {
      const int v = tid + r * kThreads;
      const int nn = v / (kBK / kVec);
      const int kk = v % (kBK / kVec) * kVec;
      *reinterpret_cast<uint4*>(&smem.ab.b[nn][kk]) =
          *reinterpret_cast<const uint4*>(&b[k0 + kk + (col0 + nn) * k]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += kMmaK) {
      wmma::fragment<wmma::matrix_b, kMmaM, kMmaN, kMmaK, __half, wmma::col_major> b_frag;
      wmma::fragment<wmma::matrix_a, kMmaM, kMmaN, kMmaK, __half, wmma::col_major> a_frag;
#pragma unroll
      for (int j = 0; j < kWarpMmasN; ++j) {
        wmma::load_matrix_sync(b_frag, &smem.ab.b[warp_n + j * kMmaN][kk], kLdB);
#pragma unroll
        for (int i = 0; i < kWarpMmasM; ++i) {
          wmma::load_matrix_sync(a_frag, &smem.ab.a[kk][warp_m + i * kMmaM], kLdA);
          wmma::mma_sync(acc[i][j], a_frag, b_frag, acc[i][j]);
        }
      }
    }
    __syncthreads();
  }

  // Epilogue: one fragment per warp through shared memory, fp32 -> fp16.
#pragma unroll
  for (int i = 0; i < kWarpMmasM; ++i) {
#pragma unroll
    for (int j = 0; j < kWarpMmasN; ++j) {
      wmma::store_matrix_sync(smem.c[warp], acc[i][j], kMmaM, wmma::mem_col_major);
      __syncwarp();
#pragma unroll
      for (int r = 0; r < kMmaM * kMmaN / kWarpSize; ++r) {
        const int e = lane + r * kWarpSize;
        const long row = row0 + warp_m + i * kMmaM + e % kMmaM;
        const long col = col0 + warp_n + j * kMmaN + e / kMmaM;
        c[row + col * m] = __float2half(smem.c[warp][e]);
      }
      __syncwarp();
    }
  }
  (void)n;
}
