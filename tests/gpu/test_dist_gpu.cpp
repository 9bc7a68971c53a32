// The tensor-parallel GEMMs (include/tcgemm/dist.h) on the device: one rank
// on one GPU, and every GPU of the machine as the ranks of one communicator
// (one host thread each). Each rank checks its C against the reference GEMM
// of the whole product (src/testing), on small integer inputs, so every
// element must match exactly (but a bf16 C whose sums cross ranks in bf16),
// with guard bands around C and its padding poisoned; and a mismatch between
// ranks must be an error on every rank with C untouched.
#include "gpu_test_util.h"

#include <cuda_bf16.h>
#include <nccl.h>
#include <tcgemm/dist.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace tcgemm_test {
namespace {

using tcgemm::dist::AllGatherGemmArgs;
using tcgemm::dist::Context;
using tcgemm::dist::GemmReduceScatterArgs;

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

// Runs body(rank, ctx) on `ranks` GPUs, one thread each, over one fresh
// communicator; the device is the rank.
void on_ranks(int ranks, const std::function<void(int, Context&)>& body) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
      ncclComm_t comm = nullptr;
      ASSERT_EQ(ncclCommInitRank(&comm, ranks, id, r), ncclSuccess);
      {
        Context ctx;
        const Status s = Context::create(comm, &ctx);
        EXPECT_TRUE(s.ok()) << s.message;
        if (s.ok()) {
          EXPECT_EQ(ctx.rank(), r);
          EXPECT_EQ(ctx.size(), ranks);
          try {
            body(r, ctx);
          } catch (const std::exception& e) {
            ADD_FAILURE() << "rank " << r << ": " << e.what();
          }
        }
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
      ncclCommDestroy(comm);
    });
  }
  for (std::thread& t : threads) t.join();
}

// `count` bf16 values that are integers in [-3, 3] (seeded), on the device.
DeviceBuffer small_integers(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(-3, 3);
  std::vector<__nv_bfloat16> host(static_cast<std::size_t>(count));
  for (auto& v : host) v = __float2bfloat16(static_cast<float>(pick(rng)));
  DeviceBuffer d(host.size() * sizeof(__nv_bfloat16));
  TCGEMM_CHECK_CUDA(cudaMemcpy(d.get(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

DeviceBuffer poisoned(std::int64_t count, DType t) {
  DeviceBuffer d(static_cast<std::size_t>(count) * tcgemm::size_of(t));
  tcgemm::testing::fill_poison(d.get(), t, count);
  return d;
}

std::vector<std::uint8_t> host_copy(const DeviceBuffer& d) {
  std::vector<std::uint8_t> h(d.bytes());
  TCGEMM_CHECK_CUDA(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

// How a case stores its operands: A's storage order, C's and its dtype,
// the padding of C's leading dimension past tight, beta, and whether the
// reduce-scatter gets a workspace (else it allocates its own). fp32 C is
// checked element for element; bf16 C (whose sums round) within bf16's
// tolerance.
struct Storage {
  Layout a = Layout::kRowMajor;
  Layout c = Layout::kRowMajor;
  DType out = DType::kFP32;
  std::int64_t c_pad = 0;
  float beta = 0.0f;
  bool workspace = false;
};

// `count` elements of C: integers in [-3, 3] (beta != 0: C is read), else
// poison, so an element the call does not write fails the check.
void fill_c(void* c, std::int64_t count, DType t, bool integers) {
  if (!integers) {
    tcgemm::testing::fill_poison(c, t, count);
    return;
  }
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
  if (t == DType::kFP32) {
    TCGEMM_CHECK_CUDA(cudaMemcpy(c, values.data(), values.size() * 4, cudaMemcpyHostToDevice));
    return;
  }
  std::vector<__nv_bfloat16> host(values.size());
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = __float2bfloat16(values[i]);
  TCGEMM_CHECK_CUDA(cudaMemcpy(c, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
}

// Refills C (fill_c) and, with beta != 0, poisons its padding with a value
// no store writes (poison_padding); returns a snapshot of the whole span,
// for PaddingUntouched after the call.
DeviceBuffer refill_c(const tcgemm::MutableMatrixRef& c, std::int64_t m, std::int64_t n,
                      std::int64_t span, bool integers) {
  fill_c(c.ptr, span, c.dtype, integers);
  if (integers) poison_padding(c, m, n);
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  return snapshot(c.ptr, static_cast<std::size_t>(span) * tcgemm::size_of(c.dtype));
}

std::int64_t ld_of(Layout layout, std::int64_t rows, std::int64_t cols, std::int64_t pad) {
  return (layout == Layout::kRowMajor ? cols : rows) + pad;
}

// A copy of rows [row0, row0 + rows) and columns [col0, col0 + cols) of the
// bf16 matrix `from` (its storage order, ld), in the same order with a tight
// ld: a rank's own shard, in memory of its own, so that nothing the call
// reads aliases the whole matrix the check keeps.
DeviceBuffer block_copy(const DeviceBuffer& from, Layout layout, std::int64_t ld, std::int64_t row0,
                        std::int64_t rows, std::int64_t col0, std::int64_t cols) {
  const bool row_major = layout == Layout::kRowMajor;
  const std::int64_t width = (row_major ? cols : rows) * 2;
  const std::int64_t height = row_major ? rows : cols;
  const std::int64_t first = row_major ? row0 * ld + col0 : col0 * ld + row0;
  DeviceBuffer d(static_cast<std::size_t>(rows * cols) * 2);
  TCGEMM_CHECK_CUDA(cudaMemcpy2D(d.get(), width, static_cast<const char*>(from.get()) + first * 2,
                                 ld * 2, width, height, cudaMemcpyDeviceToDevice));
  return d;
}

// C against the reference: element for element where every sum is exact
// (fp32 C, or a bf16 C computed on one rank from whole operands), within
// bf16's tolerance where partial sums travel between ranks in bf16.
void expect_matches(int rank, const GemmArgs& args, const DeviceBuffer& ref, DType out,
                    bool bf16_sums_travel) {
  const tcgemm::testing::ErrorStats e =
      tcgemm::testing::compare(args, static_cast<const float*>(ref.get()));
  EXPECT_EQ(e.nonfinite, 0) << "rank " << rank << ": elements of C not written";
  if (out != DType::kFP32 && !bf16_sums_travel) {
    EXPECT_EQ(e.mismatches, 0) << "rank " << rank << ": elements of C off the exact result";
  } else if (out == DType::kFP32) {
    EXPECT_EQ(e.max_abs, 0.0) << "rank " << rank << ": at (" << e.max_row << ", " << e.max_col
                              << ")";
  } else {
    EXPECT_TRUE(e.passed(tcgemm::testing::tolerance_for(out)))
        << "rank " << rank << ": rel " << e.rel_fro;
  }
}

// The all-gather GEMM of `ranks` shards of m_local rows: every rank keeps
// the whole A for the check and passes a copy of its own rows as the shard,
// multiplied by its own B; C (M x N) must equal the reference of all of A
// times that B (+ beta x C), and each slot of gathered_a the rows of A it
// stands for. With beta = 0 the call runs twice on one Context, C and
// gathered_a poisoned again before the second.
void check_all_gather(int rank, Context& ctx, int ranks, const Storage& st) {
  constexpr std::int64_t kMLocal = 136;
  constexpr std::int64_t kN = 264;
  constexpr std::int64_t kK = 192;
  const std::int64_t m = kMLocal * ranks;
  const bool a_row = st.a == Layout::kRowMajor;
  const std::int64_t lda = a_row ? kK : m;
  DeviceBuffer a = small_integers(m * kK, 0xa11);          // the same everywhere
  DeviceBuffer b = small_integers(kK * kN, 0xb00 + rank);  // column-major K x N, this rank's
  DeviceBuffer a_shard = block_copy(a, st.a, lda, rank * kMLocal, kMLocal, 0, kK);
  const std::int64_t ldc = ld_of(st.c, m, kN, st.c_pad);
  const std::int64_t c_span = tcgemm::testing::span_elements(m, kN, st.c, ldc);
  const GuardedC c = make_guarded_c(static_cast<std::size_t>(c_span) * tcgemm::size_of(st.out));
  DeviceBuffer gathered(static_cast<std::size_t>(m * kK) * 2);
  fill_c(c.get(), c_span, st.out, st.beta != 0.0f);
  GemmArgs whole;
  whole.m = m;
  whole.n = kN;
  whole.k = kK;
  whole.a = {a.get(), DType::kBF16, st.a, lda, 0};
  whole.b = {b.get(), DType::kBF16, Layout::kColMajor, kK, 0};
  whole.c = {c.get(), st.out, st.c, ldc, 0};
  whole.beta = st.beta;
  DeviceBuffer ref(static_cast<std::size_t>(m * kN) * sizeof(float));
  tcgemm::testing::reference_gemm(whole, static_cast<float*>(ref.get()));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());

  AllGatherGemmArgs args;
  args.m = m;
  args.m_local = kMLocal;
  args.n = kN;
  args.k = kK;
  args.a_shard = {a_shard.get(), DType::kBF16, st.a, a_row ? kK : kMLocal, 0};
  args.b = whole.b;
  args.c = whole.c;
  args.beta = st.beta;
  args.gathered_a = gathered.get();
  for (int call = 0; call < (st.beta == 0.0f ? 2 : 1); ++call) {
    tcgemm::testing::fill_poison(gathered.get(), DType::kBF16, m * kK);
    const DeviceBuffer before = refill_c(whole.c, m, kN, c_span, st.beta != 0.0f);
    const Status s = tcgemm::dist::all_gather_gemm(ctx, args);
    ASSERT_TRUE(s.ok()) << "rank " << rank << ": " << s.message;
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(PaddingUntouched(whole, before.get(), c_span)) << "rank " << rank;
  }
  EXPECT_TRUE(GuardsUntouched(c)) << "rank " << rank;
  // Each rank's GEMM runs on the gathered A, whole: exact in any C dtype.
  expect_matches(rank, whole, ref, st.out, /*bf16_sums_travel=*/false);
  // Slot s: rows [s m_local, (s + 1) m_local) of A, tight in A's order.
  const std::vector<std::uint8_t> a_host = host_copy(a);
  const std::vector<std::uint8_t> g_host = host_copy(gathered);
  std::int64_t wrong = 0;
  for (std::int64_t s = 0; s < ranks; ++s) {
    for (std::int64_t i = 0; i < kMLocal; ++i) {
      for (std::int64_t j = 0; j < kK; ++j) {
        const std::int64_t row = s * kMLocal + i;
        const std::int64_t from = a_row ? row * kK + j : j * m + row;
        const std::int64_t to = s * kMLocal * kK + (a_row ? i * kK + j : j * kMLocal + i);
        wrong += std::memcmp(&a_host[from * 2], &g_host[to * 2], 2) != 0 ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(wrong, 0) << "rank " << rank << ": elements of gathered_a that are not A's";
}

// The reduce-scatter GEMM over K = ranks x k_local: every rank keeps all of
// A and B for the check and passes copies of its K slice of each; rank r's
// C (its m_local rows, + beta x a C of integers) must equal the reference of
// those rows of A x B + beta x C. Without beta the call runs twice on one
// Context, C poisoned again before the second.
void check_reduce_scatter(int rank, Context& ctx, int ranks, const Storage& st) {
  constexpr std::int64_t kMLocal = 120;
  constexpr std::int64_t kN = 136;
  constexpr std::int64_t kKLocal = 72;
  const std::int64_t m = kMLocal * ranks;
  const std::int64_t k = kKLocal * ranks;
  const bool a_row = st.a == Layout::kRowMajor;
  const std::int64_t lda = a_row ? k : m;
  DeviceBuffer a = small_integers(m * k, 0xa22);   // M x K in st.a's order
  DeviceBuffer b = small_integers(k * kN, 0xb22);  // column-major K x N
  DeviceBuffer a_shard = block_copy(a, st.a, lda, 0, m, rank * kKLocal, kKLocal);
  DeviceBuffer b_shard = block_copy(b, Layout::kColMajor, k, rank * kKLocal, kKLocal, 0, kN);
  const std::int64_t ldc = ld_of(st.c, kMLocal, kN, st.c_pad);
  const std::int64_t c_span = tcgemm::testing::span_elements(kMLocal, kN, st.c, ldc);
  const GuardedC c = make_guarded_c(static_cast<std::size_t>(c_span) * tcgemm::size_of(st.out));
  fill_c(c.get(), c_span, st.out, st.beta != 0.0f);
  GemmArgs mine;  // this rank's rows of the whole product, for the reference
  mine.m = kMLocal;
  mine.n = kN;
  mine.k = k;
  const std::int64_t rows_offset = a_row ? rank * kMLocal * k : rank * kMLocal;
  mine.a = {static_cast<const char*>(a.get()) + rows_offset * 2, DType::kBF16, st.a, lda, 0};
  mine.b = {b.get(), DType::kBF16, Layout::kColMajor, k, 0};
  mine.c = {c.get(), st.out, st.c, ldc, 0};
  mine.beta = st.beta;
  DeviceBuffer ref(static_cast<std::size_t>(kMLocal * kN) * sizeof(float));
  tcgemm::testing::reference_gemm(mine, static_cast<float*>(ref.get()));
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());

  GemmReduceScatterArgs args;
  args.m = m;
  args.m_local = kMLocal;
  args.n = kN;
  args.k_local = kKLocal;
  args.a_shard = {a_shard.get(), DType::kBF16, st.a, a_row ? kKLocal : m, 0};
  args.b_shard = {b_shard.get(), DType::kBF16, Layout::kColMajor, kKLocal, 0};
  args.c = mine.c;
  args.beta = st.beta;
  DeviceBuffer workspace;
  if (st.workspace) {
    const std::size_t bytes = tcgemm::dist::reduce_scatter_workspace_size(args, ranks);
    workspace = DeviceBuffer(std::max<std::size_t>(bytes, 256));
    args.workspace = workspace.get();
    args.workspace_bytes = bytes;
  }
  for (int call = 0; call < (st.beta == 0.0f ? 2 : 1); ++call) {
    const DeviceBuffer before = refill_c(mine.c, kMLocal, kN, c_span, st.beta != 0.0f);
    const Status s = tcgemm::dist::gemm_reduce_scatter(ctx, args);
    ASSERT_TRUE(s.ok()) << "rank " << rank << ": " << s.message;
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(PaddingUntouched(mine, before.get(), c_span)) << "rank " << rank;
  }
  EXPECT_TRUE(GuardsUntouched(c)) << "rank " << rank;
  // With several ranks a bf16 C's partial sums cross in bf16 and round.
  expect_matches(rank, mine, ref, st.out, /*bf16_sums_travel=*/ranks > 1);
}

// The storage cases every test runs: tight row-major with fp32 C; then
// column-major A and C with C's ld padded, beta = 2 and a caller's
// workspace; then bf16 C (the sums travel in bf16).
const Storage kStorages[] = {
    Storage{},
    Storage{Layout::kColMajor, Layout::kColMajor, DType::kFP32, 8, 2.0f, true},
    Storage{Layout::kRowMajor, Layout::kRowMajor, DType::kBF16, 0, 0.0f, false},
};

class DistGpu : public HopperTest {};

TEST_F(DistGpu, OneRankAllGatherGemmIsTheGemm) {
  for (const Storage& st : kStorages) {
    on_ranks(1, [&](int rank, Context& ctx) { check_all_gather(rank, ctx, 1, st); });
  }
}

TEST_F(DistGpu, OneRankGemmReduceScatterIsTheGemm) {
  for (const Storage& st : kStorages) {
    on_ranks(1, [&](int rank, Context& ctx) { check_reduce_scatter(rank, ctx, 1, st); });
  }
}

TEST_F(DistGpu, EveryRankOfAllGatherGemmMatchesTheWholeProduct) {
  const int ranks = device_count();
  if (ranks < 2) GTEST_SKIP() << "one GPU: the ring needs two";
  for (const Storage& st : kStorages) {
    on_ranks(ranks, [&](int rank, Context& ctx) { check_all_gather(rank, ctx, ranks, st); });
  }
}

TEST_F(DistGpu, EveryRankOfGemmReduceScatterMatchesTheWholeProduct) {
  const int ranks = device_count();
  if (ranks < 2) GTEST_SKIP() << "one GPU: the ring needs two";
  for (const Storage& st : kStorages) {
    on_ranks(ranks, [&](int rank, Context& ctx) { check_reduce_scatter(rank, ctx, ranks, st); });
  }
}

// One rank's reduce-scatter call of a mismatch test: 64 rows a rank, K of
// 64 a rank, its own buffers sized by its own arguments.
struct ScatterCall {
  std::int64_t n = 64;
  DType out = DType::kFP32;
  float alpha = 1.0f;
  bool bad_lda = false;  // an lda below K: the rank's own arguments are invalid
};

// Every rank calls with its own `call(rank)`; every rank must return
// kInvalidValue with `needle(rank)` in the message, and no rank's C change.
void expect_refused(const std::function<ScatterCall(int)>& call,
                    const std::function<std::string(int)>& needle) {
  const int ranks = device_count();
  on_ranks(ranks, [&](int rank, Context& ctx) {
    const ScatterCall mine = call(rank);
    constexpr std::int64_t kMLocal = 64;
    constexpr std::int64_t kKLocal = 64;
    const std::int64_t m = kMLocal * ctx.size();
    DeviceBuffer a = small_integers(m * kKLocal, 1);
    DeviceBuffer b = small_integers(kKLocal * mine.n, 2);
    DeviceBuffer c = poisoned(kMLocal * mine.n, mine.out);
    GemmReduceScatterArgs args;
    args.m = m;
    args.m_local = kMLocal;
    args.n = mine.n;
    args.k_local = kKLocal;
    args.a_shard = {a.get(), DType::kBF16, Layout::kRowMajor, mine.bad_lda ? 32 : kKLocal, 0};
    args.b_shard = {b.get(), DType::kBF16, Layout::kColMajor, kKLocal, 0};
    args.c = {c.get(), mine.out, Layout::kColMajor, kMLocal, 0};
    args.alpha = mine.alpha;
    const std::vector<std::uint8_t> before = host_copy(c);
    const Status s = tcgemm::dist::gemm_reduce_scatter(ctx, args);
    EXPECT_EQ(s.code, StatusCode::kInvalidValue) << "rank " << rank << ": " << s.message;
    EXPECT_NE(s.message.find(needle(rank)), std::string::npos)
        << "rank " << rank << ": " << s.message;
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(host_copy(c), before) << "rank " << rank << ": C changed";
  });
}

// Ranks that differ in what the ring moves all get the error naming it,
// with C untouched; so do ranks whose peer's own arguments are invalid.
TEST_F(DistGpu, RanksThatDisagreeAllGetTheError) {
  if (device_count() < 2) GTEST_SKIP() << "one GPU: a mismatch needs two ranks";
  const auto everyone = [](const char* text) { return [text](int) { return std::string(text); }; };
  expect_refused([](int r) { return ScatterCall{r == 1 ? 128 : 64}; },
                 everyone("ranks disagree on n: rank 1 has 128, rank 0 64"));
  expect_refused(
      [](int r) {
        return ScatterCall{64, r == 1 ? DType::kBF16 : DType::kFP32};
      },
      everyone("ranks disagree on C's dtype"));
  expect_refused(
      [](int r) {
        return ScatterCall{64, DType::kFP32, r == 1 ? 2.0f : 1.0f};
      },
      everyone("ranks disagree on alpha"));
  expect_refused(
      [](int r) {
        return ScatterCall{64, DType::kFP32, 1.0f, r == 1};
      },
      [](int r) { return r == 1 ? std::string("lda=32") : "rank 1 failed its own checks"; });
}

// The all-gather's shards must agree in K.
TEST_F(DistGpu, AllGatherRanksThatDisagreeInKAllGetTheError) {
  if (device_count() < 2) GTEST_SKIP() << "one GPU: a mismatch needs two ranks";
  on_ranks(device_count(), [](int rank, Context& ctx) {
    const std::int64_t k = rank == 1 ? 200 : 192;
    constexpr std::int64_t kMLocal = 64;
    const std::int64_t m = kMLocal * ctx.size();
    DeviceBuffer a = small_integers(kMLocal * k, 1);
    DeviceBuffer b = small_integers(k * 64, 2);
    DeviceBuffer c = poisoned(m * 64, DType::kFP32);
    DeviceBuffer gathered(static_cast<std::size_t>(m * k) * 2);
    AllGatherGemmArgs args;
    args.m = m;
    args.m_local = kMLocal;
    args.n = 64;
    args.k = k;
    args.a_shard = {a.get(), DType::kBF16, Layout::kRowMajor, k, 0};
    args.b = {b.get(), DType::kBF16, Layout::kColMajor, k, 0};
    args.c = {c.get(), DType::kFP32, Layout::kRowMajor, 64, 0};
    args.gathered_a = gathered.get();
    const std::vector<std::uint8_t> before = host_copy(c);
    const Status s = tcgemm::dist::all_gather_gemm(ctx, args);
    EXPECT_EQ(s.code, StatusCode::kInvalidValue) << "rank " << rank << ": " << s.message;
    EXPECT_NE(s.message.find("ranks disagree on k: rank 1 has 200, rank 0 192"), std::string::npos)
        << s.message;
    TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(host_copy(c), before) << "rank " << rank << ": C changed";
  });
}

}  // namespace
}  // namespace tcgemm_test
