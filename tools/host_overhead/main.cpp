// tcgemm-host-overhead: host microseconds per call, enqueued back to back on
// one stream, for tcgemm::gemm, a GemmPlan's run() and cublasGemmEx on the
// same problem (same layouts and pointers), in one process. The device work
// is left to drain between batches: each batch of --calls calls is short
// enough that the launch queue never fills (a full queue would make the host
// wait for the GPU and time the kernels instead).
//
//   tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 --csv out.csv
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <tcgemm/gemm_plan.h>
#include <tcgemm/tcgemm.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "device_info.h"
#include "measure.h"
#include "shapes.h"
#include "testing/testing.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kFooter = R"(
Exit status: 0 the table (or the copy rate) was printed, and written with
--csv; 1 a CUDA or cuBLAS error, a call that failed, or output that could
not be written; 2 a usage error, no GPU, or a --csv path that cannot be
written.)";

// Writes `text` to `path` (nothing for an empty path): the exit status, 1
// with a message when the file cannot be written.
int write_csv(const std::string& path, const std::string& text) {
  if (path.empty()) return 0;
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "tcgemm-host-overhead: could not write %s\n", path.c_str());
    return 1;
  }
  return 0;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "tcgemm-host-overhead: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median over `batches` of the host time of `calls` back-to-back calls,
// in microseconds per call; the device drains between batches.
double per_call_us(const std::function<bool()>& call, int calls, int batches) {
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    check(cudaDeviceSynchronize(), "synchronize");
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      if (!call()) {
        std::fprintf(stderr, "tcgemm-host-overhead: a call failed\n");
        std::exit(1);
      }
    }
    const auto t1 = Clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  check(cudaDeviceSynchronize(), "synchronize");
  return tcgemm::bench::median(samples);
}

}  // namespace

int host_overhead_main(int argc, char** argv) {
  CLI::App app{"host microseconds per call: tcgemm::gemm, GemmPlan::run, cublasGemmEx"};
  app.footer(kFooter);
  std::vector<std::string> shape_texts{"1024x1024x1024", "64x4096x4096"};
  int calls = 200;
  int batches = 9;
  std::string csv;
  std::string layout = "tn";
  auto* shape_opt = app.add_option("--shape", shape_texts, "MxNxK (repeatable)")
      ->check([](const std::string& text) {
        return tcgemm::bench::parse_shape(text) ? std::string()
                                                : "not a shape MxNxK of integers from 1 to "
                                                  "2147483647";
      });
  auto* calls_opt = app.add_option("--calls", calls, "calls per timed batch")
                        ->transform(tcgemm::bench::integer_in(1, 100000))
                        ->capture_default_str();
  auto* batches_opt = app.add_option("--batches", batches, "timed batches (median reported)")
                          ->transform(tcgemm::bench::integer_in(1, 1000))
                          ->capture_default_str();
  auto* layout_opt =
      app.add_option("--layout", layout, "tn (A row, B col, C col) or tnr (C row-major)")
          ->check(CLI::IsMember({"tn", "tnr"}))
          ->capture_default_str();
  app.add_option("--csv", csv, "also write the table here")
      ->check([](const std::string& path) {
        return path.empty() ? std::string("an empty path") : std::string();
      });
  double copy_mib = 0;
  app.add_option(
         "--copy-rate", copy_mib,
         "instead: the device-to-device copy rate of a buffer of this many MiB (GB/s, "
         "bytes read + written, median of 20 or more samples of cudaMemcpyAsync timed by "
         "CUDA events, a sample at least 64 MiB of copies, rotating through buffer pairs that "
         "span 4x the L2, as tcgemm-bench's operand sets)")
      ->excludes(shape_opt)
      ->excludes(calls_opt)
      ->excludes(batches_opt)
      ->excludes(layout_opt)
      ->check([](const std::string& text) {
        // (CLI::Range lets NaN through.)
        const double mib = std::strtod(text.c_str(), nullptr);
        // (Under 8 MiB a copy ends sooner than the host enqueues the next,
        // so the loop below would time the host.)
        return mib >= 8.0 && mib <= 16384.0 ? std::string() : "not a size from 8 to 16384 MiB";
      });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, as tcgemm-bench's and tcgemm-tune's do.
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (const std::string reason = tcgemm::bench::no_gpu_reason(); !reason.empty()) {
    std::fprintf(stderr, "tcgemm-host-overhead: no CUDA device: %s\n", reason.c_str());
    return 2;
  }
  // The --csv file is opened (for appending, so not truncated) before
  // anything runs: a path that cannot be written is a usage error now, not
  // a failure at the end.
  if (!csv.empty() && !std::ofstream(csv, std::ios::app)) {
    std::fprintf(stderr, "tcgemm-host-overhead: --csv: %s cannot be written\n", csv.c_str());
    return 2;
  }
  if (copy_mib > 0) {
    // Copies of a buffer that fits in L2 would be timed from L2: rotate
    // through enough source/destination pairs to span kL2Multiple x the L2,
    // as tcgemm-bench rotates its operand sets (docs/benchmarking.md).
    const auto bytes = static_cast<std::size_t>(copy_mib * 1024 * 1024);
    int device = 0;
    int l2_bytes = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
          "cudaDeviceGetAttribute");
    const std::size_t pairs = std::max<std::size_t>(
        1, (static_cast<std::size_t>(tcgemm::bench::kL2Multiple * l2_bytes) + 2 * bytes - 1) /
               (2 * bytes));
    std::vector<void*> src(pairs, nullptr);
    std::vector<void*> dst(pairs, nullptr);
    for (std::size_t p = 0; p < pairs; ++p) {
      check(cudaMalloc(&src[p], bytes), "cudaMalloc");
      check(cudaMalloc(&dst[p], bytes), "cudaMalloc");
      check(cudaMemset(src[p], 1, bytes), "cudaMemset");
    }
    // As tcgemm-bench times its rows: the whole loop is enqueued before an
    // event is read, so the host runs ahead of the stream (a copy of 8 MiB
    // or more outlasts an enqueue), and a sample of a buffer under 64 MiB
    // holds several copies (64 MiB or more moved), so that an event pair's
    // overhead does not enter the rate. 3 untimed copies, then at least 20
    // samples and a copy from every pair.
    constexpr std::size_t kSampleBytes = std::size_t{64} << 20;
    const std::size_t per_sample = (kSampleBytes + bytes - 1) / bytes;
    const std::size_t samples =
        std::max<std::size_t>(20, (pairs + per_sample - 1) / per_sample);
    std::vector<cudaEvent_t> events(samples + 1, nullptr);
    for (cudaEvent_t& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
    std::size_t next = 0;
    const auto copy = [&] {
      const std::size_t p = next++ % pairs;
      check(cudaMemcpyAsync(dst[p], src[p], bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
    };
    for (int i = 0; i < 3; ++i) copy();
    check(cudaEventRecord(events[0]), "cudaEventRecord");
    for (std::size_t s = 0; s < samples; ++s) {
      for (std::size_t i = 0; i < per_sample; ++i) copy();
      check(cudaEventRecord(events[s + 1]), "cudaEventRecord");
    }
    check(cudaEventSynchronize(events[samples]), "cudaEventSynchronize");
    std::vector<double> gbps;
    for (std::size_t s = 0; s < samples; ++s) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events[s], events[s + 1]), "cudaEventElapsedTime");
      gbps.push_back(2.0 * static_cast<double>(bytes * per_sample) / (ms * 1e6));
    }
    const double rate = tcgemm::bench::median(gbps);
    std::printf(
        "copy rate, %g MiB device to device: %.1f GB/s (read + written; %zu buffer pairs "
        "in turn, %zu copies a sample)\n",
        copy_mib, rate, pairs, per_sample);
    char row[64];
    std::snprintf(row, sizeof row, "%g,%g\n", copy_mib, rate);
    return write_csv(csv, std::string("copy_mib,gbps\n") + row);
  }
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "tcgemm-host-overhead: cublasCreate failed\n");
    return 1;
  }
  std::string table = "shape,layout,calls,gemm_us,plan_run_us,cublas_us,plan_over_cublas\n";
  std::printf("%-18s %-6s %10s %12s %11s %8s\n", "shape", "layout", "gemm us", "plan run us",
              "cuBLAS us", "plan/cb");
  for (const std::string& text : shape_texts) {
    const tcgemm::bench::Shape s = *tcgemm::bench::parse_shape(text);  // checked above
    const bool row_c = layout == "tnr";
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    check(cudaMalloc(&a, static_cast<std::size_t>(s.m * s.k) * 2), "cudaMalloc A");
    check(cudaMalloc(&b, static_cast<std::size_t>(s.k * s.n) * 2), "cudaMalloc B");
    check(cudaMalloc(&c, static_cast<std::size_t>(s.m * s.n) * 2), "cudaMalloc C");
    check(cudaMemset(a, 0, static_cast<std::size_t>(s.m * s.k) * 2), "cudaMemset A");
    check(cudaMemset(b, 0, static_cast<std::size_t>(s.k * s.n) * 2), "cudaMemset B");
    tcgemm::GemmArgs args;
    args.m = s.m;
    args.n = s.n;
    args.k = s.k;
    args.a = {a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, s.k, 0};
    args.b = {b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, s.k, 0};
    args.c = {c, tcgemm::DType::kBF16,
              row_c ? tcgemm::Layout::kRowMajor : tcgemm::Layout::kColMajor, row_c ? s.n : s.m, 0};
    // gemm with the workspace it asks for (no per-call allocation).
    const std::size_t ws_bytes = tcgemm::workspace_size(args);
    void* ws = nullptr;
    if (ws_bytes > 0) {
      check(cudaMalloc(&ws, ws_bytes), "cudaMalloc workspace");
      check(cudaMemset(ws, 0, ws_bytes), "cudaMemset workspace");
    }
    args.workspace = ws;
    args.workspace_bytes = ws_bytes;
    tcgemm::GemmPlan plan;
    if (const tcgemm::Status st = tcgemm::GemmPlan::create(args, {}, &plan); !st.ok()) {
      std::fprintf(stderr, "tcgemm-host-overhead: GemmPlan::create: %s\n", st.message.c_str());
      return 1;
    }
    const auto gemm = [&] { return tcgemm::gemm(args).ok(); };
    const auto run = [&] { return plan.run(a, b, c, 1.0f, 0.0f).ok(); };
    const auto cublas = [&] {
      return tcgemm::testing::cublas_gemm(handle, args) == CUBLAS_STATUS_SUCCESS;
    };
    // Warm-up: first launches load modules and set attributes.
    per_call_us(gemm, 10, 1);
    per_call_us(run, 10, 1);
    per_call_us(cublas, 10, 1);
    const double g = per_call_us(gemm, calls, batches);
    const double p = per_call_us(run, calls, batches);
    const double cb = per_call_us(cublas, calls, batches);
    std::printf("%-18s %-6s %10.2f %12.2f %11.2f %8.2f\n", text.c_str(), layout.c_str(), g, p, cb,
                p / cb);
    table += text + "," + layout + "," + std::to_string(calls) + "," + std::to_string(g) + "," +
             std::to_string(p) + "," + std::to_string(cb) + "," + std::to_string(p / cb) + "\n";
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    if (ws != nullptr) cudaFree(ws);
  }
  cublasDestroy(handle);
  return write_csv(csv, table);
}

int main(int argc, char** argv) {
  const int status = host_overhead_main(argc, argv);
  // A table or help text that could not be written (a full disk, a closed
  // pipe) is a failure, not a run that printed nothing.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "tcgemm-host-overhead: writing standard output failed\n");
    return status == 0 ? 1 : status;
  }
  return status;
}
