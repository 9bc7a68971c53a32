// tcgemm-ce-probe: can the copy engines repack a misaligned operand while a
// kernel holds every SM, and how fast? The question behind hiding the
// alignment path's copy under the GEMM (docs/production-log.md, "Why the
// repacked shapes stop near 0.8 of aligned"): the repack kernel needs the SMs
// the GEMM needs, a copy engine does not.
//
//   tcgemm-ce-probe [--rows R] [--cols C] [--reps N] [--gemm G]
//
// The operand is R x C bf16, row-major, its leading dimension C and its base
// 2 bytes past a 16-byte boundary (what `tcgemm-bench --m R --k C` repacks
// when C is odd); its repacked form has the leading dimension C rounded up
// to 8. It prints:
//   1. rates alone, in GB/s of bytes read plus bytes written, each the
//      median of --reps timed launches: a 1-D device-to-device
//      cudaMemcpyAsync of the same bytes (aligned); cudaMemcpy2DAsync doing
//      the repack; the same in K slabs of W columns (one 2-D copy per slab,
//      W = 64 .. 1024: the unit a GEMM's producer would wait for); the
//      library's repack kernel (SMs) for reference. Each repack's result is
//      compared with the source on the host, every element.
//   2. engine or SMs: a kernel whose 2 x SMs blocks of 1024 threads fill
//      every SM's thread slots spins on a flag in global memory; a second
//      stream sets the flag with cuStreamWriteValue32, after nothing (the
//      control: a stream memory operation needs no SM), after a 1-D copy,
//      after the 2-D repack. A copy that needs an SM cannot run while the
//      spinners hold them all: they give up after 2 s. Otherwise it prints
//      when the flag arrived, from the spinners' start.
//   3. beside a GEMM: the 2-D repack on a second stream while cuBLAS runs a
//      G x G x G bf16 GEMM (compute-bound) on the first: each one's time
//      alone and started together, so the copy's cost to the GEMM shows.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/prod/repack.h"
#include "testing/testing.h"

namespace {

using tcgemm::DType;
using tcgemm::testing::DeviceBuffer;

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
  }
}

using WriteValue32Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

WriteValue32Fn write_value32() {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  TCGEMM_CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &ptr, 12000,
                                                     cudaEnableDefault, &query));
  if (query != cudaDriverEntryPointSuccess || ptr == nullptr) {
    throw std::runtime_error("the driver has no cuStreamWriteValue32");
  }
  return reinterpret_cast<WriteValue32Fn>(ptr);
}

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 of each block spins until *flag != 0 or timeout_ns pass, then
// records its start and the time it saw the flag (0 if it gave up). The
// other threads hold their slots at the barrier.
__global__ void __launch_bounds__(1024, 2)
    spin_until_flag(const unsigned* flag, std::uint64_t timeout_ns, std::uint64_t* start,
                    std::uint64_t* seen) {
  if (threadIdx.x == 0) {
    const std::uint64_t t0 = global_timer_ns();
    std::uint64_t t = t0;
    unsigned value = 0;
    while (t - t0 < timeout_ns) {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
      t = global_timer_ns();
      if (value != 0) break;
      __nanosleep(200);
    }
    start[blockIdx.x] = t0;
    seen[blockIdx.x] = value != 0 ? t : 0;
  }
  __syncthreads();
}

struct Timer {
  cudaEvent_t begin{}, end{};
  Timer() {
    TCGEMM_CHECK_CUDA(cudaEventCreate(&begin));
    TCGEMM_CHECK_CUDA(cudaEventCreate(&end));
  }
  ~Timer() {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
};

template <typename Enqueue>
double median_ms(int reps, cudaStream_t stream, Enqueue enqueue) {
  Timer timer;
  enqueue();  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    TCGEMM_CHECK_CUDA(cudaEventRecord(timer.begin, stream));
    enqueue();
    TCGEMM_CHECK_CUDA(cudaEventRecord(timer.end, stream));
    TCGEMM_CHECK_CUDA(cudaEventSynchronize(timer.end));
    float t = 0;
    TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, timer.begin, timer.end));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Operand {
  std::int64_t rows, cols, ld_dst;
  const char* src;  // 2 bytes past a 16-byte boundary
  char* dst;        // aligned, ld_dst elements a row
  std::size_t src_pitch() const { return static_cast<std::size_t>(cols) * 2; }
  std::size_t dst_pitch() const { return static_cast<std::size_t>(ld_dst) * 2; }
  double bytes_moved() const { return 2.0 * static_cast<double>(rows * cols) * 2; }
};

void repack_2d(const Operand& op, std::int64_t col0, std::int64_t width, cudaStream_t stream) {
  TCGEMM_CHECK_CUDA(cudaMemcpy2DAsync(op.dst + col0 * 2, op.dst_pitch(), op.src + col0 * 2,
                                      op.src_pitch(), static_cast<std::size_t>(width) * 2,
                                      static_cast<std::size_t>(op.rows), cudaMemcpyDeviceToDevice,
                                      stream));
}

void repack_slabs(const Operand& op, std::int64_t slab, cudaStream_t stream) {
  for (std::int64_t c = 0; c < op.cols; c += slab) {
    repack_2d(op, c, std::min(slab, op.cols - c), stream);
  }
}

// Every element of the repacked operand against its source; the count of
// mismatches.
std::int64_t mismatches(const Operand& op) {
  std::vector<std::uint16_t> src(static_cast<std::size_t>(op.rows * op.cols));
  std::vector<std::uint16_t> dst(static_cast<std::size_t>(op.rows * op.ld_dst));
  TCGEMM_CHECK_CUDA(cudaMemcpy(src.data(), op.src, src.size() * 2, cudaMemcpyDeviceToHost));
  TCGEMM_CHECK_CUDA(cudaMemcpy(dst.data(), op.dst, dst.size() * 2, cudaMemcpyDeviceToHost));
  std::int64_t bad = 0;
  for (std::int64_t r = 0; r < op.rows; ++r) {
    for (std::int64_t c = 0; c < op.cols; ++c) {
      bad += src[r * op.cols + c] != dst[r * op.ld_dst + c];
    }
  }
  return bad;
}

// Poisons the repacked operand. The copies run on non-blocking streams,
// which do not wait for the legacy stream's memset: it is finished here.
void clear_dst(const Operand& op) {
  TCGEMM_CHECK_CUDA(cudaMemset(op.dst, 0xff, static_cast<std::size_t>(op.rows) * op.dst_pitch()));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

int run(std::int64_t rows, std::int64_t cols, int reps, int gemm_n) {
  int device = 0, sms = 0;
  TCGEMM_CHECK_CUDA(cudaGetDevice(&device));
  TCGEMM_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  TCGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs, %d async engines; operand %lld x %lld bf16, lda %lld, base +2 bytes\n",
              prop.name, sms, prop.asyncEngineCount, static_cast<long long>(rows),
              static_cast<long long>(cols), static_cast<long long>(cols));

  const std::int64_t ld_dst = (cols + 7) / 8 * 8;
  const DeviceBuffer src_buffer(static_cast<std::size_t>(rows * cols) * 2 + 16);
  const DeviceBuffer dst_buffer(static_cast<std::size_t>(rows * ld_dst) * 2);
  char* const src_alloc = static_cast<char*>(src_buffer.get());
  char* const dst = static_cast<char*>(dst_buffer.get());
  const Operand op{rows, cols, ld_dst, src_alloc + 2, dst};
  tcgemm::testing::fill_small_integers(src_alloc + 2, DType::kBF16, rows * cols, 1);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());  // before the non-blocking streams

  cudaStream_t main_stream{}, side{};
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  const double gb = op.bytes_moved() / 1e9;

  // 1. Rates alone.
  std::printf("\n1. alone (median of %d)            ms     GB/s  mismatches\n", reps);
  auto report = [&](const char* name, double ms, long long bad) {
    std::printf("%-32s %8.4f %8.0f  %lld\n", name, ms, gb / (ms * 1e-3), bad);
  };
  report("1-D cudaMemcpyAsync (aligned)",
         median_ms(reps, main_stream,
                   [&] {
                     TCGEMM_CHECK_CUDA(cudaMemcpyAsync(dst, src_alloc,
                                                       static_cast<std::size_t>(rows * cols) * 2,
                                                       cudaMemcpyDeviceToDevice, main_stream));
                   }),
         -1);
  clear_dst(op);
  double ms = median_ms(reps, main_stream, [&] { repack_2d(op, 0, cols, main_stream); });
  report("2-D cudaMemcpy2DAsync repack", ms, mismatches(op));
  for (const std::int64_t slab : {64, 128, 256, 512, 1024}) {
    clear_dst(op);
    ms = median_ms(reps, main_stream, [&] { repack_slabs(op, slab, main_stream); });
    const std::string name = "2-D in slabs of " + std::to_string(slab) + " columns";
    report(name.c_str(), ms, mismatches(op));
  }
  clear_dst(op);
  tcgemm::kernels::prod::RepackJob job;
  job.src = op.src;
  job.dst = op.dst;
  job.inner = cols;
  job.outer = rows;
  job.ld = cols;
  job.stride = rows * cols;
  job.ld_dst = ld_dst;
  job.stride_dst = rows * ld_dst;
  ms = median_ms(reps, main_stream, [&] {
    const tcgemm::Status status = tcgemm::kernels::prod::launch_repack(job, main_stream);
    if (!status.ok()) throw std::runtime_error("launch_repack: " + status.message);
  });
  report("repack kernel (SMs)", ms, mismatches(op));

  // 2. Engine or SMs: the flag write alone (the control: a stream memory
  // operation needs no SM), after a 1-D copy, after the 2-D repack.
  std::printf("\n2. under %d blocks of 1024 threads that hold every SM until a flag is set\n",
              2 * sms);
  std::printf("%-28s %10s %14s\n", "what the flag follows", "gave up", "flag after us");
  const DeviceBuffer flag_buffer(sizeof(unsigned));
  const DeviceBuffer times_buffer(sizeof(std::uint64_t) * 4 * sms);
  auto* const flag = static_cast<unsigned*>(flag_buffer.get());
  auto* const times = static_cast<std::uint64_t*>(times_buffer.get());
  const WriteValue32Fn write32 = write_value32();
  const auto under_spinners = [&](const char* name, const auto& enqueue) {
    TCGEMM_CHECK_CUDA(cudaMemset(flag, 0, sizeof(unsigned)));
    clear_dst(op);
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    spin_until_flag<<<2 * sms, 1024, 0, main_stream>>>(flag, 2'000'000'000ull, times,
                                                       times + 2 * sms);
    TCGEMM_CHECK_CUDA(cudaGetLastError());
    enqueue();
    if (write32(side, reinterpret_cast<CUdeviceptr>(flag), 1, CU_STREAM_WRITE_VALUE_DEFAULT) !=
        CUDA_SUCCESS) {
      throw std::runtime_error("cuStreamWriteValue32 failed");
    }
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<std::uint64_t> host(4 * sms);
    TCGEMM_CHECK_CUDA(cudaMemcpy(host.data(), times, host.size() * sizeof(std::uint64_t),
                                 cudaMemcpyDeviceToHost));
    const std::uint64_t first = *std::min_element(host.begin(), host.begin() + 2 * sms);
    int gave_up = 0;
    std::uint64_t latest = 0;
    for (int b = 0; b < 2 * sms; ++b) {
      if (host[2 * sms + b] == 0) {
        ++gave_up;
      } else {
        latest = std::max(latest, host[2 * sms + b]);
      }
    }
    // A flag that came sooner than the copy alone takes (part 1) means the
    // copy ran before the spinners took the SMs.
    if (gave_up == 2 * sms) {
      std::printf("%-28s %6d/%-3d %14s\n", name, gave_up, 2 * sms, "never");
    } else {
      std::printf("%-28s %6d/%-3d %14.1f\n", name, gave_up, 2 * sms, (latest - first) * 1e-3);
    }
    return gave_up;
  };
  const int alone = under_spinners("nothing (the control)", [] {});
  const int linear = under_spinners("a 1-D copy (aligned)", [&] {
    TCGEMM_CHECK_CUDA(cudaMemcpyAsync(dst, src_alloc, static_cast<std::size_t>(rows * cols) * 2,
                                      cudaMemcpyDeviceToDevice, side));
  });
  const int pitched = under_spinners("the 2-D repack", [&] { repack_2d(op, 0, cols, side); });
  std::printf("2-D repack result: %lld mismatches\n", static_cast<long long>(mismatches(op)));
  const auto verdict = [&](const char* what, int gave_up) {
    if (alone != 0) {
      std::printf("%s: no verdict (the control's flag did not reach every spinner)\n", what);
    } else if (gave_up == 0) {
      std::printf("%s: done while every SM was held (a copy engine)\n", what);
    } else if (gave_up == 2 * sms) {
      std::printf("%s: not done until the spinners gave up (it needs SMs)\n", what);
    } else {
      std::printf("%s: no verdict (some spinners saw the flag, some gave up)\n", what);
    }
  };
  verdict("1-D copy", linear);
  verdict("2-D repack", pitched);

  // 3. Beside a compute-bound GEMM.
  std::printf("\n3. beside cuBLAS %d^3 bf16 (medians of %d)\n", gemm_n, reps);
  cublasHandle_t handle{};
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, main_stream), "cublasSetStream");
  const std::size_t elems = static_cast<std::size_t>(gemm_n) * gemm_n;
  const DeviceBuffer a_buffer(elems * 2), b_buffer(elems * 2), c_buffer(elems * 2);
  void* const a = a_buffer.get();
  void* const b = b_buffer.get();
  void* const c = c_buffer.get();
  tcgemm::testing::fill_small_integers(a, DType::kBF16, static_cast<std::int64_t>(elems), 2);
  tcgemm::testing::fill_small_integers(b, DType::kBF16, static_cast<std::int64_t>(elems), 3);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  const float alpha = 1.0f / 1024, beta = 0.0f;
  auto gemm = [&] {
    check(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, gemm_n, gemm_n, gemm_n, &alpha, a,
                       CUDA_R_16BF, gemm_n, b, CUDA_R_16BF, gemm_n, &beta, c, CUDA_R_16BF, gemm_n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  const double gemm_ms = median_ms(reps, main_stream, gemm);
  const double copy_ms = median_ms(reps, side, [&] { repack_2d(op, 0, cols, side); });
  // Together: both start after one event on the main stream; each end is
  // timed from that start.
  Timer timer;
  cudaEvent_t copy_end{};
  TCGEMM_CHECK_CUDA(cudaEventCreate(&copy_end));
  std::vector<float> both_gemm, both_copy;
  for (int r = 0; r < reps + 1; ++r) {
    TCGEMM_CHECK_CUDA(cudaEventRecord(timer.begin, main_stream));
    TCGEMM_CHECK_CUDA(cudaStreamWaitEvent(side, timer.begin));
    repack_2d(op, 0, cols, side);
    TCGEMM_CHECK_CUDA(cudaEventRecord(copy_end, side));
    gemm();
    TCGEMM_CHECK_CUDA(cudaEventRecord(timer.end, main_stream));
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    if (r == 0) continue;  // warm-up
    float t = 0;
    TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, timer.begin, timer.end));
    both_gemm.push_back(t);
    TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, timer.begin, copy_end));
    both_copy.push_back(t);
  }
  std::sort(both_gemm.begin(), both_gemm.end());
  std::sort(both_copy.begin(), both_copy.end());
  std::printf("%-24s %10s %10s\n", "", "GEMM ms", "copy ms");
  std::printf("%-24s %10.4f %10.4f\n", "alone", gemm_ms, copy_ms);
  std::printf("%-24s %10.4f %10.4f\n", "together", both_gemm[both_gemm.size() / 2],
              both_copy[both_copy.size() / 2]);
  cudaEventDestroy(copy_end);
  cublasDestroy(handle);
  cudaStreamDestroy(main_stream);
  cudaStreamDestroy(side);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tcgemm-ce-probe: the alignment repack by copy engine, beside the SMs"};
  std::int64_t rows = 4096, cols = 4093;
  int reps = 20, gemm_n = 8192;
  app.add_option("--rows", rows, "operand rows")->check(CLI::Range(1, 1 << 20));
  app.add_option("--cols", cols, "operand columns (its leading dimension)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--reps", reps, "timed launches per measurement")->check(CLI::Range(1, 1000));
  app.add_option("--gemm", gemm_n, "the side GEMM's M = N = K")->check(CLI::Range(256, 16384));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(rows, cols, reps, gemm_n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcgemm-ce-probe: %s\n", e.what());
    return 1;
  }
}
