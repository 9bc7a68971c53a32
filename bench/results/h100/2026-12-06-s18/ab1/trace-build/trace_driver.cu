// Per-CTA timeline of one production launch (clock64 deltas; see
// bench/results/h200/2026-12-04-cta-timeline/README.md for the method).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tcgemm/tcgemm.h"
extern "C" void tcgemm_trace_copy(void* dst);
extern "C" void tcgemm_trace_clear();
static unsigned long long tr[2048][24];
static double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(size_t)(p * (v.size() - 1))];
}
int main(int argc, char** argv) {
  long m = atol(argv[1]), n = atol(argv[2]), k = atol(argv[3]);
  int reps = 20;
  __nv_bfloat16 *a, *b, *c;
  cudaMalloc(&a, 2 * m * k); cudaMalloc(&b, 2 * k * n); cudaMalloc(&c, 2 * m * n);
  cudaMemset(a, 0, 2 * m * k); cudaMemset(b, 0, 2 * k * n);
  size_t ws_bytes = 64 << 20; void* ws; cudaMalloc(&ws, ws_bytes); cudaMemset(ws, 0, ws_bytes);
  tcgemm::GemmArgs g; g.m = m; g.n = n; g.k = k;
  g.a = {a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, k, 0};
  g.b = {b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, k, 0};
  g.c = {c, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, m, 0};
  g.workspace = ws; g.workspace_bytes = ws_bytes;
  { auto dd = tcgemm::describe(g); printf("# %ld x %ld x %ld: %s %s\n", m, n, k, dd.kernel.c_str(), dd.config.c_str()); }
  for (int mode = 0; mode < 2; ++mode) {
    for (int i = 0; i < 5; ++i) tcgemm::gemm(g);
    cudaDeviceSynchronize(); tcgemm_trace_clear(); cudaDeviceSynchronize();
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    int r = mode == 0 ? 1 : reps;
    cudaEventRecord(e0);
    for (int i = 0; i < r; ++i) { auto s = tcgemm::gemm(g); if (!s.ok()) { printf("err %s\n", s.message.c_str()); return 1; } }
    cudaEventRecord(e1); cudaDeviceSynchronize();
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    tcgemm_trace_copy(tr);
    int ctas = 0; while (ctas < 2048 && tr[ctas][0] != 0) ++ctas;
    unsigned long long g0 = ~0ull, g1 = 0;
    for (int i = 0; i < ctas; ++i) { g0 = std::min(g0, tr[i][0]); g1 = std::max(g1, tr[i][10]); }
    const char* names[] = {"entry -> setmaxnreg done (producer)", "first item found", "cluster wait + griddep",
                           "first TMA issued", "entry -> first data at consumer 0", "entry -> consumer past prologue",
                           "consumer 0 k-tiles", "epilogue stores issued", "store wait", "final cluster sync",
                           "CTA total", "consumer 0 full-wait sum", "producer empty-wait sum",
                           "consumer 1 end - consumer 0 end"};
    std::vector<double> d[14], start, end;
    for (int i = 0; i < ctas; ++i) {
      auto* t = tr[i];
      start.push_back((t[0] - g0) / 1000.0); end.push_back((t[10] - g0) / 1000.0);
      d[0].push_back((double)t[15] - t[1]); d[1].push_back((double)t[16] - t[15]);
      d[2].push_back((double)t[2] - t[16]); d[3].push_back((double)t[3] - t[2]);
      d[4].push_back((double)t[5] - t[1]); d[5].push_back((double)t[17] - t[1]);
      d[6].push_back((double)t[6] - t[5]); d[7].push_back((double)t[7] - t[6]);
      d[8].push_back((double)t[8] - t[7]); d[9].push_back((double)t[9] - t[8]);
      d[10].push_back((double)t[9] - t[1]); d[11].push_back(t[13]); d[12].push_back(t[14]);
      d[13].push_back((double)t[11] - (double)t[6]);
    }
    printf("== %s: %d launches, %.4f ms per launch; %d CTAs; span %.2f us; entry p50 %.2f max %.2f us; exit p0 %.2f p50 %.2f max %.2f us\n",
           mode == 0 ? "single launch" : "back to back (last traced)", r, ms / r, ctas, (g1 - g0) / 1000.0,
           pct(start, .5), pct(start, 1), pct(end, 0), pct(end, .5), pct(end, 1));
    for (int j = 0; j < 14; ++j)
      printf("  %-36s p10 %8.0f p50 %8.0f p90 %8.0f max %8.0f cycles\n", names[j], pct(d[j], .1), pct(d[j], .5), pct(d[j], .9), pct(d[j], 1));
  }
  return 0;
}
