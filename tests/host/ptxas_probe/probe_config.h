// The WMMA probe kernel's configuration, shared by the kernel (wmma_probe.cu,
// compiled only for its ptxas resource report, never linked or launched) and
// tests/host/test_plan.cpp, which checks the planner's shared-memory and
// register figures for this configuration against that report.
//
// The configuration is the article's structure on CUDA WMMA: 16x16x16
// fragments, 4x2 of them per warp (64x32), 2x4 warps (128x128 block tile,
// 256 threads), two K steps per slab (BK 32), A padded by 8 halves per row,
// one fp32 fragment per warp staged for the epilogue in a union with A and B.
#pragma once

namespace tcgemm::probe {

inline constexpr int kMmaM = 16;
inline constexpr int kMmaN = 16;
inline constexpr int kMmaK = 16;
inline constexpr int kWarpMmasM = 4;
inline constexpr int kWarpMmasN = 2;
inline constexpr int kWarpsM = 2;
inline constexpr int kWarpsN = 4;
inline constexpr int kBatch = 2;
inline constexpr int kPadA = 8;  // WMMA: ldm a multiple of 8 halves

inline constexpr int kWarps = kWarpsM * kWarpsN;
inline constexpr int kWarpSize = 32;
inline constexpr int kThreads = kWarps * kWarpSize;
inline constexpr int kBM = kMmaM * kWarpMmasM * kWarpsM;
inline constexpr int kBN = kMmaN * kWarpMmasN * kWarpsN;
inline constexpr int kBK = kMmaK * kBatch;

// The kernel's name in the report (extern "C", so unmangled).
inline constexpr const char* kKernelName = "tcgemm_wmma_probe";

}  // namespace tcgemm::probe
