// Timeline of one prod kernel launch per CTA (clock64 deltas), 2048^3 etc.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "tcgemm/tcgemm.h"
extern "C" void tcgemm_trace_copy(void* dst);
extern "C" void tcgemm_trace_clear();
static unsigned long long tr[2048][16];
static double med(std::vector<double> v) { if (v.empty()) return 0; std::sort(v.begin(), v.end()); return v[v.size()/2]; }
static double pct(std::vector<double> v, double p) { if (v.empty()) return 0; std::sort(v.begin(), v.end()); return v[(size_t)(p*(v.size()-1))]; }
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048;
  int m = argc > 2 ? atoi(argv[2]) : n, k = argc > 3 ? atoi(argv[3]) : n;
  int reps = argc > 4 ? atoi(argv[4]) : 20;
  __nv_bfloat16 *a, *b, *c; 
  cudaMalloc(&a, sizeof(*a) * (size_t)m * k); cudaMalloc(&b, sizeof(*b) * (size_t)k * n); cudaMalloc(&c, sizeof(*c) * (size_t)m * n);
  cudaMemset(a, 0, sizeof(*a) * (size_t)m * k); cudaMemset(b, 0, sizeof(*b) * (size_t)k * n);
  size_t ws_bytes = 64 << 20; void* ws; cudaMalloc(&ws, ws_bytes); cudaMemset(ws, 0, ws_bytes);
  tcgemm::GemmArgs g; g.m = m; g.n = n; g.k = k;
  g.a = {a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, k, 0};
  g.b = {b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, k, 0};
  g.c = {c, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, m, 0};
  g.workspace = ws; g.workspace_bytes = ws_bytes;
  { auto dd = tcgemm::describe(g); printf("%s %s\n", dd.kernel.c_str(), dd.config.c_str()); }
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
    std::vector<double> d[16], start, end;
    for (int i = 0; i < ctas; ++i) {
      auto* t = tr[i];
      start.push_back((t[0] - g0) / 1000.0); end.push_back((t[10] - g0) / 1000.0);
      d[0].push_back(t[2] - t[1]);  // prologue to griddep done
      d[1].push_back(t[3] - t[2]);  // first TMA issued
      d[2].push_back(t[5] - t[1]);  // first data at consumer 0
      d[3].push_back(t[4] - t[1]);  // producer last TMA issued
      d[4].push_back(t[6] - t[5]);  // consumer0 mainloop (first full .. last wgmma done)
      d[5].push_back(t[7] - t[6]);  // epilogue stores issued
      d[6].push_back(t[8] - t[7]);  // store wait
      d[7].push_back(t[9] - t[8]);  // final cluster sync
      d[8].push_back(t[9] - t[1]);  // whole CTA
      d[9].push_back(t[13]);        // consumer0 full-wait cycles (excl first)
      d[10].push_back(t[14]);       // producer empty-wait cycles
      d[11].push_back((double)t[11] - (double)t[6]);  // consumer1 vs consumer0 end
    }
    const char* names[] = {"prologue(entry->griddep done)", "first TMA issue after", "first data at consumer0",
      "producer last TMA (from entry)", "consumer0 mainloop", "epilogue issue", "store wait", "final cluster sync",
      "CTA total", "consumer0 full-wait sum", "producer empty-wait sum", "consumer1 end - consumer0 end"};
    printf("== %s: %d launches, %.4f ms per launch; %d CTAs; span entry..exit %.2f us; entry spread p50 %.2f max %.2f us; exit p0 %.2f p50 %.2f max %.2f us\n",
           mode == 0 ? "single launch" : "back to back (last traced)", r, ms / r, ctas, (g1 - g0) / 1000.0,
           pct(start, .5), pct(start, 1), pct(end, 0), pct(end, .5), pct(end, 1));
    for (int j = 0; j < 12; ++j) printf("  %-34s p10 %8.0f p50 %8.0f p90 %8.0f max %8.0f cycles\n", names[j], pct(d[j], .1), med(d[j]), pct(d[j], .9), pct(d[j], 1));
  }
  return 0;
}
