// tcgemm-rowclass-probe: can A stream straight from a row-major matrix whose
// rows start off 16 bytes (odd lda, or a base pointer off 16 bytes), with
// no repack, and keep the aligned mainloop's rate? Two kernels that differ
// only in how A reaches the tensor cores, and four that take them apart:
//
//   ss        A as one 128-byte-swizzled TMA box per k-tile, read by wgmma
//             from shared memory (the production family's way); needs an
//             aligned A, so it runs on an aligned copy (lda rounded up to 8
//             elements, offset 0).
//   rowclass  A as 8 tensor maps, one per row class r mod 8: the rows of a
//             class lie 8 x lda elements apart (a multiple of 16 bytes), and
//             each map's base is the 16-byte boundary at or below the class's
//             first row, so every box starts aligned and each row lands
//             s_c = (offset + c * lda) mod 8 elements late in its box
//             (unswizzled, 72 elements wide). The consumers read their A
//             fragments from each row's offset with 32-bit shared loads
//             (funnel-shifted where s_c is odd) and run wgmma with A from
//             registers. Box c starts c class-rows early (c more rows
//             loaded), so the 8 classes a warp reads sit in different banks.
//   class loads, A by descriptor   rowclass's loads, ss's consumers
//   one A box, A from registers    ss's load, rowclass's consumers (shift 0)
//             (the mixed kinds compute nothing meaningful: timed only)
//   ss with A as 8 boxes of 16 rows   ss's layout in 8 TMA loads a k-tile,
//             as many as the row classes take (exact)
//   class loads of 16 rows, A by descriptor   the class boxes without the
//             bank spread (no extra rows; timed only)
//
// All: 128 x 256 tiles, BK 64, 4 stages, a producer warp and two consumer
// warpgroups, persistent over the tiles in groups of 16 along M, B K-major
// and aligned (as a repacked B would be), C bf16 row-major written from
// registers (the same code in all). M and N are multiples of 128 and 256;
// K and lda are anything. Each exact kind's output is checked element
// for element against the tests' reference GEMM (src/testing) on small
// integers (exact in fp32), C poisoned before; then each kind is timed:
// median of --reps launches (CUDA events, one launch a sample), every kind
// in turn, --rounds times over.
// The tensor maps take the library's L2 promotion rule (src/tensor_map.h):
// a class map's row pitch is 16 x lda bytes, so at an lda that is a
// multiple of 16 elements its 144-byte boxes are promoted to 256 bytes.
//
//   tcgemm-rowclass-probe [--m 4096] [--n 4096] [--k 4093] [--lda 4093]
//                         [--offset 0] [--reps 30] [--rounds 2]
//
// Prints each kind's time against ss's. Exit 1 on a wrong element.
// docs/production-log.md ("Why the repacked shapes stop near 0.8 of aligned")
// has what the H100 measured.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ptx/common.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "tensor_map.h"
#include "testing/testing.h"

namespace {

using bf16 = __nv_bfloat16;
namespace ptx = tcgemm::ptx;

constexpr int kBM = 128;
constexpr int kBN = 256;
constexpr int kBK = 64;
constexpr int kStages = 4;
constexpr int kClasses = 8;
constexpr int kClassRows = kBM / kClasses;       // a tile's rows of one class
constexpr int kClassCols = kBK + 8;              // a k-tile and the shift (<= 7, + 1 to pair)
constexpr int kClassPitch = kClassCols * 2;      // bytes per box row (144)
constexpr int kGroupM = 16;                      // tiles along M per group of the order
constexpr int kThreads = 384;                    // producer warpgroup + 2 consumers

// Box c of the row-class kinds starts c class-rows early (the bank
// spread; "plain" kinds load 16 rows, no spread).
constexpr int class_box_rows(int c, bool spread = true) { return kClassRows + (spread ? c : 0); }
constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }
// Box c's offset in a stage's A region (each box 128-byte aligned).
constexpr int class_box_offset(int c) {
  int offset = 0;
  for (int i = 0; i < c; ++i) offset += round_up(class_box_rows(i) * kClassPitch, 128);
  return offset;
}
constexpr int kRowClassABytes = class_box_offset(kClasses);
// Bytes the 8 class boxes bring (a TMA load counts its whole box).
constexpr std::uint32_t row_class_tx(bool spread) {
  int bytes = 0;
  for (int c = 0; c < kClasses; ++c) bytes += class_box_rows(c, spread) * kClassPitch;
  return static_cast<std::uint32_t>(bytes);
}
constexpr int kSsABytes = kBM * kBK * 2;
constexpr int kABytes = round_up(std::max(kRowClassABytes, kSsABytes), 1024);
constexpr int kBBytes = kBN * kBK * 2;

struct alignas(1024) Smem {
  std::uint8_t b[kStages][kBBytes];
  std::uint8_t a[kStages][kABytes];
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];
};

struct Params {  // (64-byte aligned, as CUtensorMap is)
  CUtensorMap a[kClasses];  // ss: a[0] only
  CUtensorMap b;
  int shift[kClasses];      // rowclass: s_c
  int m, n, k;
  bf16* c;                  // row-major, ldc = n
};

// RS wgmma: D(64 x 256) += A(64 x 16, registers) * B(16 x 256, K-major
// shared memory). PTX ISA 9.7.15.5: A's fragment is the mma.m16n8k16 A
// layout per warp (a0: row g, k 2q..2q+1; a1: row g + 8; a2: row g,
// k + 8; a3: row g + 8, k + 8), g = lane / 4, q = lane % 4.
__device__ __forceinline__ void wgmma_rs_256(float (&d)[128], const std::uint32_t (&a)[4],
                                             std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16\n" TCGEMM_WGMMA_D128_REGS
      ",\n"
      "{%128, %129, %130, %131}, %132, p, 1, 1, 0;\n"
      "}\n"
      : TCGEMM_WGMMA_D128_OPERANDS(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1u));
}

__device__ __forceinline__ std::uint32_t lds32(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}

struct Tile {
  int m0, n0;
};
__device__ __forceinline__ Tile tile_of(int t, int tiles_m, int tiles_n) {
  const int per_group = kGroupM * tiles_n;
  const int group = t / per_group;
  const int first_m = group * kGroupM;
  const int rows = min(kGroupM, tiles_m - first_m);
  const int in_group = t - group * per_group;
  return {(first_m + in_group % rows) * kBM, (in_group / rows) * kBN};
}

// A k-tile's 16 A registers (4 k16 steps x 4) for rows g and g + 8 of this
// warp: class g, box rows j0 + g and j0 + g + 1, elements from s_g on.
__device__ __forceinline__ void load_a_fragments(std::uint32_t a_stage, int g, int q, int j0,
                                                 int shift, std::uint32_t (&a)[4][4]) {
  const int odd = shift & 1;
  std::uint32_t base = a_stage;
  // (class_box_offset is a constant per class; g is per lane.)
#pragma unroll
  for (int c = 0; c < kClasses; ++c) {
    if (c == g) base = a_stage + class_box_offset(c);
  }
  const std::uint32_t row0 = base + (j0 + g) * kClassPitch;
  // Byte of element (shift + 2q) rounded down to a word.
  const std::uint32_t col = static_cast<std::uint32_t>((shift - odd + 2 * q) * 2);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const std::uint32_t addr = row0 + ((r & 1) ? kClassPitch : 0) + col + kk * 32 + ((r & 2) ? 16 : 0);
      const std::uint32_t lo = lds32(addr);
      const std::uint32_t hi = odd ? lds32(addr + 4) : 0u;
      a[kk][r] = __funnelshift_r(lo, hi, odd * 16);
    }
  }
}

// The two halves of the experiment apart: how A is loaded (one swizzled box,
// or the 8 row-class boxes) and how the consumers feed wgmma (A from shared
// memory by descriptor, or from registers loaded as the row classes lie).
// The mixed kinds compute nothing meaningful (their C is not checked); they
// time one half's cost with the other half as the aligned form has it.
// Two more take the loads apart: ss's A as 8 boxes of 16 rows (the same
// swizzled layout, so exact; 8 TMA issues a k-tile as the row classes
// have) and the class boxes without the bank spread (16 rows each).
enum class Kind {
  kSs,
  kRowClass,
  kClassLoadOnly,
  kRegistersOnly,
  kSsEightBoxes,
  kClassLoadPlain
};
constexpr bool loads_classes(Kind k) {
  return k == Kind::kRowClass || k == Kind::kClassLoadOnly || k == Kind::kClassLoadPlain;
}
constexpr bool spreads_classes(Kind k) { return k != Kind::kClassLoadPlain; }
constexpr bool is_checked(Kind k) {
  return k == Kind::kSs || k == Kind::kRowClass || k == Kind::kSsEightBoxes;
}
constexpr bool feeds_registers(Kind k) {
  return k == Kind::kRowClass || k == Kind::kRegistersOnly;
}
constexpr const char* name_of(Kind k) {
  switch (k) {
    case Kind::kSs: return "ss";
    case Kind::kRowClass: return "rowclass";
    case Kind::kClassLoadOnly: return "class loads, A by descriptor (C not meaningful)";
    case Kind::kRegistersOnly: return "one A box, A from registers (C not meaningful)";
    case Kind::kSsEightBoxes: return "ss with A as 8 boxes of 16 rows";
    case Kind::kClassLoadPlain:
      return "class loads of 16 rows (no bank spread), A by descriptor (C not meaningful)";
  }
  return "";
}

template <Kind kKind>
__global__ void __launch_bounds__(kThreads, 1) probe_kernel(const __grid_constant__ Params p) {
  constexpr bool kClassBoxes = loads_classes(kKind);
  constexpr bool kRowClass = feeds_registers(kKind);
  extern __shared__ std::uint8_t smem_raw[];
  Smem& s = *reinterpret_cast<Smem*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  const int wg = threadIdx.x / 128;
  const int tiles_m = p.m / kBM;
  const int tiles_n = p.n / kBN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (p.k + kBK - 1) / kBK;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      ptx::mbarrier_init(&s.full[i], 1);
      ptx::mbarrier_init(&s.empty[i], 2);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x != 0) return;
    constexpr bool kSpread = spreads_classes(kKind);
    constexpr std::uint32_t tx = (kClassBoxes ? row_class_tx(kSpread) : kSsABytes) + kBBytes;
    int stage = 0;
    std::uint32_t phase = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const Tile tile = tile_of(t, tiles_m, tiles_n);
      for (int kt = 0; kt < k_tiles; ++kt) {
        ptx::mbarrier_wait_parity(&s.empty[stage], phase ^ 1);
        ptx::mbarrier_arrive_expect_tx(&s.full[stage], tx);
        ptx::tma_load_2d(s.b[stage], &p.b, &s.full[stage], kt * kBK, tile.n0);
        if constexpr (kClassBoxes) {
#pragma unroll
          for (int c = 0; c < kClasses; ++c) {
            ptx::tma_load_2d(s.a[stage] + class_box_offset(c), &p.a[c], &s.full[stage], kt * kBK,
                             tile.m0 / kClasses - (kSpread ? c : 0));
          }
        } else if constexpr (kKind == Kind::kSsEightBoxes) {
#pragma unroll
          for (int c = 0; c < kClasses; ++c) {
            ptx::tma_load_2d(s.a[stage] + c * kClassRows * kBK * 2, &p.a[0], &s.full[stage],
                             kt * kBK, tile.m0 + c * kClassRows);
          }
        } else {
          ptx::tma_load_2d(s.a[stage], &p.a[0], &s.full[stage], kt * kBK, tile.m0);
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  ptx::setmaxnreg_inc<232>();
  const int cw = wg - 1;  // consumer 0 or 1: rows 64 cw .. 64 cw + 63
  const int tid = threadIdx.x % 128;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane / 4;
  const int q = lane % 4;
  // This thread's rows 64 cw + 16 warp + g (+ 8): class g, class-rows j0 and
  // j0 + 1 of the tile (box row j0 + g: box g starts g class-rows early).
  const int j0 = 8 * cw + 2 * warp;
  int shift = 0;
#pragma unroll
  for (int c = 0; c < kClasses; ++c) {
    if (c == g) shift = p.shift[c];
  }
  int stage = 0;
  std::uint32_t phase = 0;
  float acc[128];
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tile = tile_of(t, tiles_m, tiles_n);
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    int prev_stage = -1;
    const auto release = [&](int done_stage) {
      if (prev_stage >= 0 && tid == 0) ptx::mbarrier_arrive(&s.empty[prev_stage]);
      prev_stage = done_stage;
    };
    const auto advance = [&] {
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    };
    if constexpr (kRowClass) {
      // Two A register sets in turn. The next k-tile's fragments go into
      // the set the previous k-tile's wgmmas read, so they load once
      // `wait_group 1` has retired those (PTX: a pending wgmma's input
      // registers must not be written), while this k-tile's run.
      std::uint32_t a_regs[2][4][4];
      const auto k_step = [&](std::uint32_t (&a)[4][4], std::uint32_t (&a_next)[4][4],
                              bool more) {
        const std::uint64_t desc_b = ptx::make_smem_desc_k_major_sw128(s.b[stage]);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          wgmma_rs_256(acc, a[kk], ptx::smem_desc_step(desc_b, kk * 32));
        }
        ptx::wgmma_commit_group();
        const int this_stage = stage;
        advance();
        ptx::wgmma_wait_group<1>();
        release(this_stage);
        if (more) {
          ptx::mbarrier_wait_parity(&s.full[stage], phase);
          load_a_fragments(ptx::smem_addr(s.a[stage]), g, q, j0, shift, a_next);
        }
      };
      ptx::mbarrier_wait_parity(&s.full[stage], phase);
      load_a_fragments(ptx::smem_addr(s.a[stage]), g, q, j0, shift, a_regs[0]);
      for (int kt = 0; kt < k_tiles; kt += 2) {
        k_step(a_regs[0], a_regs[1], kt + 1 < k_tiles);
        if (kt + 1 < k_tiles) k_step(a_regs[1], a_regs[0], kt + 2 < k_tiles);
      }
    } else {
      for (int kt = 0; kt < k_tiles; ++kt) {
        ptx::mbarrier_wait_parity(&s.full[stage], phase);
        const std::uint64_t desc_b = ptx::make_smem_desc_k_major_sw128(s.b[stage]);
        const std::uint64_t desc_a =
            ptx::make_smem_desc_k_major_sw128(s.a[stage] + cw * 64 * kBK * 2);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          ptx::wgmma_m64k16<256, bf16>(acc, ptx::smem_desc_step(desc_a, kk * 32),
                                       ptx::smem_desc_step(desc_b, kk * 32), 1);
        }
        ptx::wgmma_commit_group();
        const int this_stage = stage;
        advance();
        ptx::wgmma_wait_group<1>();
        release(this_stage);
      }
    }
    ptx::wgmma_wait_group<0>();
    ptx::fence_registers(acc);
    release(-1);
    // C row-major from registers: chunk j of 8 columns, rows r and r + 8.
    const int r = tile.m0 + 64 * cw + 16 * warp + g;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = tile.n0 + 8 * j + 2 * q;
      *reinterpret_cast<__nv_bfloat162*>(p.c + static_cast<std::size_t>(r) * p.n + col) =
          __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
      *reinterpret_cast<__nv_bfloat162*>(p.c + static_cast<std::size_t>(r + 8) * p.n + col) =
          __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}
void check(const tcgemm::Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, st.message.c_str());
    std::exit(2);
  }
}

// C against the reference, element for element.
template <Kind kKind>
void check_c(const Params& p, const float* ref, std::size_t c_elems, bool* ok) {
  // ref is column-major fp32 (testing::reference_gemm), C row-major bf16:
  // each reference element rounded to bf16 as the kernels round.
  std::vector<bf16> got(c_elems), want(c_elems);
  std::vector<float> ref_host(c_elems);
  check(cudaMemcpy(got.data(), p.c, c_elems * sizeof(bf16), cudaMemcpyDeviceToHost), "copy C");
  check(cudaMemcpy(ref_host.data(), ref, c_elems * sizeof(float), cudaMemcpyDeviceToHost),
        "copy ref");
  for (std::size_t i = 0; i < c_elems; ++i) {
    want[i] = __float2bfloat16_rn(ref_host[(i % p.n) * p.m + i / p.n]);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < c_elems; ++i) {
    if (__bfloat162float(got[i]) != __bfloat162float(want[i])) {
      if (wrong < 5) {
        std::printf("  %s: C[%zu][%zu] = %g, reference %g\n", name_of(kKind),
                    i / p.n, i % p.n, __bfloat162float(got[i]), __bfloat162float(want[i]));
      }
      ++wrong;
    }
  }
  if (wrong != 0) {
    std::printf("  %s: %zu of %zu elements wrong\n", name_of(kKind), wrong, c_elems);
    *ok = false;
  }
}

template <Kind kKind>
double run(const Params& p, int reps, const float* ref, std::size_t c_elems, bool* ok) {
  const int smem = static_cast<int>(sizeof(Smem)) + 1024;
  check(cudaFuncSetAttribute(probe_kernel<kKind>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem),
        "cudaFuncSetAttribute");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const int tiles = (p.m / kBM) * (p.n / kBN);
  const int grid = std::min(sms, tiles);
  tcgemm::testing::fill_poison(p.c, tcgemm::DType::kBF16, static_cast<std::int64_t>(c_elems));
  probe_kernel<kKind><<<grid, kThreads, smem>>>(p);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "kernel");
  if (is_checked(kKind)) check_c<kKind>(p, ref, c_elems, ok);
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  std::vector<float> ms;
  for (int i = 0; i < reps + 3; ++i) {
    check(cudaEventRecord(e0), "record");
    probe_kernel<kKind><<<grid, kThreads, smem>>>(p);
    check(cudaEventRecord(e1), "record");
    check(cudaEventSynchronize(e1), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, e0, e1), "elapsed");
    if (i >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int m = 4096, n = 4096, k = 4093, lda = 0, offset = 0, reps = 30, rounds = 2;
  CLI::App app("tcgemm-rowclass-probe: A streamed by row class from an unaligned matrix "
               "(wgmma with A from registers) against the aligned shared-memory form");
  app.add_option("--m", m, "rows of A and C, a multiple of 128")->check(CLI::Range(128, 1 << 16));
  app.add_option("--n", n, "columns of C, a multiple of 256")->check(CLI::Range(256, 1 << 16));
  app.add_option("--k", k, "the reduction dimension")->check(CLI::Range(1, 1 << 16));
  app.add_option("--lda", lda, "A's leading dimension (default K)")->check(CLI::Range(1, 1 << 17));
  app.add_option("--offset", offset, "A's base, elements past a 256-byte boundary")
      ->check(CLI::Range(0, 7));
  app.add_option("--reps", reps, "timed launches per kernel")->check(CLI::Range(1, 10000));
  app.add_option("--rounds", rounds, "times every kind is timed, in turn")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  if (m % kBM != 0 || n % kBN != 0) {
    std::fprintf(stderr, "--m must be a multiple of %d and --n of %d\n", kBM, kBN);
    return 2;
  }
  if (lda == 0) lda = k;
  if (lda < k) {
    std::fprintf(stderr, "--lda must be at least --k\n");
    return 2;
  }
  const int lda_aligned = (k + 7) / 8 * 8;
  const int ldb = lda_aligned;
  // Small integers in [-3, 3]: every sum exact in fp32.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);
  const std::size_t a_elems = static_cast<std::size_t>(m) * lda + offset + 8;
  std::vector<bf16> a_host(a_elems), a_aligned_host(static_cast<std::size_t>(m) * lda_aligned);
  std::vector<bf16> b_host(static_cast<std::size_t>(n) * ldb);
  for (auto& x : a_host) x = __float2bfloat16(static_cast<float>(small(rng)));
  for (auto& x : b_host) x = __float2bfloat16(static_cast<float>(small(rng)));
  for (int r = 0; r < m; ++r) {
    for (int i = 0; i < lda_aligned; ++i) {
      a_aligned_host[static_cast<std::size_t>(r) * lda_aligned + i] =
          i < k ? a_host[offset + static_cast<std::size_t>(r) * lda + i] : __float2bfloat16(0.0f);
    }
  }
  bf16 *a_raw, *a_aligned, *b, *c;
  float* ref;
  const std::size_t c_elems = static_cast<std::size_t>(m) * n;
  check(cudaMalloc(&a_raw, a_elems * sizeof(bf16)), "malloc");
  check(cudaMalloc(&a_aligned, a_aligned_host.size() * sizeof(bf16)), "malloc");
  check(cudaMalloc(&b, b_host.size() * sizeof(bf16)), "malloc");
  check(cudaMalloc(&c, c_elems * sizeof(bf16)), "malloc");
  check(cudaMalloc(&ref, c_elems * sizeof(float)), "malloc");
  check(cudaMemcpy(a_raw, a_host.data(), a_elems * sizeof(bf16), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(a_aligned, a_aligned_host.data(), a_aligned_host.size() * sizeof(bf16),
                   cudaMemcpyHostToDevice),
        "copy");
  check(cudaMemcpy(b, b_host.data(), b_host.size() * sizeof(bf16), cudaMemcpyHostToDevice), "copy");
  const bf16* a_user = a_raw + offset;  // the caller's A: `offset` elements past 256 bytes
  // The library's test reference (one thread per element, fp32 dot
  // products), on the caller's A: row-major, lda, `offset` elements in.
  tcgemm::GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {a_user, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, lda};
  args.b = {b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, ldb};
  args.c = {c, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, n};
  tcgemm::testing::reference_gemm(args, ref);
  check(cudaDeviceSynchronize(), "reference");

  Params ss{}, rc{}, ss8{}, rcp{};
  tcgemm::TensorMap2d view_b{b, tcgemm::DType::kBF16, static_cast<std::uint64_t>(k),
                             static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(ldb),
                             kBK, kBN, CU_TENSOR_MAP_SWIZZLE_128B};
  check(tcgemm::encode_tensor_map(view_b, &ss.b), "map B");
  rc.b = ss.b;
  tcgemm::TensorMap2d view_a{a_aligned, tcgemm::DType::kBF16, static_cast<std::uint64_t>(k),
                             static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(lda_aligned),
                             kBK, kBM, CU_TENSOR_MAP_SWIZZLE_128B};
  check(tcgemm::encode_tensor_map(view_a, &ss.a[0]), "map A (ss)");
  ss8.b = rcp.b = ss.b;
  view_a.box_outer = kClassRows;
  check(tcgemm::encode_tensor_map(view_a, &ss8.a[0]), "map A (ss, 16-row boxes)");
  for (int cls = 0; cls < kClasses; ++cls) {
    const std::int64_t first = offset + static_cast<std::int64_t>(cls) * lda;  // from a_raw
    const int shift = static_cast<int>(first % 8);
    rc.shift[cls] = shift;
    tcgemm::TensorMap2d view{a_raw + (first - shift), tcgemm::DType::kBF16,
                             static_cast<std::uint64_t>(k + shift),
                             static_cast<std::uint64_t>((m - cls + kClasses - 1) / kClasses),
                             static_cast<std::uint64_t>(kClasses) * lda,
                             kClassCols, static_cast<std::uint32_t>(class_box_rows(cls)),
                             CU_TENSOR_MAP_SWIZZLE_NONE};
    check(tcgemm::encode_tensor_map(view, &rc.a[cls]), "map A (row class)");
    rcp.shift[cls] = shift;
    view.box_outer = static_cast<std::uint32_t>(class_box_rows(cls, /*spread=*/false));
    check(tcgemm::encode_tensor_map(view, &rcp.a[cls]), "map A (row class, 16 rows)");
  }
  for (Params* q : {&ss, &rc, &ss8, &rcp}) {
    q->m = m;
    q->n = n;
    q->k = k;
    q->c = c;
  }

  bool ok = true;
  const double flop = 2.0 * m * n * static_cast<double>(k);
  std::printf("M=%d N=%d K=%d lda=%d offset=%d (shifts", m, n, k, lda, offset);
  for (int cls = 0; cls < kClasses; ++cls) std::printf(" %d", rc.shift[cls]);
  std::printf(")\n");
  // Every kind in turn, `rounds` times over, so that a drift of the card's
  // clocks reaches every kind alike.
  for (int round = 0; round < rounds; ++round) {
    const double ms_ss = run<Kind::kSs>(ss, reps, ref, c_elems, &ok);
    const double ms_rc = run<Kind::kRowClass>(rc, reps, ref, c_elems, &ok);
    const double ms_loads = run<Kind::kClassLoadOnly>(rc, reps, ref, c_elems, &ok);
    const double ms_regs = run<Kind::kRegistersOnly>(ss, reps, ref, c_elems, &ok);
    const double ms_ss8 = run<Kind::kSsEightBoxes>(ss8, reps, ref, c_elems, &ok);
    const double ms_plain = run<Kind::kClassLoadPlain>(rcp, reps, ref, c_elems, &ok);
    std::printf(" round %d\n", round + 1);
    std::printf("  ss        %.4f ms  %.1f TFLOP/s  (A copied to lda %d)\n", ms_ss,
                flop / ms_ss * 1e-9, lda_aligned);
    std::printf("  rowclass  %.4f ms  %.1f TFLOP/s\n", ms_rc, flop / ms_rc * 1e-9);
    std::printf("  rowclass / ss time: %.3f  %s\n", ms_rc / ms_ss,
                ok ? "(ss, rowclass and 8-box ss exact)" : "WRONG");
    std::printf("  %s / ss time: %.3f\n", name_of(Kind::kClassLoadOnly), ms_loads / ms_ss);
    std::printf("  %s / ss time: %.3f\n", name_of(Kind::kRegistersOnly), ms_regs / ms_ss);
    std::printf("  %s / ss time: %.3f\n", name_of(Kind::kSsEightBoxes), ms_ss8 / ms_ss);
    std::printf("  %s / ss time: %.3f\n", name_of(Kind::kClassLoadPlain), ms_plain / ms_ss);
  }
  return ok ? 0 : 1;
}
