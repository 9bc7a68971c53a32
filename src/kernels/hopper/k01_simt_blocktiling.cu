// Hopper ladder, step 1: 2-D block tiling on the CUDA cores (no tensor cores).
//
// Technique (worklog kernel 1 = Simon Boehm's SGEMM kernels 5/6, on 16-bit
// inputs):
//   - Each CTA computes a BM x BN tile of C. It walks K in BK-wide slices:
//     all threads copy the A slice (BM x BK) and the B slice (BK x BN) into
//     shared memory, converted to fp32, then each thread multiplies them into
//     its own TM x TN block of fp32 accumulators held in registers.
//   - Both operands are K-major in global memory (A row-major, B column-major),
//     so the copy transposes them: shared memory holds a[k][m] and b[k][n],
//     and a thread reads its TM values of A and TN values of B for one k as
//     two contiguous runs (register blocking: TM + TN shared loads feed
//     TM * TN FMAs).
// What changed from the previous step: this is the first step. It is the
// baseline the worklog starts from: the best pre-tensor-core design, which
// reaches only a few percent of cuBLAS on Hopper.
//
// Tile BM x BN x BK = 128 x 128 x 16, 256 threads, 8 x 8 outputs per thread,
// 16 KiB of static shared memory, one tile per CTA in plain row-major order.
// Layout: A row-major (M x K), B column-major (K x N), C column-major: "TN".
// Any M, N, K >= 1: partial tiles are zero-filled on load and masked on
// store. Loads read 8 elements (16 bytes) at a time, so lda and ldb must be
// multiples of 8 elements and A and B 16-byte aligned (the same promise as
// the TMA steps).
// Measured (H200, bench/results/h200/2026-11-29-hopper-ladder.csv, same-run
// cuBLAS): 38 TFLOP/s = 0.05x at 4096^3, 36 TFLOP/s = 0.05x at 8192^3 (bf16, TN).
#include <cstdint>
#include <string>

#include "kernels/hopper/common.cuh"
#include "sched/tile_order.h"

namespace tcgemm::kernels {
namespace {

struct Config {
  static constexpr int BM = 128;
  static constexpr int BN = 128;
  static constexpr int BK = 16;
  static constexpr int TM = 8;  // outputs per thread along M
  static constexpr int TN = 8;  // outputs per thread along N
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static constexpr int kVector = 8;  // 16-bit elements per 16-byte load
  static constexpr int kGroupM = 1;  // plain row-major tile order (step 6 groups tiles for L2)
};
// Every thread copies one vector of A and one of B per K-slice.
static_assert(Config::BM * Config::BK == Config::kThreads * Config::kVector);
static_assert(Config::BN * Config::BK == Config::kThreads * Config::kVector);

// Eight consecutive 16-bit elements, loaded as one 16-byte access.
template <typename TIn>
struct alignas(16) Vector8 {
  TIn x[Config::kVector];
};

// Elements k0 .. k0 + 7 of one K-major line (a row of A or a column of B),
// as fp32; zeros outside the matrix. `line` is null for a line past the M or
// N edge. line + k0 is 16-byte aligned (aligned base, ld and k0 multiples of 8).
template <typename TIn>
__device__ __forceinline__ void load_line(const TIn* line, std::int64_t k0, std::int64_t k,
                                          float (&out)[Config::kVector]) {
  if (line != nullptr && k0 + Config::kVector <= k) {
    const Vector8<TIn> v = *reinterpret_cast<const Vector8<TIn>*>(line + k0);
#pragma unroll
    for (int i = 0; i < Config::kVector; ++i) out[i] = to_float(v.x[i]);
  } else {
#pragma unroll
    for (int i = 0; i < Config::kVector; ++i) {
      out[i] = (line != nullptr && k0 + i < k) ? to_float(line[k0 + i]) : 0.0f;
    }
  }
}

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(Config::kThreads)
    k01_simt_blocktiling_kernel(const TIn* __restrict__ a, std::int64_t lda,
                                const TIn* __restrict__ b, std::int64_t ldb,
                                hopper::EpilogueParams epilogue, std::int64_t k,
                                std::int64_t tiles_m, std::int64_t tiles_n) {
  // 16-byte aligned so a thread's 8 contiguous values load as two float4s.
  __shared__ alignas(16) float a_smem[Config::BK][Config::BM];
  __shared__ alignas(16) float b_smem[Config::BK][Config::BN];

  const sched::TileCoord tile = sched::grouped_tile(blockIdx.x, tiles_m, tiles_n, Config::kGroupM);
  const std::int64_t row0 = tile.m * Config::BM;
  const std::int64_t col0 = tile.n * Config::BN;

  // The copy: thread t owns line t % BM of the tile and the 8-element K run
  // (t / BM) * 8 of the slice; consecutive threads store consecutive m (or
  // n) of one shared row, so the transposing stores hit distinct banks.
  const int copy_line = threadIdx.x % Config::BM;
  const int copy_k = (threadIdx.x / Config::BM) * Config::kVector;
  const std::int64_t a_row = row0 + copy_line;
  const std::int64_t b_col = col0 + copy_line;
  const TIn* a_line = a_row < epilogue.m ? a + a_row * lda : nullptr;
  const TIn* b_line = b_col < epilogue.n ? b + b_col * ldb : nullptr;

  // The compute: the thread's 8 x 8 block. Consecutive threads take
  // consecutive 8-row blocks, so the column-major stores of C coalesce.
  const int thread_row = threadIdx.x % (Config::BM / Config::TM);
  const int thread_col = threadIdx.x / (Config::BM / Config::TM);

  float acc[Config::TM][Config::TN] = {};
  for (std::int64_t k0 = 0; k0 < k; k0 += Config::BK) {
    float staged[Config::kVector];
    load_line(a_line, k0 + copy_k, k, staged);
#pragma unroll
    for (int i = 0; i < Config::kVector; ++i) a_smem[copy_k + i][copy_line] = staged[i];
    load_line(b_line, k0 + copy_k, k, staged);
#pragma unroll
    for (int i = 0; i < Config::kVector; ++i) b_smem[copy_k + i][copy_line] = staged[i];
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < Config::BK; ++kk) {
      float a_reg[Config::TM];
      float b_reg[Config::TN];
#pragma unroll
      for (int i = 0; i < Config::TM; ++i) a_reg[i] = a_smem[kk][thread_row * Config::TM + i];
#pragma unroll
      for (int j = 0; j < Config::TN; ++j) b_reg[j] = b_smem[kk][thread_col * Config::TN + j];
#pragma unroll
      for (int i = 0; i < Config::TM; ++i) {
#pragma unroll
        for (int j = 0; j < Config::TN; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
      }
    }
    // The next slice's copy overwrites what the other threads are reading.
    __syncthreads();
  }

  TOut* c = static_cast<TOut*>(epilogue.c);
#pragma unroll
  for (int j = 0; j < Config::TN; ++j) {
    const std::int64_t col = col0 + thread_col * Config::TN + j;
#pragma unroll
    for (int i = 0; i < Config::TM; ++i) {
      const std::int64_t row = row0 + thread_row * Config::TM + i;
      if (row < epilogue.m && col < epilogue.n) {
        TOut& out = c[col * epilogue.ldc + row];
        float value = epilogue.alpha * acc[i][j];
        if (epilogue.beta != 0.0f) value += epilogue.beta * to_float(out);
        out = from_float<TOut>(value);
      }
    }
  }
}

constexpr std::string_view kName = "hopper-01";

template <typename TIn, typename TOut>
Status launch_typed(const GemmArgs& args) {
  const std::int64_t tiles_m = sched::ceil_div(args.m, Config::BM);
  const std::int64_t tiles_n = sched::ceil_div(args.n, Config::BN);
  constexpr std::int64_t kMaxGridX = (std::int64_t{1} << 31) - 1;
  if (tiles_m * tiles_n > kMaxGridX) {
    return {StatusCode::kNotSupported,
            std::string(kName) + ": more output tiles than one grid holds"};
  }
  return hopper::launch_kernel(&k01_simt_blocktiling_kernel<TIn, TOut>, kName,
                               static_cast<unsigned>(tiles_m * tiles_n), Config::kThreads,
                               /*smem_bytes=*/0, /*cluster_x=*/1, args.stream,
                               static_cast<const TIn*>(args.a.ptr), args.a.ld,
                               static_cast<const TIn*>(args.b.ptr), args.b.ld,
                               hopper::epilogue_params(args), args.k, tiles_m, tiles_n);
}

}  // namespace

Status launch_hopper_01(const GemmArgs& args) {
  return hopper::visit_tn_types(
      args, [&]<typename TIn, typename TOut>() { return launch_typed<TIn, TOut>(args); });
}

}  // namespace tcgemm::kernels
