// The production family's aligned repack (src/kernels/prod/repack.cu) on its
// own, against a host copy, bit for bit: every element of the destination is
// its source element or, from `inner` up to ld_dst, zero, and nothing around
// the destination changes.
//
// Each case's source lives in an allocation of exactly its size that ends
// at the last element of the last line, so under compute-sanitizer memcheck
// a load past the operand's end is an error; its base sits 0..7 elements off
// 16 bytes. Every source element outside the operand (before the base, the
// line padding up to ld, the gap between batch entries) holds 0xffff, which
// no operand element does, and the destination with 256-byte guard bands
// either side starts as 0xffff too, so an element read from the wrong place
// or not written fails.
//
//   ProdRepack.EveryAlignmentLdAndBatch  base offsets 0..7 x ld in {inner,
//     inner + 1, inner + 3, inner + 8} x 12 values of inner (every width of
//     lane group the kernel picks, one and several blocks along a line) x
//     outer {1, 3, 17} x batch entries {1, 3} (batch stride outer * ld + 5)
//   ProdRepack.PaddingPastASixteenByteRoundIsZero  ld_dst rounded to whole
//     128-byte lines (the family's pitch for long lines: 4100 -> 4160), and
//     8 chunks past the 16-byte round
//   ProdRepack.ManyLines  more lines than a job's 65535 rows of blocks cover
//     (a second pass over them)
//   ProdRepack.TwoJobsInOneLaunch  two operands of different widths and line
//     counts copied by one launch, in either order
//   ProdRepack.MoreJobsThanALaunchTakesIsRefused  three jobs: kInvalidValue
//   ProdRepack.ALdDstOffSixteenBytesIsRefused  ld_dst not a multiple of 8:
//     kInvalidValue, nothing launched
//   ProdRepack.DISABLED_Rate  not a check: GB/s (read + written) of large
//     repacks beside the device-to-device copy rate of a same-size buffer;
//     run it with --gtest_also_run_disabled_tests --gtest_filter=ProdRepack.DISABLED_Rate
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "kernels/prod/repack.h"

namespace tcgemm_test {
namespace {

using tcgemm::kernels::prod::launch_repack;
using tcgemm::kernels::prod::RepackJob;

constexpr std::uint16_t kPoison = 0xffff;
constexpr std::int64_t kGuardElements = 128;  // 256 bytes either side of the destination

// The value of the source element at `index` of its allocation: 1 .. 0xfffe
// (never 0, the padding's value, nor the poison), differing between
// neighbours, so a misplaced element shows.
std::uint16_t value_at(std::int64_t index, std::uint64_t salt = 0) {
  auto x = static_cast<std::uint64_t>(index) + 0x9e3779b97f4a7c15ull * (2 * salt + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<std::uint16_t>(1 + x % 0xfffe);
}

struct RepackCase {
  int offset = 0;  // elements the source base lies past 16 bytes
  std::int64_t inner = 0;
  std::int64_t outer = 0;
  std::int64_t ld = 0;
  std::int64_t entries = 1;
  std::int64_t stride = 0;
  std::uint64_t salt = 0;  // varies the values (two jobs of one shape hold different data)
  std::int64_t ld_dst = 0;  // 0: inner rounded up to 8 elements
};

std::string describe(const RepackCase& c) {
  return "offset " + std::to_string(c.offset) + " inner " + std::to_string(c.inner) + " outer " +
         std::to_string(c.outer) + " ld " + std::to_string(c.ld) + " entries " +
         std::to_string(c.entries) + " stride " + std::to_string(c.stride) +
         (c.ld_dst > 0 ? " ld_dst " + std::to_string(c.ld_dst) : std::string());
}

// One case's source and poisoned destination on the device, and its job.
struct PreparedCase {
  RepackCase c;
  std::int64_t all = 0;  // destination elements, guard bands included
  DeviceBuffer src;
  DeviceBuffer dst;
  RepackJob job;
};

PreparedCase prepare(const RepackCase& c) {
  PreparedCase p;
  p.c = c;
  const std::int64_t span = (c.entries - 1) * c.stride + (c.outer - 1) * c.ld + c.inner;
  const std::int64_t src_elements = c.offset + span;
  std::vector<std::uint16_t> src(static_cast<std::size_t>(src_elements), kPoison);
  for (std::int64_t e = 0; e < c.entries; ++e) {
    for (std::int64_t o = 0; o < c.outer; ++o) {
      for (std::int64_t i = 0; i < c.inner; ++i) {
        const std::int64_t at = c.offset + e * c.stride + o * c.ld + i;
        src[static_cast<std::size_t>(at)] = value_at(at, c.salt);
      }
    }
  }
  p.job.ld_dst = c.ld_dst > 0 ? c.ld_dst : (c.inner + 7) / 8 * 8;
  p.job.stride_dst = c.outer * p.job.ld_dst;
  p.all = kGuardElements + c.entries * p.job.stride_dst + kGuardElements;
  p.src = DeviceBuffer(static_cast<std::size_t>(src_elements) * 2);
  p.dst = DeviceBuffer(static_cast<std::size_t>(p.all) * 2);
  TCGEMM_CHECK_CUDA(cudaMemcpy(p.src.get(), src.data(), src.size() * 2, cudaMemcpyHostToDevice));
  TCGEMM_CHECK_CUDA(cudaMemset(p.dst.get(), 0xff, static_cast<std::size_t>(p.all) * 2));
  p.job.src = static_cast<const std::uint16_t*>(p.src.get()) + c.offset;
  p.job.dst = static_cast<std::uint16_t*>(p.dst.get()) + kGuardElements;
  p.job.inner = c.inner;
  p.job.outer = c.outer;
  p.job.ld = c.ld;
  p.job.stride = c.stride;
  p.job.entries = c.entries;
  return p;
}

// Empty when a prepared case's destination is exact (after its launch),
// else what differed.
std::string verify(const PreparedCase& p) {
  const RepackCase& c = p.c;
  const std::int64_t ld_dst = p.job.ld_dst;
  const std::int64_t stride_dst = p.job.stride_dst;
  const std::int64_t dst_elements = c.entries * stride_dst;
  std::vector<std::uint16_t> dst(static_cast<std::size_t>(p.all));
  TCGEMM_CHECK_CUDA(cudaMemcpy(dst.data(), p.dst.get(), dst.size() * 2, cudaMemcpyDeviceToHost));
  std::int64_t wrong = 0;
  std::string first;
  auto expect = [&](std::int64_t at, std::uint16_t want, const std::string& where) {
    const std::uint16_t got = dst[static_cast<std::size_t>(at)];
    if (got == want) return;
    if (wrong++ == 0) {
      char text[64];
      std::snprintf(text, sizeof text, ": 0x%04x, not 0x%04x", got, want);
      first = where + text;
    }
  };
  for (std::int64_t g = 0; g < kGuardElements; ++g) {
    expect(g, kPoison, "guard element " + std::to_string(g) + " before");
    expect(kGuardElements + dst_elements + g, kPoison,
           "guard element " + std::to_string(g) + " after");
  }
  for (std::int64_t e = 0; e < c.entries; ++e) {
    for (std::int64_t o = 0; o < c.outer; ++o) {
      for (std::int64_t i = 0; i < ld_dst; ++i) {
        const std::int64_t at = kGuardElements + e * stride_dst + o * ld_dst + i;
        const std::uint16_t want = i < c.inner
                                       ? value_at(c.offset + e * c.stride + o * c.ld + i, c.salt)
                                       : std::uint16_t{0};
        if (dst[static_cast<std::size_t>(at)] == want) continue;  // (no string on the fast path)
        char where[96];
        std::snprintf(where, sizeof where, "[%lld][%lld][%lld]", static_cast<long long>(e),
                      static_cast<long long>(o), static_cast<long long>(i));
        expect(at, want, where);
      }
    }
  }
  if (wrong == 0) return {};
  return std::to_string(wrong) + " wrong element(s), the first " + first;
}

// Runs the cases' jobs in one launch; empty when every destination is
// exact, else what differed, case by case.
std::string run_cases(std::span<const RepackCase> cases) {
  std::vector<PreparedCase> prepared;
  std::vector<RepackJob> jobs;
  for (const RepackCase& c : cases) {
    prepared.push_back(prepare(c));
    jobs.push_back(prepared.back().job);
  }
  const tcgemm::Status s = launch_repack(jobs, nullptr);
  if (!s.ok()) return "launch_repack: " + s.message;
  TCGEMM_CHECK_CUDA(cudaDeviceSynchronize());
  std::string failures;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const std::string failure = verify(prepared[i]);
    if (failure.empty()) continue;
    if (cases.size() == 1) return failure;  // the caller names the case
    failures += (failures.empty() ? "" : "; ") + std::string("job ") + std::to_string(i) + " (" +
                describe(cases[i]) + "): " + failure;
  }
  return failures;
}

std::string run_case(const RepackCase& c) { return run_cases(std::span<const RepackCase>(&c, 1)); }

class ProdRepack : public HopperTest {};

TEST_F(ProdRepack, EveryAlignmentLdAndBatch) {
  // Lines of at most one 16-byte chunk (1, 7, 8) and two (9), around 8 and
  // 32 chunks (63, 64, 65, 255), 300 (the only 16-lane groups here), 1000
  // (one block along a line), 4093 (four) and 4100 (one chunk into a fifth):
  // every width of lane group the kernel picks.
  const std::int64_t inners[] = {1, 7, 8, 9, 63, 64, 65, 255, 300, 1000, 4093, 4100};
  int cases = 0;
  int failed = 0;
  for (const std::int64_t inner : inners) {
    for (const std::int64_t ld : {inner, inner + 1, inner + 3, inner + 8}) {
      for (const std::int64_t outer : {1, 3, 17}) {
        for (const std::int64_t entries : {1, 3}) {
          for (int offset = 0; offset < 8; ++offset) {
            RepackCase c;
            c.offset = offset;
            c.inner = inner;
            c.outer = outer;
            c.ld = ld;
            c.entries = entries;
            c.stride = outer * ld + 5;
            ++cases;
            const std::string failure = run_case(c);
            if (failure.empty()) continue;
            if (++failed <= 20) ADD_FAILURE() << describe(c) << ": " << failure;
          }
        }
      }
    }
  }
  EXPECT_EQ(failed, 0) << failed << " of " << cases << " cases failed (the first 20 above)";
}

TEST_F(ProdRepack, PaddingPastASixteenByteRoundIsZero) {
  // The family pads a long line to a whole 128-byte line
  // (prod::repacked_ld: 4100 -> 4160), 60 zeros where rounding to 16 bytes
  // leaves 4; and 4168, 8 chunks past the 16-byte round.
  int failed = 0;
  for (const std::int64_t ld_dst : {std::int64_t{4160}, std::int64_t{4168}}) {
    for (int offset : {0, 3}) {
      RepackCase c;
      c.offset = offset;
      c.inner = 4100;
      c.outer = 5;
      c.ld = 4101;
      c.entries = 2;
      c.stride = c.outer * c.ld + 5;
      c.ld_dst = ld_dst;
      const std::string failure = run_case(c);
      if (!failure.empty()) {
        ++failed;
        ADD_FAILURE() << describe(c) << ": " << failure;
      }
    }
  }
  EXPECT_EQ(failed, 0);
}

TEST_F(ProdRepack, ManyLines) {
  // One-element lines take one lane each, 256 lines a block, and a job has
  // at most 65535 blocks across its lines: 2 x (2^23 + 9) lines need a
  // second pass.
  RepackCase c;
  c.offset = 3;
  c.inner = 1;
  c.ld = 1;
  c.outer = (std::int64_t{1} << 23) + 9;
  c.entries = 2;
  c.stride = c.outer + 1;
  const std::string failure = run_case(c);
  EXPECT_TRUE(failure.empty()) << describe(c) << ": " << failure;
}

TEST_F(ProdRepack, TwoJobsInOneLaunch) {
  // A GEMM's A and B share a launch (launch_repack of both): each job's
  // blocks must copy its own lines whether the other job is wider (more
  // blocks along x), longer (more lines, so more blocks along y), or both,
  // and in either order.
  RepackCase wide;  // 4 blocks along a line, 17 lines, batched
  wide.offset = 3;
  wide.inner = 4093;
  wide.ld = 4093;
  wide.outer = 17;
  wide.entries = 2;
  wide.stride = wide.outer * wide.ld + 5;
  RepackCase tall;  // one lane a line (2 chunks), 3000 lines (12 blocks across them)
  tall.offset = 1;
  tall.inner = 9;
  tall.ld = 10;
  tall.outer = 3000;
  RepackCase square;  // a 4096 x 4093 operand one element off 16 bytes
  square.offset = 1;
  square.inner = 4093;
  square.ld = 4093;
  square.outer = 1024;
  RepackCase other = square;  // the same shape, other values
  other.salt = 1;
  const RepackCase pairs[][2] = {
      {wide, tall}, {tall, wide}, {square, tall}, {wide, square}, {square, other}};
  for (const auto& pair : pairs) {
    const std::string failure = run_cases(pair);
    EXPECT_TRUE(failure.empty()) << failure;
  }
}

TEST_F(ProdRepack, MoreJobsThanALaunchTakesIsRefused) {
  RepackJob jobs[3];
  const tcgemm::Status s = launch_repack(jobs, nullptr);
  EXPECT_EQ(s.code, tcgemm::StatusCode::kInvalidValue) << s.message;
  EXPECT_NE(s.message.find("jobs"), std::string::npos) << s.message;
}

TEST_F(ProdRepack, ALdDstOffSixteenBytesIsRefused) {
  RepackJob job;
  job.inner = 5;
  job.outer = 3;
  job.ld = 5;
  job.ld_dst = 6;  // lines of the copy must start on 16 bytes
  job.stride_dst = 18;
  const tcgemm::Status s = launch_repack(job, nullptr);
  EXPECT_EQ(s.code, tcgemm::StatusCode::kInvalidValue) << s.message;
  EXPECT_NE(s.message.find("ld_dst"), std::string::npos) << s.message;
}

// Microseconds per call of `enqueue` on the default stream: 3 calls to warm
// up, then 20 back to back between two events (as a GEMM's repacks run).
template <typename Enqueue>
double microseconds_per_call(Enqueue enqueue) {
  constexpr int kWarmups = 3;
  constexpr int kReps = 20;
  for (int i = 0; i < kWarmups; ++i) enqueue();
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  TCGEMM_CHECK_CUDA(cudaEventCreate(&start));
  TCGEMM_CHECK_CUDA(cudaEventCreate(&stop));
  TCGEMM_CHECK_CUDA(cudaEventRecord(start));
  for (int i = 0; i < kReps; ++i) enqueue();
  TCGEMM_CHECK_CUDA(cudaEventRecord(stop));
  TCGEMM_CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  TCGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  TCGEMM_CHECK_CUDA(cudaEventDestroy(start));
  TCGEMM_CHECK_CUDA(cudaEventDestroy(stop));
  return 1000.0 * ms / kReps;
}

TEST_F(ProdRepack, DISABLED_Rate) {
  struct Shape {
    std::int64_t outer;
    std::int64_t inner;
    std::int64_t ld;
    int offset;  // elements past 16 bytes
  };
  const Shape shapes[] = {{4096, 4093, 4093, 0}, {8192, 8191, 8191, 0}, {4096, 4096, 4096, 1}};
  for (const Shape& s : shapes) {
    const std::int64_t ld_dst = (s.inner + 7) / 8 * 8;
    const auto dst_bytes = static_cast<std::size_t>(s.outer * ld_dst) * 2;
    DeviceBuffer src(static_cast<std::size_t>(s.offset + s.outer * s.ld) * 2);
    DeviceBuffer dst(dst_bytes);
    DeviceBuffer copy_src(dst_bytes);
    TCGEMM_CHECK_CUDA(cudaMemset(src.get(), 0x3c, src.bytes()));
    TCGEMM_CHECK_CUDA(cudaMemset(copy_src.get(), 0x3c, copy_src.bytes()));
    RepackJob job;
    job.src = static_cast<const std::uint16_t*>(src.get()) + s.offset;
    job.dst = dst.get();
    job.inner = s.inner;
    job.outer = s.outer;
    job.ld = s.ld;
    job.stride = 0;
    job.entries = 1;
    job.ld_dst = ld_dst;
    job.stride_dst = 0;
    ASSERT_TRUE(IsOk(launch_repack(job, nullptr)));
    const double repack_us = microseconds_per_call([&] { (void)launch_repack(job, nullptr); });
    const double copy_us = microseconds_per_call([&] {
      TCGEMM_CHECK_CUDA(
          cudaMemcpyAsync(dst.get(), copy_src.get(), dst_bytes, cudaMemcpyDeviceToDevice));
    });
    const double repack_bytes =
        2.0 * static_cast<double>(s.outer * s.inner) + static_cast<double>(dst_bytes);
    const double repack_gbps = repack_bytes / (repack_us * 1e3);
    const double copy_gbps = 2.0 * static_cast<double>(dst_bytes) / (copy_us * 1e3);
    std::printf(
        "repack %lldx%lld ld %lld base +%d B: %8.2f us %7.1f GB/s | copy of %.1f MiB: %8.2f us "
        "%7.1f GB/s | %.3f of the copy rate (GB/s read + written)\n",
        static_cast<long long>(s.outer), static_cast<long long>(s.inner),
        static_cast<long long>(s.ld), 2 * s.offset, repack_us, repack_gbps,
        static_cast<double>(dst_bytes) / (1 << 20), copy_us, copy_gbps, repack_gbps / copy_gbps);
    // The operand twice (a GEMM's A and B of this shape): one launch for
    // both against one launch each.
    DeviceBuffer src2(src.bytes());
    DeviceBuffer dst2(dst_bytes);
    TCGEMM_CHECK_CUDA(cudaMemset(src2.get(), 0x3d, src2.bytes()));
    RepackJob pair[2] = {job, job};
    pair[1].src = static_cast<const std::uint16_t*>(src2.get()) + s.offset;
    pair[1].dst = dst2.get();
    ASSERT_TRUE(IsOk(launch_repack(std::span<const RepackJob>(pair), nullptr)));
    const double one_launch_us = microseconds_per_call(
        [&] { (void)launch_repack(std::span<const RepackJob>(pair), nullptr); });
    const double two_launches_us = microseconds_per_call([&] {
      (void)launch_repack(pair[0], nullptr);
      (void)launch_repack(pair[1], nullptr);
    });
    std::printf("  two of them: %8.2f us in one launch, %8.2f us in two\n", one_launch_us,
                two_launches_us);
  }
}

}  // namespace
}  // namespace tcgemm_test
