// The per-rank checks of the tensor-parallel GEMMs (tcgemm::dist::validate)
// and the reduce-scatter's workspace size: host only, no NCCL call.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "tcgemm/dist.h"

namespace {

using tcgemm::DType;
using tcgemm::Layout;
using tcgemm::StatusCode;
using tcgemm::dist::AllGatherGemmArgs;
using tcgemm::dist::GemmReduceScatterArgs;

// Stand-in device addresses: validate() checks alignment, never reads.
void* fake(std::uintptr_t at) { return reinterpret_cast<void*>(at); }

// Valid for `ranks` ranks.
AllGatherGemmArgs gather_args(int ranks = 2) {
  AllGatherGemmArgs a;
  a.m_local = 256;
  a.m = 256 * ranks;
  a.n = 512;
  a.k = 128;
  a.a_shard = {fake(0x10000), DType::kBF16, Layout::kRowMajor, 128, 0};
  a.b = {fake(0x20000), DType::kBF16, Layout::kColMajor, 128, 0};
  a.c = {fake(0x30000), DType::kBF16, Layout::kRowMajor, 512, 0};
  a.gathered_a = fake(0x40000);
  return a;
}

GemmReduceScatterArgs scatter_args(int ranks = 2) {
  GemmReduceScatterArgs a;
  a.m_local = 512;
  a.m = 512 * ranks;
  a.n = 512;
  a.k_local = 128;
  a.a_shard = {fake(0x10000), DType::kBF16, Layout::kRowMajor, 128, 0};
  a.b_shard = {fake(0x20000), DType::kBF16, Layout::kColMajor, 128, 0};
  a.c = {fake(0x30000), DType::kBF16, Layout::kRowMajor, 512, 0};
  return a;
}

void expect_invalid(const tcgemm::Status& s, const std::string& names) {
  EXPECT_EQ(s.code, StatusCode::kInvalidValue) << s.message;
  EXPECT_NE(s.message.find(names), std::string::npos) << s.message;
}

TEST(DistValidate, GoodArgumentsPass) {
  for (int ranks : {1, 2, 4, 8}) {
    EXPECT_TRUE(tcgemm::dist::validate(gather_args(ranks), ranks).ok());
    EXPECT_TRUE(tcgemm::dist::validate(scatter_args(ranks), ranks).ok());
  }
}

// The whole M is given beside the shard's rows, so that a communicator of
// another size than the caller planned for is an error, not a write past C.
TEST(DistValidate, ACommunicatorOfTheWrongSizeIsAnError) {
  expect_invalid(tcgemm::dist::validate(gather_args(4), 2),
                 "m=1024 is not m_local=256 times the communicator's 2 ranks");
  expect_invalid(tcgemm::dist::validate(scatter_args(2), 4),
                 "m=1024 is not m_local=512 times the communicator's 4 ranks");
}

TEST(DistValidate, AllGatherNamesTheBadArgument) {
  auto a = gather_args();
  expect_invalid(tcgemm::dist::validate(a, 0), "ranks");
  a.m_local = 0;
  a.m = 0;
  expect_invalid(tcgemm::dist::validate(a, 2), "m_local");
  a = gather_args();
  a.a_shard.dtype = DType::kFP32;
  expect_invalid(tcgemm::dist::validate(a, 2), "A's dtype");
  a = gather_args();
  a.b.dtype = DType::kFP16;
  expect_invalid(tcgemm::dist::validate(a, 2), "B's dtype");
  a = gather_args();
  a.gathered_a = nullptr;
  expect_invalid(tcgemm::dist::validate(a, 2), "gathered_a is null");
  a.gathered_a = fake(0x40002);
  expect_invalid(tcgemm::dist::validate(a, 2), "gathered_a is not 256-byte aligned");
  // Column-major C holds all M = ranks x m_local rows.
  a = gather_args(1);
  a.c.layout = Layout::kColMajor;
  a.c.ld = 256;
  EXPECT_TRUE(tcgemm::dist::validate(a, 1).ok());
  a.m = 512;
  expect_invalid(tcgemm::dist::validate(a, 2), "c.ld=256 is less than M=512");
  // The shard GEMM's own checks, prefixed.
  a = gather_args();
  a.a_shard.ld = 64;
  const tcgemm::Status s = tcgemm::dist::validate(a, 2);
  expect_invalid(s, "all_gather_gemm: ");
  expect_invalid(s, "lda");
}

TEST(DistValidate, ReduceScatterNamesTheBadArgument) {
  auto a = scatter_args();
  a.k_local = 0;
  expect_invalid(tcgemm::dist::validate(a, 2), "k_local");
  // Column-major A spans all M rows.
  a = scatter_args();
  a.a_shard.layout = Layout::kColMajor;
  a.a_shard.ld = 512;
  expect_invalid(tcgemm::dist::validate(a, 2), "a_shard.ld=512 is less than M=1024");
  a.a_shard.ld = 1024;
  EXPECT_TRUE(tcgemm::dist::validate(a, 2).ok());
  a = scatter_args();
  a.workspace_bytes = 4096;
  expect_invalid(tcgemm::dist::validate(a, 2), "workspace is a null pointer");
  a.workspace = fake(0x50010);
  expect_invalid(tcgemm::dist::validate(a, 2), "workspace is not 256-byte aligned");
  a = scatter_args();
  a.b_shard.dtype = DType::kFP16;
  expect_invalid(tcgemm::dist::validate(a, 2), "B's dtype");
  // C is this rank's m_local rows.
  a = scatter_args(4);
  a.m_local = 256;
  a.m = 1024;
  a.c.layout = Layout::kColMajor;
  a.c.ld = 256;
  EXPECT_TRUE(tcgemm::dist::validate(a, 4).ok());
  a.c.ld = 200;
  const tcgemm::Status s = tcgemm::dist::validate(a, 4);
  expect_invalid(s, "gemm_reduce_scatter: ");
  expect_invalid(s, "ldc=200");
}

TEST(DistValidate, ReduceScatterWorkspaceIsFourAlignedBlocks) {
  auto a = scatter_args();
  EXPECT_EQ(tcgemm::dist::reduce_scatter_workspace_size(a, 1), 0u);
  // 512 x 512 bf16 blocks: 512 KiB each.
  EXPECT_EQ(tcgemm::dist::reduce_scatter_workspace_size(a, 2), 4u * 512 * 512 * 2);
  a.m_local = 2;
  a.m = 6;
  a.n = 3;
  a.c.dtype = DType::kFP32;
  // 2 x 3 fp32 = 24 bytes, rounded up to 256 per block.
  EXPECT_EQ(tcgemm::dist::reduce_scatter_workspace_size(a, 3), 4u * 256);
}

// What the shard GEMM's own checks (one m_local-row block, as alpha reads
// it) did not cover, found by a host probe: each was accepted before.
TEST(DistValidate, AllGatherChecksAWhateverAlphaAndEveryBufferWhole) {
  // The own shard is copied into gathered_a and sent round the ring even
  // with alpha 0: A must be readable.
  // (Each message names A: the check that B or C failed instead would not
  // pass.)
  const char* const named[] = {"a is a null pointer", "a is not aligned", "a: the matrix (lda="};
  for (int variant = 0; variant < 3; ++variant) {
    auto a = gather_args();
    a.alpha = 0.0f;
    if (variant == 0) a.a_shard.ptr = nullptr;
    if (variant == 1) a.a_shard.ptr = fake(0x10001);
    if (variant == 2) a.a_shard.ld = std::int64_t{1} << 62;
    const tcgemm::Status s = tcgemm::dist::validate(a, 2);
    EXPECT_EQ(s.code, StatusCode::kInvalidValue) << "variant " << variant << ": " << s.message;
    EXPECT_NE(s.message.find(named[variant]), std::string::npos)
        << "variant " << variant << ": " << s.message;
  }
  // m = m_local x ranks overflowing int64 is a mismatch, not a wrap.
  auto a = gather_args();
  a.m_local = std::int64_t{1} << 61;
  a.m = 0;
  expect_invalid(tcgemm::dist::validate(a, 8), "m=0 is not m_local=");
  // Row-major C: M rows of ld 2^62 elements do not fit, though the first
  // shard's one row does.
  a = gather_args(4);
  a.m_local = 1;
  a.m = 4;
  a.c.ld = std::int64_t{1} << 62;
  expect_invalid(tcgemm::dist::validate(a, 4), "spans more bytes than the address space holds");
  // gathered_a: 4 shards of (2^31 - 257) x 2^30 bf16 elements need 2^64 bytes.
  a = gather_args(4);
  a.m_local = (std::int64_t{1} << 31) - 257;
  a.m = 4 * a.m_local;
  a.k = std::int64_t{1} << 30;
  a.a_shard.ld = a.k;
  a.b.ld = a.k;
  a.c.layout = Layout::kColMajor;
  a.c.ld = a.m;
  const tcgemm::Status s = tcgemm::dist::validate(a, 4);
  expect_invalid(s, "all_gather_gemm: gathered_a: 4 shards of m_local x k");
}

TEST(DistValidate, ReduceScatterChecksAllOfAAndItsScratchSize) {
  // Row-major A: M rows (P blocks of m_local) of ld 2^62 do not fit.
  auto a = scatter_args(4);
  a.m_local = 1;
  a.m = 4;
  a.a_shard.ld = std::int64_t{1} << 62;
  expect_invalid(tcgemm::dist::validate(a, 4), "spans more bytes than the address space holds");
  // With alpha 0 the shard GEMMs read neither A nor B.
  a = scatter_args();
  a.alpha = 0.0f;
  a.a_shard.ptr = nullptr;
  a.b_shard.ptr = nullptr;
  EXPECT_TRUE(tcgemm::dist::validate(a, 2).ok());
  // With alpha 0 and beta 1 too the ring's last step writes C: it is checked.
  a.beta = 1.0f;
  a.c.ptr = nullptr;
  expect_invalid(tcgemm::dist::validate(a, 2), "c is a null pointer");
  // Without a ring (P = 1) C is the one GEMM's, as in gemm: untouched.
  auto one = scatter_args(1);
  one.alpha = 0.0f;
  one.beta = 1.0f;
  one.c.ptr = nullptr;
  EXPECT_TRUE(tcgemm::dist::validate(one, 1).ok()) << tcgemm::dist::validate(one, 1).message;
  one.beta = 0.0f;
  expect_invalid(tcgemm::dist::validate(one, 1), "c is a null pointer");
  // The all-gather's C likewise (its ring moves A, not C).
  auto gather = gather_args();
  gather.alpha = 0.0f;
  gather.beta = 1.0f;
  gather.c.ptr = nullptr;
  EXPECT_TRUE(tcgemm::dist::validate(gather, 2).ok()) << tcgemm::dist::validate(gather, 2).message;
  gather.beta = 2.0f;
  expect_invalid(tcgemm::dist::validate(gather, 2), "c is a null pointer");
  // The four m_local x n fp32 buffers: 2^30 x 2^30 x 4 x 4 bytes wrap 64 bits.
  a = scatter_args();
  a.m_local = std::int64_t{1} << 30;
  a.m = 2 * a.m_local;
  a.n = std::int64_t{1} << 30;
  a.a_shard.layout = Layout::kColMajor;
  a.a_shard.ld = a.m;
  a.c = {fake(0x30000), DType::kFP32, Layout::kRowMajor, a.n, 0};
  EXPECT_EQ(tcgemm::dist::reduce_scatter_workspace_size(a, 2), SIZE_MAX);
  expect_invalid(tcgemm::dist::validate(a, 2), "would take more bytes than 64 bits count");
  // A workspace that runs past the end of the address space.
  a = scatter_args();
  a.workspace = fake(~std::uintptr_t{0} - 0xff);
  a.workspace_bytes = 1 << 20;
  expect_invalid(tcgemm::dist::validate(a, 2), "runs past the end of the address space");
}

TEST(DistValidate, OddLeadingDimensionsAndOneRowShardsAreValid) {
  auto a = gather_args(3);
  a.m_local = 1;
  a.m = 3;
  a.k = 17;
  a.n = 11;
  a.a_shard.ld = 17;
  a.b.ld = 17;
  a.c.ld = 11;
  EXPECT_TRUE(tcgemm::dist::validate(a, 3).ok()) << tcgemm::dist::validate(a, 3).message;
  auto r = scatter_args(5);
  r.m_local = 1;
  r.m = 5;
  r.k_local = 1;
  r.n = 7;
  r.a_shard = {fake(0x10002), DType::kFP16, Layout::kColMajor, 5, 0};
  r.b_shard = {fake(0x20000), DType::kFP16, Layout::kColMajor, 1, 0};
  r.c = {fake(0x30000), DType::kFP32, Layout::kColMajor, 1, 0};
  EXPECT_TRUE(tcgemm::dist::validate(r, 5).ok()) << tcgemm::dist::validate(r, 5).message;
}

}  // namespace
