// tcgemm-dist-bench: the tensor-parallel GEMMs (include/tcgemm/dist.h) on
// every GPU of this machine, one host thread per GPU, one communicator per
// tensor-parallel size. For each projection and size it times, per rank:
//
//   t_gemm        the rank's GEMM alone (tcgemm::gemm on its shard problem)
//   t_comm        the collective alone (ncclAllGather of A's shards, or
//                 ncclReduceScatter of the M x N partial product)
//   t_baseline    collective then GEMM (all-gather), GEMM then collective
//                 (reduce-scatter), on one stream
//   t_overlapped  all_gather_gemm or gemm_reduce_scatter, once for each
//                 --gemm-sms value (DistOptions::gemm_sms: the SMs the shard
//                 GEMMs under a transfer may use, leaving the rest to NCCL)
//
// and prints the slowest rank's median of each, the share of the
// communication hidden, (t_gemm + t_comm - t_overlapped) / t_comm, and
// overlapped / baseline. Before timing, every rank checks the overlapped
// result: the all-gather's gathered A bit for bit against ncclAllGather's and
// its C against the reference GEMM (src/testing) of that A; the
// reduce-scatter's C against the baseline's (ncclReduceScatter of tcgemm's
// partial products), within the dtype's tolerance. A failure on one rank
// (an exception) leaves the others waiting in NCCL: the run then hangs
// rather than reporting, as NCCL programs do.
//
//   tcgemm-dist-bench [--tp 2,4,8] [--set issue|llm|all] [--gemm-sms 0,124,116]
//                     [--iters N] [--csv FILE]
//
// bf16 inputs and C, A row-major (activations), B column-major (W^T of
// row-major weights), C row-major. NCCL_NVLS_ENABLE is set to 0 before NCCL
// starts (NVLink multicast stays off, docs/distributed.md).
#include <cuda_runtime.h>
#include <nccl.h>
#include <tcgemm/dist.h>
#include <tcgemm/tcgemm.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dist/ring.h"
#include "dist/shard_gemm.h"
#include "testing/testing.h"

namespace {

using tcgemm::DType;
using tcgemm::Layout;
using tcgemm::testing::DeviceBuffer;

enum class Op { kAllGather, kReduceScatter };

struct Projection {
  Op op;
  std::int64_t m, n, k;  // the whole product
};

std::vector<Projection> projections(const std::string& set) {
  std::vector<Projection> out;
  if (set == "issue" || set == "all") {
    out.push_back({Op::kAllGather, 8192, 8192, 8192});
    out.push_back({Op::kReduceScatter, 8192, 8192, 8192});
    out.push_back({Op::kAllGather, 16384, 28672, 8192});
    out.push_back({Op::kReduceScatter, 16384, 8192, 28672});
  }
  if (set == "llm" || set == "all") {
    // The llm set's (N, K) pairs at 4096 and 16384 tokens: column-parallel
    // where N is the wide side, row-parallel where K is.
    for (const std::int64_t m : {4096, 16384}) {
      out.push_back({Op::kAllGather, m, 4096, 4096});
      out.push_back({Op::kAllGather, m, 14336, 4096});
      out.push_back({Op::kReduceScatter, m, 4096, 14336});
      out.push_back({Op::kAllGather, m, 28672, 8192});
      out.push_back({Op::kReduceScatter, m, 8192, 28672});
    }
  }
  return out;
}

#define CHECK_NCCL(call)                                                            \
  do {                                                                              \
    if (const ncclResult_t r_ = (call); r_ != ncclSuccess) {                        \
      throw std::runtime_error(std::string(#call) + ": " + ncclGetErrorString(r_)); \
    }                                                                               \
  } while (0)

void check(const tcgemm::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message);
}

struct Times {
  double gemm = 0, comm = 0, baseline = 0;
  std::vector<double> overlapped;  // per --gemm-sms value
  double error = 0;  // the overlapped C against the check's reference (relative, Frobenius)
  bool ok = true;    // within tolerance, every element finite (and A gathered right)
};

// Median ms per call of `call` (iters calls, each timed by events on `stream`).
double median_ms(cudaStream_t stream, int warmup, int iters, const std::function<void()>& call) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<float> ms(static_cast<std::size_t>(iters));
  cudaEvent_t start, stop;
  TCGEMM_CHECK_CUDA(cudaEventCreate(&start));
  TCGEMM_CHECK_CUDA(cudaEventCreate(&stop));
  for (float& t : ms) {
    TCGEMM_CHECK_CUDA(cudaEventRecord(start, stream));
    call();
    TCGEMM_CHECK_CUDA(cudaEventRecord(stop, stream));
    TCGEMM_CHECK_CUDA(cudaEventSynchronize(stop));
    TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One rank's run of one projection.
Times run_rank(const Projection& pr, int rank, int ranks, ncclComm_t comm,
               tcgemm::dist::Context& ctx, cudaStream_t stream, int warmup, int iters,
               const std::vector<int>& gemm_sms, std::barrier<>& sync) {
  Times t;
  const auto bf16 = [](std::int64_t elements) { return static_cast<std::size_t>(elements) * 2; };
  // All ranks start each measurement together.
  const auto together = [&](const std::function<void()>& call) {
    TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    sync.arrive_and_wait();
    return median_ms(stream, warmup, iters, call);
  };
  if (pr.op == Op::kAllGather) {
    const tcgemm::dist::RankShape s = tcgemm::dist::column_parallel(pr.m, pr.n, pr.k, ranks);
    DeviceBuffer a(bf16(s.m * s.k)), b(bf16(s.k * s.n)), gathered(bf16(pr.m * s.k)),
        gathered_ref(bf16(pr.m * s.k)), c(bf16(pr.m * s.n)), c_ref(bf16(pr.m * s.n));
    tcgemm::testing::fill_normal(a.get(), DType::kBF16, s.m * s.k, 0x1000 + rank, stream);
    tcgemm::testing::fill_normal(b.get(), DType::kBF16, s.k * s.n, 0x2000 + rank, stream);
    // The rank's GEMM on the gathered A.
    const tcgemm::GemmArgs g = tcgemm::dist::shard_gemm(
        pr.m, s.n, s.k, {gathered_ref.get(), DType::kBF16, Layout::kRowMajor, s.k, 0},
        {b.get(), DType::kBF16, Layout::kColMajor, s.k, 0},
        {c_ref.get(), DType::kBF16, Layout::kRowMajor, s.n, 0}, 1.0f, 0.0f, stream);
    tcgemm::dist::AllGatherGemmArgs args;
    args.m = pr.m;
    args.m_local = s.m;
    args.n = s.n;
    args.k = s.k;
    args.a_shard = {a.get(), DType::kBF16, Layout::kRowMajor, s.k, 0};
    args.b = g.b;
    args.c = {c.get(), DType::kBF16, Layout::kRowMajor, s.n, 0};
    args.gathered_a = gathered.get();
    args.stream = stream;
    tcgemm::dist::DistOptions timed;
    timed.check_peers = false;  // checked once below
    const auto gather = [&] {
      CHECK_NCCL(ncclAllGather(a.get(), gathered_ref.get(), static_cast<std::size_t>(s.m * s.k),
                               ncclBfloat16, comm, stream));
    };
    // Verify: the baseline, then the overlapped op (peer check on).
    gather();
    check(tcgemm::gemm(g), "gemm");
    check(tcgemm::dist::all_gather_gemm(ctx, args), "all_gather_gemm");
    TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    const bool gathered_ok =
        tcgemm::testing::bitwise_equal(gathered.get(), gathered_ref.get(), gathered.bytes());
    DeviceBuffer ref(static_cast<std::size_t>(pr.m * s.n) * sizeof(float));
    tcgemm::testing::reference_gemm(g, static_cast<float*>(ref.get()), stream);
    tcgemm::GemmArgs ours = g;
    ours.c.ptr = c.get();
    const tcgemm::testing::ErrorStats e =
        tcgemm::testing::compare(ours, static_cast<const float*>(ref.get()), stream);
    t.error = e.rel_fro;
    t.ok = gathered_ok && e.passed(tcgemm::testing::tolerance_for(DType::kBF16));
    t.gemm = together([&] { check(tcgemm::gemm(g), "gemm"); });
    t.comm = together(gather);
    t.baseline = together([&] {
      gather();
      check(tcgemm::gemm(g), "gemm");
    });
    for (const int sms : gemm_sms) {
      timed.gemm_sms = sms;
      t.overlapped.push_back(together(
          [&] { check(tcgemm::dist::all_gather_gemm(ctx, args, timed), "all_gather_gemm"); }));
    }
  } else {
    const tcgemm::dist::RankShape s = tcgemm::dist::row_parallel(pr.m, pr.n, pr.k, ranks);
    const std::int64_t m_local = pr.m / ranks;
    DeviceBuffer a(bf16(s.m * s.k)), b(bf16(s.k * s.n)), partial(bf16(s.m * s.n)),
        c(bf16(m_local * s.n)), c_ref(bf16(m_local * s.n));
    tcgemm::testing::fill_normal(a.get(), DType::kBF16, s.m * s.k, 0x3000 + rank, stream);
    tcgemm::testing::fill_normal(b.get(), DType::kBF16, s.k * s.n, 0x4000 + rank, stream);
    // The rank's partial product, all M rows.
    const tcgemm::GemmArgs g = tcgemm::dist::shard_gemm(
        s.m, s.n, s.k, {a.get(), DType::kBF16, Layout::kRowMajor, s.k, 0},
        {b.get(), DType::kBF16, Layout::kColMajor, s.k, 0},
        {partial.get(), DType::kBF16, Layout::kRowMajor, s.n, 0}, 1.0f, 0.0f, stream);
    tcgemm::dist::GemmReduceScatterArgs args;
    args.m = s.m;
    args.m_local = m_local;
    args.n = s.n;
    args.k_local = s.k;
    args.a_shard = g.a;
    args.b_shard = g.b;
    args.c = {c.get(), DType::kBF16, Layout::kRowMajor, s.n, 0};
    args.stream = stream;
    const std::size_t ws = tcgemm::dist::reduce_scatter_workspace_size(args, ranks);
    DeviceBuffer workspace(std::max<std::size_t>(ws, 256));
    args.workspace = workspace.get();
    args.workspace_bytes = ws;
    tcgemm::dist::DistOptions timed;
    timed.check_peers = false;
    const auto scatter = [&] {
      CHECK_NCCL(ncclReduceScatter(partial.get(), c_ref.get(),
                                   static_cast<std::size_t>(m_local * s.n), ncclBfloat16, ncclSum,
                                   comm, stream));
    };
    check(tcgemm::gemm(g), "gemm");
    scatter();
    check(tcgemm::dist::gemm_reduce_scatter(ctx, args), "gemm_reduce_scatter");
    TCGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    // The baseline's C (bf16) as the fp32 reference compare() takes.
    DeviceBuffer ref(static_cast<std::size_t>(m_local * s.n) * sizeof(float));
    {
      std::vector<float> host(static_cast<std::size_t>(m_local * s.n));
      std::vector<std::uint16_t> raw(host.size());
      TCGEMM_CHECK_CUDA(cudaMemcpy(raw.data(), c_ref.get(), c_ref.bytes(), cudaMemcpyDeviceToHost));
      // Row-major C_ref to the column-major layout compare() reads.
      for (std::int64_t i = 0; i < m_local; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          const std::uint32_t bits = std::uint32_t{raw[i * s.n + j]} << 16;
          float v;
          std::memcpy(&v, &bits, sizeof v);
          host[j * m_local + i] = v;
        }
      }
      TCGEMM_CHECK_CUDA(cudaMemcpy(ref.get(), host.data(), ref.bytes(), cudaMemcpyHostToDevice));
    }
    tcgemm::GemmArgs ours;
    ours.m = m_local;
    ours.n = s.n;
    ours.k = s.k;
    ours.c = args.c;
    const tcgemm::testing::ErrorStats e =
        tcgemm::testing::compare(ours, static_cast<const float*>(ref.get()), stream);
    t.error = e.rel_fro;
    t.ok = e.passed(tcgemm::testing::tolerance_for(DType::kBF16));
    t.gemm = together([&] { check(tcgemm::gemm(g), "gemm"); });
    t.comm = together(scatter);
    t.baseline = together([&] {
      check(tcgemm::gemm(g), "gemm");
      scatter();
    });
    for (const int sms : gemm_sms) {
      timed.gemm_sms = sms;
      t.overlapped.push_back(together([&] {
        check(tcgemm::dist::gemm_reduce_scatter(ctx, args, timed), "gemm_reduce_scatter");
      }));
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tcgemm-dist-bench: tensor-parallel GEMMs over NCCL, overlapped against not"};
  std::vector<int> tps{2, 4, 8};
  std::string set = "issue";
  int iters = 10;
  int warmup = 3;
  std::string csv;
  std::vector<int> gemm_sms{0};
  app.add_option("--tp", tps, "tensor-parallel sizes (those above the GPU count are skipped)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("--set", set,
                 "projections: issue (8192^3, 16384x28672x8192 AG, "
                 "16384x8192x28672 RS), llm, all")
      ->check(CLI::IsMember({"issue", "llm", "all"}));
  app.add_option("--iters", iters, "timed calls per measurement (median)")
      ->check(CLI::Range(3, 1000));
  app.add_option("--warmup", warmup, "calls before timing")->check(CLI::Range(1, 100));
  app.add_option("--gemm-sms", gemm_sms,
                 "DistOptions::gemm_sms values to time the overlapped call with (0: every SM)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--csv", csv, "write one row per (projection, tp, gemm-sms) to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, as the other tools' do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 1);

  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::fprintf(stderr, "tcgemm-dist-bench: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) {
      std::fprintf(stderr, "tcgemm-dist-bench: could not open %s\n", csv.c_str());
      return 2;
    }
    out << "# " << gpus << " x " << prop.name << "\n"
        << "op,tp,M,N,K,gemm_sms,t_gemm_ms,t_comm_ms,t_baseline_ms,t_overlapped_ms,hidden,"
           "overlapped_vs_baseline,rel_err,verified\n";
  }
  std::printf("%d x %s\n%-4s %3s %6s %6s %6s %5s %9s %9s %9s %9s %7s %7s %9s\n", gpus, prop.name,
              "op", "tp", "M", "N", "K", "sms", "gemm ms", "comm ms", "base ms", "ovl ms", "hidden",
              "ovl/base", "rel err");
  int failures = 0;
  for (const int tp : tps) {
    if (tp < 1 || tp > gpus) continue;
    std::vector<Projection> todo;
    for (const Projection& pr : projections(set)) {
      const bool ok = pr.op == Op::kAllGather
                          ? tcgemm::dist::column_parallel(pr.m, pr.n, pr.k, tp).divides
                          : tcgemm::dist::row_parallel(pr.m, pr.n, pr.k, tp).divides;
      if (ok) todo.push_back(pr);
    }
    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id));
    std::vector<std::vector<Times>> times(static_cast<std::size_t>(tp));
    std::vector<std::string> errors(static_cast<std::size_t>(tp));
    std::barrier<> sync(tp);
    std::vector<std::thread> threads;
    for (int r = 0; r < tp; ++r) {
      threads.emplace_back([&, r] {
        try {
          TCGEMM_CHECK_CUDA(cudaSetDevice(r));
          ncclComm_t comm = nullptr;
          CHECK_NCCL(ncclCommInitRank(&comm, tp, id, r));
          tcgemm::dist::Context ctx;
          check(tcgemm::dist::Context::create(comm, &ctx), "Context::create");
          cudaStream_t stream = nullptr;
          TCGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
          for (const Projection& pr : todo) {
            times[r].push_back(
                run_rank(pr, r, tp, comm, ctx, stream, warmup, iters, gemm_sms, sync));
          }
          cudaStreamDestroy(stream);
          ctx = tcgemm::dist::Context();
          ncclCommDestroy(comm);
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < tp; ++r) {
      if (!errors[r].empty()) {
        std::fprintf(stderr, "tcgemm-dist-bench: tp %d rank %d: %s\n", tp, r, errors[r].c_str());
        return 1;
      }
    }
    for (std::size_t i = 0; i < todo.size(); ++i) {
      Times worst;
      worst.overlapped.assign(gemm_sms.size(), 0.0);
      for (int r = 0; r < tp; ++r) {
        const Times& t = times[r][i];
        worst.gemm = std::max(worst.gemm, t.gemm);
        worst.comm = std::max(worst.comm, t.comm);
        worst.baseline = std::max(worst.baseline, t.baseline);
        for (std::size_t v = 0; v < gemm_sms.size(); ++v) {
          worst.overlapped[v] = std::max(worst.overlapped[v], t.overlapped[v]);
        }
        worst.error = std::max(worst.error, t.error);
        worst.ok = worst.ok && t.ok;
      }
      const Projection& pr = todo[i];
      failures += worst.ok ? 0 : 1;
      const char* op = pr.op == Op::kAllGather ? "ag" : "rs";
      for (std::size_t v = 0; v < gemm_sms.size(); ++v) {
        const double overlapped = worst.overlapped[v];
        const double hidden = (worst.gemm + worst.comm - overlapped) / worst.comm;
        std::printf("%-4s %3d %6lld %6lld %6lld %5d %9.4f %9.4f %9.4f %9.4f %7.3f %7.3f %9.2e%s\n",
                    op, tp, static_cast<long long>(pr.m), static_cast<long long>(pr.n),
                    static_cast<long long>(pr.k), gemm_sms[v], worst.gemm, worst.comm,
                    worst.baseline, overlapped, hidden, overlapped / worst.baseline, worst.error,
                    worst.ok ? "" : "  FAILED");
        if (out) {
          out << op << ',' << tp << ',' << pr.m << ',' << pr.n << ',' << pr.k << ',' << gemm_sms[v]
              << ',' << worst.gemm << ',' << worst.comm << ',' << worst.baseline << ','
              << overlapped << ',' << hidden << ',' << overlapped / worst.baseline << ','
              << worst.error << ',' << (worst.ok ? 1 : 0) << '\n';
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
