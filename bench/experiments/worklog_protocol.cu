// The Hopper worklog's timing protocol beside tcgemm's, in one process, for
// cuBLAS, the worklog's own step-12 kernel and tcgemm's hopper-14 / hopper-15
// (bf16, M = N = K = n, A row-major, B and C column-major). An experiment
// behind docs/ladder.md, not part of the build; results in
// bench/results/h200/2026-11-30-worklog-protocol.txt.
//
// Protocols:
//   worklog (default): per kernel, 5 s of rest, one launch checked against
//     cuBLAS's on the host (as the worklog's check: the GPU idles meanwhile),
//     then 8 back-to-back launches between one event pair, mean reported:
//     the worklog's matmul.cu. Mode "same" uses one buffer set, as the
//     worklog does; "rotate" cycles three sets. The C of every set the timed
//     launches wrote is then compared with cuBLAS's (max |diff|, bf16
//     output; 0 = bitwise identical).
//   interleaved: docs/benchmarking.md's protocol: 5 warm-up launches each,
//     30 samples of one launch each, kernels interleaved (run r starts at
//     kernel r % 4: slots rotate), three buffer sets; then each kernel's
//     result checked the same way.
//   host: host time per call, 50 calls with the GPU busy.
// tcgemm gets one zeroed GEMM workspace, allocated before anything is timed.
//
// The worklog's kernel is not in this repository: build against a checkout
// of github.com/pranjalssh/fast.cu (its examples/matmul/matmul_12.cuh,
// which needs -DNDEBUG as in its Makefile) and tcgemm's release build:
//   nvcc -std=c++20 -O3 -DNDEBUG -w -gencode arch=compute_90a,code=sm_90a \
//     -I include -I <fast.cu>/examples/matmul bench/experiments/worklog_protocol.cu \
//     build/release/libtcgemm.a -lcublas -lcuda -o worklog_protocol
//   ./worklog_protocol 4096 2              # worklog protocol, 2 rounds
//   ./worklog_protocol 4096 3 interleaved  # tcgemm's protocol, 3 runs
//   ./worklog_protocol 4096 5 host         # host time per call (enqueue)
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <tcgemm/tcgemm.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

typedef __nv_bfloat16 bf16;
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
static void cudaCheckImpl(cudaError_t e, const char* f, int l) {
  if (e != cudaSuccess) {
    std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), f, l);
    std::exit(1);
  }
}
#define cudaCheck(e) cudaCheckImpl((e), __FILE__, __LINE__)
#include "matmul_12.cuh"  // the worklog's step 12 (namespace M12)

struct Set {
  bf16 *a, *b, *c;
};
static cublasHandle_t handle;
static void* workspace = nullptr;
static std::size_t workspace_bytes = 0;

static void run(const std::string& who, int n, const Set& s) {
  if (who == "cublas") {
    float alpha = 1, beta = 0;
    if (cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, s.a, CUDA_R_16BF, n, s.b,
                     CUDA_R_16BF, n, &beta, s.c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::printf("cublas failed\n");
      std::exit(1);
    }
  } else if (who == "worklog-12") {
    // Its tensor maps are cached on M only: keep one copy per buffer set so
    // every launch reads and writes the set it is given.
    struct Maps {
      const Set* set;
      CUtensorMap a, b, c;
    };
    static std::vector<Maps> maps;
    const Maps* found = nullptr;
    for (const Maps& m : maps)
      if (m.set->a == s.a && m.set->c == s.c) found = &m;
    if (found == nullptr) {
      M12::_prev_m = 0;  // rebuild for these pointers (re-creates its schedule too)
      M12::runKernel12(n, n, n, s.a, s.b, s.c, nullptr);
      maps.push_back({new Set(s), M12::d_tma_map_A, M12::d_tma_map_B, M12::d_tma_map_C});
      return;
    }
    M12::d_tma_map_A = found->a;
    M12::d_tma_map_B = found->b;
    M12::d_tma_map_C = found->c;
    M12::runKernel12(n, n, n, s.a, s.b, s.c, nullptr);
  } else {
    tcgemm::GemmArgs args;
    args.m = args.n = args.k = n;
    args.a = {s.a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, n, 0};
    args.b = {s.b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, n, 0};
    args.c = {s.c, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, n, 0};
    tcgemm::GemmOptions options;
    options.kernel = who;
    args.workspace = workspace;  // allocated once in main(), before any timing
    args.workspace_bytes = workspace_bytes;
    const tcgemm::Status st = tcgemm::gemm(args, options);
    if (!st.ok()) {
      std::printf("%s: %s\n", who.c_str(), st.message.c_str());
      std::exit(1);
    }
  }
}

// Largest |C - cuBLAS's C| over the elements of set s, whose C the kernel
// under test wrote last (NaN or Inf anywhere: +inf).
static double max_diff_vs_cublas(int n, const Set& s, bf16* ref, std::vector<bf16>& h_ref,
                                 std::vector<bf16>& h_c) {
  const std::size_t elems = std::size_t(n) * n;
  run("cublas", n, Set{s.a, s.b, ref});
  cudaCheck(cudaDeviceSynchronize());
  cudaCheck(cudaMemcpy(h_ref.data(), ref, elems * 2, cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(h_c.data(), s.c, elems * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    const double d =
        std::fabs(double(__bfloat162float(h_ref[i])) - double(__bfloat162float(h_c[i])));
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const int rounds = argc > 2 ? std::max(std::atoi(argv[2]), 1) : 2;
  const std::string mode = argc > 3 ? argv[3] : "worklog";
  cublasCreate(&handle);
  const std::size_t elems = std::size_t(n) * n;
  std::vector<bf16> host(elems);
  std::default_random_engine gen(69);
  std::normal_distribution<float> dist(0, 1);
  Set sets[3];
  for (Set& s : sets) {
    cudaCheck(cudaMalloc(&s.a, elems * 2));
    cudaCheck(cudaMalloc(&s.b, elems * 2));
    cudaCheck(cudaMalloc(&s.c, elems * 2));
    for (auto& x : host) x = dist(gen);
    cudaCheck(cudaMemcpy(s.a, host.data(), elems * 2, cudaMemcpyHostToDevice));
    for (auto& x : host) x = dist(gen);
    cudaCheck(cudaMemcpy(s.b, host.data(), elems * 2, cudaMemcpyHostToDevice));
  }
  bf16* ref;
  cudaCheck(cudaMalloc(&ref, elems * 2));
  std::vector<bf16> h_ref(elems), h_c(elems);
  const char* kernels[] = {"cublas", "worklog-12", "hopper-14", "hopper-15"};
  constexpr int kKernels = 4;

  // One GEMM workspace for every tcgemm call, allocated and zeroed before
  // anything is timed (the API's contract: zeroed once, left zeroed).
  {
    tcgemm::GemmArgs args;
    args.m = args.n = args.k = n;
    args.a = {sets[0].a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, n, 0};
    args.b = {sets[0].b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, n, 0};
    args.c = {sets[0].c, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, n, 0};
    for (const char* who : {"hopper-14", "hopper-15"}) {
      tcgemm::GemmOptions options;
      options.kernel = who;
      workspace_bytes = std::max(workspace_bytes, tcgemm::workspace_size(args, options));
    }
    cudaCheck(cudaMalloc(&workspace, std::max<std::size_t>(workspace_bytes, 256)));
    cudaCheck(cudaMemset(workspace, 0, std::max<std::size_t>(workspace_bytes, 256)));
  }
  for (const Set& s : sets) run("worklog-12", n, s);  // its tensor maps, one copy per set
  cudaCheck(cudaDeviceSynchronize());

  if (mode == "host") {
    // Host time per call (enqueue only): 50 calls each, the GPU kept busy so
    // no call waits on it; median of `rounds` repeats.
    for (const char* who : kernels) {
      std::vector<double> per_call;
      for (int round = 0; round < rounds; ++round) {
        cudaCheck(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        for (int j = 0; j < 50; ++j) run(who, n, sets[j % 3]);
        const auto t1 = std::chrono::steady_clock::now();
        per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 50);
      }
      cudaCheck(cudaDeviceSynchronize());
      std::sort(per_call.begin(), per_call.end());
      std::printf("host n=%d %-11s %7.1f us per call (median of %zu x 50 calls)\n", n, who,
                  per_call[per_call.size() / 2], per_call.size());
    }
    return 0;
  }

  if (mode == "interleaved") {
    // tcgemm's protocol (docs/benchmarking.md): 5 warm-up launches each, then
    // 30 samples of one launch each, kernels interleaved, sets rotated. Run r
    // starts the interleave at kernel r % 4, so no kernel keeps one slot.
    for (int round = 0; round < rounds; ++round) {
      int order[kKernels];
      for (int i = 0; i < kKernels; ++i) order[i] = (round + i) % kKernels;
      int next = 0;
      for (int k : order) {
        for (int w = 0; w < 5; ++w) run(kernels[k], n, sets[next++ % 3]);
      }
      std::vector<cudaEvent_t> ev[kKernels];
      for (int it = 0; it < 30; ++it) {
        for (int k : order) {
          cudaEvent_t a, b;
          cudaCheck(cudaEventCreate(&a));
          cudaCheck(cudaEventCreate(&b));
          cudaCheck(cudaEventRecord(a));
          run(kernels[k], n, sets[next++ % 3]);
          cudaCheck(cudaEventRecord(b));
          ev[k].push_back(a);
          ev[k].push_back(b);
        }
      }
      cudaCheck(cudaDeviceSynchronize());
      double median_us[kKernels];
      for (int k = 0; k < kKernels; ++k) {
        std::vector<float> ms;
        for (int it = 0; it < 30; ++it) {
          float t = 0;
          cudaCheck(cudaEventElapsedTime(&t, ev[k][2 * it], ev[k][2 * it + 1]));
          ms.push_back(t);
        }
        for (cudaEvent_t e : ev[k]) cudaCheck(cudaEventDestroy(e));
        std::sort(ms.begin(), ms.end());
        median_us[k] = 500.0 * (ms[14] + ms[15]);
      }
      for (int k = 0; k < kKernels; ++k) {
        // Every kernel's result, each on set 0, after the timing.
        run(kernels[k], n, sets[0]);
        const double diff = max_diff_vs_cublas(n, sets[0], ref, h_ref, h_c);
        std::printf(
            "interleaved n=%d run %d slot %d %-11s median %8.1f us  ratio %.3f  max|diff| %.3g\n",
            n, round + 1, (k - round % kKernels + kKernels) % kKernels + 1, kernels[k],
            median_us[k], median_us[0] / median_us[k], diff);
      }
    }
    return 0;
  }

  // The worklog's protocol.
  cudaEvent_t start, stop;
  cudaCheck(cudaEventCreate(&start));
  cudaCheck(cudaEventCreate(&stop));
  std::printf("n=%d\n%-6s %-7s %-11s %10s %8s %10s\n", n, "round", "mode", "kernel", "us", "ratio",
              "max|diff|");
  for (int round = 0; round < rounds; ++round) {
    for (const char* sets_mode : {"same", "rotate"}) {
      const bool rotate = std::strcmp(sets_mode, "rotate") == 0;
      double cublas_us = 0;
      for (const char* who : kernels) {
        sleep(5);  // the worklog's rest before each kernel
        // Its check before timing: cuBLAS's reference, the kernel, both
        // copied to the host and compared there (the idle GPU of those ~0.1 s
        // is part of the protocol: the timed block starts from it).
        run(who, n, sets[0]);
        const double diff_before = max_diff_vs_cublas(n, sets[0], ref, h_ref, h_c);
        cudaCheck(cudaEventRecord(start));
        for (int j = 0; j < 8; ++j) run(who, n, sets[rotate ? j % 3 : 0]);
        cudaCheck(cudaEventRecord(stop));
        cudaCheck(cudaEventSynchronize(stop));
        float ms = 0;
        cudaCheck(cudaEventElapsedTime(&ms, start, stop));
        const double us = ms * 1000.0 / 8;
        if (std::strcmp(who, "cublas") == 0) cublas_us = us;
        // What the timed launches wrote, on every set they used.
        double diff = diff_before;
        for (int i = 0; i < (rotate ? 3 : 1); ++i) {
          diff = std::max(diff, max_diff_vs_cublas(n, sets[i], ref, h_ref, h_c));
        }
        std::printf("%-6d %-7s %-11s %10.1f %8.3f %10.3g\n", round + 1, sets_mode, who, us,
                    cublas_us / us, diff);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
