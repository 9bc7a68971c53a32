// The Hopper worklog's timing protocol beside tcgemm's, in one process, for
// cuBLAS, the worklog's own step-12 kernel and tcgemm's hopper-14 / hopper-15
// (bf16, M = N = K = n, A row-major, B and C column-major). An experiment
// behind docs/ladder.md, not part of the build; results in
// bench/results/h200/2026-11-30-worklog-protocol.txt.
//
// Protocols:
//   worklog (default): per kernel, 5 s of rest, one launch checked against
//     cuBLAS (max |diff|), then 8 back-to-back launches between one event
//     pair, mean reported: the worklog's matmul.cu. Mode "same" uses one
//     buffer set, as the worklog does; "rotate" cycles three sets.
//   interleaved: docs/benchmarking.md's protocol: 5 warm-up launches each,
//     30 samples of one launch each, kernels interleaved, three buffer sets.
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
    if (workspace_bytes == 0) {
      workspace_bytes = tcgemm::workspace_size(args, options);
      cudaCheck(cudaMalloc(&workspace, workspace_bytes + 1));
      cudaCheck(cudaMemset(workspace, 0, workspace_bytes + 1));
    }
    args.workspace = workspace;
    args.workspace_bytes = workspace_bytes;
    const tcgemm::Status st = tcgemm::gemm(args, options);
    if (!st.ok()) {
      std::printf("%s: %s\n", who.c_str(), st.message.c_str());
      std::exit(1);
    }
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
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
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (const Set& s : sets) run("worklog-12", n, s);
  cudaCheck(cudaDeviceSynchronize());
  const char* kernels[] = {"cublas", "worklog-12", "hopper-14", "hopper-15"};
  const bool interleaved = argc > 3 && std::strcmp(argv[3], "interleaved") == 0;
  if (argc > 3 && std::strcmp(argv[3], "host") == 0) {
    // Host time per call (enqueue only): 50 calls each, the GPU kept busy so
    // no call waits on it; median of `rounds` repeats.
    for (const char* who : kernels) {
      std::vector<double> per_call;
      for (int round = 0; round < std::max(rounds, 1); ++round) {
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
  if (interleaved) {
    // tcgemm's protocol (docs/benchmarking.md): 5 warm-up launches each, then
    // 30 samples, one launch per event pair, kernels interleaved, sets rotated.
    for (int round = 0; round < rounds; ++round) {
      int next = 0;
      for (const char* who : kernels)
        for (int w = 0; w < 5; ++w) run(who, n, sets[next++ % 3]);
      std::vector<std::vector<cudaEvent_t>> ev(4);
      for (int it = 0; it < 30; ++it) {
        for (int k = 0; k < 4; ++k) {
          cudaEvent_t a, b;
          cudaEventCreate(&a);
          cudaEventCreate(&b);
          cudaEventRecord(a);
          run(kernels[k], n, sets[next++ % 3]);
          cudaEventRecord(b);
          ev[k].push_back(a);
          ev[k].push_back(b);
        }
      }
      cudaCheck(cudaDeviceSynchronize());
      double med[4];
      for (int k = 0; k < 4; ++k) {
        std::vector<float> ms;
        for (int it = 0; it < 30; ++it) {
          float t;
          cudaEventElapsedTime(&t, ev[k][2 * it], ev[k][2 * it + 1]);
          ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        med[k] = 500.0 * (ms[14] + ms[15]);
      }
      for (int k = 0; k < 4; ++k)
        std::printf("interleaved n=%d run %d %-11s median %8.1f us  ratio %.3f\n", n, round + 1,
                    kernels[k], med[k], med[0] / med[k]);
    }
    return 0;
  }
  std::printf("n=%d\n%-6s %-7s %-11s %10s %8s %10s\n", n, "round", "mode", "kernel", "us", "ratio",
              "max|diff|");
  for (int round = 0; round < rounds; ++round) {
    for (const char* mode : {"same", "rotate"}) {
      double cublas_us = 0;
      for (const char* who : kernels) {
        sleep(5);  // the worklog's rest before each kernel
        // checked launch on set 0, against cuBLAS
        Set s0 = sets[0];
        cudaCheck(cudaMemset(s0.c, 0xff, elems * 2));  // NaN poison
        Set r0 = s0;
        r0.c = ref;
        run("cublas", n, r0);
        run(who, n, s0);
        cudaCheck(cudaDeviceSynchronize());
        cudaCheck(cudaMemcpy(h_ref.data(), ref, elems * 2, cudaMemcpyDeviceToHost));
        cudaCheck(cudaMemcpy(h_c.data(), s0.c, elems * 2, cudaMemcpyDeviceToHost));
        double maxdiff = 0;
        for (std::size_t i = 0; i < elems; ++i) {
          const double d =
              std::fabs(double(__bfloat162float(h_ref[i])) - double(__bfloat162float(h_c[i])));
          if (!(d <= maxdiff)) maxdiff = std::isnan(d) ? INFINITY : d;
        }
        const bool rotate = std::strcmp(mode, "rotate") == 0;
        cudaEventRecord(start);
        for (int j = 0; j < 8; ++j) run(who, n, sets[rotate ? j % 3 : 0]);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        const double us = ms * 1000.0 / 8;
        if (std::strcmp(who, "cublas") == 0) cublas_us = us;
        std::printf("%-6d %-7s %-11s %10.1f %8.3f %10.3g\n", round + 1, mode, who, us,
                    cublas_us / us, maxdiff);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
