// The per-rank checks of the tensor-parallel GEMMs (tcgemm::dist::validate)
// and the reduce-scatter's workspace size: host only, no NCCL call.
#include <gtest/gtest.h>

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
  expect_invalid(tcgemm::dist::validate(a, 2), "null workspace");
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

}  // namespace
