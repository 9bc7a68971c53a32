// tcgemm-tma-probe: which TMA views of a matrix that is not 16-byte aligned
// load correctly on this GPU. One case per process (an illegal instruction
// ends the CUDA context), chosen by its index:
//
//   tcgemm-tma-probe CASE [MODE [SWIZZLE]]
//       CASE 0..7, MODE shifted | aligned, SWIZZLE 128 (default) | 64 | 32 |
//       none (64-column boxes) | none16 (8-column boxes: one 16-byte chunk)
//
// Every case maps the matrix (256 rows of K = 300 bf16 elements, `ld` apart,
// `offset` elements past a 256-byte-aligned allocation) as `classes` tensor
// maps: map j covers rows j, j + classes, ... (a row stride of classes * ld
// elements, a multiple of 16 bytes), its base the 16-byte boundary at or
// below row j's start, its inner extent K + the shift that leaves. One CTA
// loads a 16-row box of every map (64 columns, 128-byte swizzle, unless
// SWIZZLE says otherwise: a box as wide as the swizzle span) at three
// column and three row coordinates and checks each element against the host's copy
// (zero past the matrix).
//   MODE shifted: the boxes start at column c0 + shift, where row j's
//                 elements begin (a box start off 16 bytes whenever shift
//                 is not 0 mod 8);
//   MODE aligned: the boxes start at column c0 (16-byte-aligned starts; the
//                 box then holds `shift` elements before the row).
// docs/hopper-notes.md has what the H200 did (an illegal instruction at the
// first shifted box, every aligned one correct).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kRows = 256;
constexpr int kK = 300;  // not a multiple of 64: the last box runs past the row
constexpr int kMaxBoxCols = 64;
constexpr int kBoxRows = 16;
constexpr int kMaxClasses = 8;

struct Maps {
  CUtensorMap map[kMaxClasses];
};

struct Case {
  int ld;
  int offset;
  int classes;
  const char* name;
};

constexpr Case kCases[] = {
    {4096, 1, 1, "base + 1 element, ld 4096"},  {4096, 7, 1, "base + 7 elements, ld 4096"},
    {4104, 3, 1, "base + 3 elements, ld 4104"}, {4093, 0, 8, "ld 4093, 8 row classes"},
    {4097, 0, 8, "ld 4097, 8 row classes"},     {4097, 1, 8, "ld 4097, base + 1, 8 classes"},
    {4098, 0, 4, "ld 4098, 4 row classes"},     {4100, 5, 2, "ld 4100, base + 5, 2 classes"},
};

#define CHECK_CUDA(call)                                        \
  do {                                                          \
    const cudaError_t err_ = (call);                            \
    if (err_ != cudaSuccess) {                                  \
      std::printf("%s: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(2);                                             \
    }                                                           \
  } while (0)

__device__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Loads box (col0 + shift[j], row0) of each of `classes` maps into shared
// memory, waits on one mbarrier, and writes the boxes out unswizzled:
// out[(j * kBoxRows + r) * box_cols + c]. swizzle_mask: the 16-byte chunk
// bits the swizzle XORs with the 128-byte line's (7, 3, 1; 0 for none).
__global__ void load_boxes(const __grid_constant__ Maps maps, int classes, int col0, int row0,
                           const int* shift, int box_cols, unsigned swizzle_mask,
                           std::uint16_t* out) {
  extern __shared__ std::uint8_t raw[];
  std::uint8_t* const tile = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  __shared__ alignas(8) std::uint64_t full;
  const int box_bytes = kBoxRows * box_cols * 2;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&full)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(&full)),
        "r"(box_bytes * classes));
    for (int j = 0; j < classes; ++j) {
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_address(tile + j * box_bytes)),
          "l"(&maps.map[j]), "r"(col0 + shift[j]), "r"(row0), "r"(smem_address(&full))
          : "memory");
    }
  }
  std::uint32_t done = 0;
  while (done == 0) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
        "p; }"
        : "=r"(done)
        : "r"(smem_address(&full)));
  }
  // The swizzle XORs the 16-byte chunk bits of a byte offset (4 and up)
  // with its 128-byte line's low bits (the tile is 1024-byte aligned).
  for (int i = threadIdx.x; i < classes * kBoxRows * box_cols; i += blockDim.x) {
    const unsigned offset = static_cast<unsigned>(i) * 2;
    const unsigned swizzled = offset ^ (((offset >> 7) & swizzle_mask) << 4);
    out[i] = *reinterpret_cast<const std::uint16_t*>(tile + swizzled);
  }
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

}  // namespace

int main(int argc, char** argv) {
  const int n_cases = static_cast<int>(sizeof kCases / sizeof kCases[0]);
  struct Swizzle {
    const char* name;
    CUtensorMapSwizzle mode;
    int box_cols;
    unsigned mask;
  };
  constexpr Swizzle kSwizzles[] = {{"128", CU_TENSOR_MAP_SWIZZLE_128B, 64, 7},
                                   {"64", CU_TENSOR_MAP_SWIZZLE_64B, 32, 3},
                                   {"32", CU_TENSOR_MAP_SWIZZLE_32B, 16, 1},
                                   {"none", CU_TENSOR_MAP_SWIZZLE_NONE, 64, 0},
                                   {"none16", CU_TENSOR_MAP_SWIZZLE_NONE, 8, 0}};
  const Swizzle* sw = &kSwizzles[0];
  if (argc == 4) {
    sw = nullptr;
    for (const Swizzle& candidate : kSwizzles) {
      if (std::strcmp(argv[3], candidate.name) == 0) sw = &candidate;
    }
  }
  if (argc < 2 || argc > 4 || std::atoi(argv[1]) < 0 || std::atoi(argv[1]) >= n_cases ||
      (argc >= 3 && std::strcmp(argv[2], "shifted") != 0 && std::strcmp(argv[2], "aligned") != 0) ||
      sw == nullptr) {
    std::printf("usage: %s CASE [shifted|aligned [128|64|32|none|none16]]   (CASE 0..%d)\n",
                argv[0], n_cases - 1);
    for (int i = 0; i < n_cases; ++i) std::printf("  %d: %s\n", i, kCases[i].name);
    return 2;
  }
  const Case& cs = kCases[std::atoi(argv[1])];
  const bool shifted = argc < 3 || std::strcmp(argv[2], "shifted") == 0;

  EncodeTiled encode = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
                                              reinterpret_cast<void**>(&encode), 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || encode == nullptr) {
    std::printf("cuTensorMapEncodeTiled not found\n");
    return 2;
  }

  const std::size_t elements = static_cast<std::size_t>(cs.ld) * kRows + 64;
  std::vector<std::uint16_t> host(elements);
  for (std::size_t i = 0; i < elements; ++i) {
    host[i] = static_cast<std::uint16_t>(((i * 2654435761u) >> 16) | 1u);  // never 0
  }
  std::uint16_t* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, elements * 2 + 256));
  CHECK_CUDA(cudaMemcpy(device, host.data(), elements * 2, cudaMemcpyHostToDevice));
  const std::uint16_t* const matrix = device + cs.offset;

  Maps maps{};
  std::vector<int> shift(kMaxClasses, 0);
  for (int j = 0; j < cs.classes; ++j) {
    const auto start =
        reinterpret_cast<std::uintptr_t>(matrix + static_cast<std::size_t>(j) * cs.ld);
    const std::uintptr_t base = start & ~std::uintptr_t{15};
    shift[j] = static_cast<int>((start - base) / 2);
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kK + shift[j]),
                                static_cast<cuuint64_t>((kRows - j + cs.classes - 1) / cs.classes)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cs.ld) * 2 * cs.classes};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(sw->box_cols), kBoxRows};
    const cuuint32_t steps[2] = {1, 1};
    const CUresult r =
        encode(&maps.map[j], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, reinterpret_cast<void*>(base),
               dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, sw->mode,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      std::printf("%s: encoding map %d failed (%d)\n", cs.name, j, static_cast<int>(r));
      return 2;
    }
  }
  std::vector<int> used(shift);
  if (!shifted) std::fill(used.begin(), used.end(), 0);
  int* device_shift = nullptr;
  CHECK_CUDA(cudaMalloc(&device_shift, kMaxClasses * sizeof(int)));
  CHECK_CUDA(
      cudaMemcpy(device_shift, used.data(), kMaxClasses * sizeof(int), cudaMemcpyHostToDevice));
  const int box_cols = sw->box_cols;
  const std::size_t out_elements = static_cast<std::size_t>(cs.classes) * kBoxRows * box_cols;
  std::uint16_t* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, out_elements * 2));
  const int smem = 1024 + kMaxClasses * kBoxRows * kMaxBoxCols * 2;
  CHECK_CUDA(cudaFuncSetAttribute(load_boxes, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  int wrong = 0;
  for (const int col0 : {0, 64, 256}) {
    for (const int row0 : {0, 2, 15}) {
      CHECK_CUDA(cudaMemset(out, 0xff, out_elements * 2));
      load_boxes<<<1, 128, smem>>>(maps, cs.classes, col0, row0, device_shift, box_cols,
                                   sw->mask, out);
      const cudaError_t err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        std::printf("%s, %s boxes, swizzle %s: column %d, row %d: %s\n", cs.name,
                    shifted ? "shifted" : "aligned", sw->name, col0, row0,
                    cudaGetErrorString(err));
        return 1;
      }
      std::vector<std::uint16_t> got(out_elements);
      CHECK_CUDA(cudaMemcpy(got.data(), out, out_elements * 2, cudaMemcpyDeviceToHost));
      for (int j = 0; j < cs.classes; ++j) {
        for (int r = 0; r < kBoxRows; ++r) {
          for (int c = 0; c < box_cols; ++c) {
            // The map's column x holds the row's element x - shift[j].
            const int row = j + cs.classes * (row0 + r);
            const int col = col0 + used[j] + c - shift[j];
            const std::uint16_t want = row < kRows && col < kK
                                           ? host[static_cast<std::size_t>(cs.offset) +
                                                  static_cast<std::size_t>(row) * cs.ld + col]
                                           : 0;
            if (got[(static_cast<std::size_t>(j) * kBoxRows + r) * box_cols + c] != want) ++wrong;
          }
        }
      }
    }
  }
  std::printf("%s, %s boxes, swizzle %s: %s (%d wrong elements)\n", cs.name,
              shifted ? "shifted" : "aligned", sw->name, wrong == 0 ? "correct" : "WRONG", wrong);
  return wrong == 0 ? 0 : 1;
}
