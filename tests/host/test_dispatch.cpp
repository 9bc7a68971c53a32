// Kernel selection (src/dispatch.h) over made-up kernels: the highest-ranked
// kernel that can run a problem wins, a kernel whose workspace args does not
// give is passed over with its reason (so calls without a workspace keep
// working), so is one the tuned table measured slower (passed_over), a named
// kernel is held to the same rules (but runs though passed over), and the
// workspace and passed_over are asked about only once a kernel's
// constraints hold.
#include <gtest/gtest.h>
#include <tcgemm/registry.h>
#include <tcgemm/tcgemm.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dispatch.h"

namespace {

using tcgemm::DeviceCaps;
using tcgemm::DType;
using tcgemm::GemmArgs;
using tcgemm::KernelChoice;
using tcgemm::KernelConstraints;
using tcgemm::KernelInfo;
using tcgemm::Layout;
using tcgemm::StatusCode;

constexpr std::size_t kStreamKBytes = 16908288;
std::size_t stream_k_bytes(const GemmArgs&) { return kStreamKBytes; }

// How often the NN kernel's workspace function was asked (it must not be, on
// the TN problems here: its constraints refuse them first).
int nn_workspace_questions = 0;
std::size_t nn_workspace_bytes(const GemmArgs&) {
  ++nn_workspace_questions;
  return kStreamKBytes;
}

constexpr KernelConstraints layouts(Layout a, Layout b) {
  return KernelConstraints{
      .input_dtypes = tcgemm::bit(DType::kBF16),
      .output_dtypes = tcgemm::bit(DType::kBF16),
      .a_layouts = tcgemm::bit(a),
      .b_layouts = tcgemm::bit(b),
      .c_layouts = tcgemm::bit(Layout::kColMajor),
      .compute_capability = 90,
  };
}

constexpr KernelConstraints kTn = layouts(Layout::kRowMajor, Layout::kColMajor);
constexpr KernelConstraints kNn = layouts(Layout::kColMajor, Layout::kColMajor);

const KernelInfo kTeaching{.name = "teaching", .description = "rank 0", .constraints = kTn};
const KernelInfo kPlain{
    .name = "plain", .description = "no workspace", .constraints = kTn, .dispatch_rank = 6};
const KernelInfo kStreamK{.name = "stream-k",
                          .description = "needs a workspace",
                          .constraints = kTn,
                          .dispatch_rank = 15,
                          .workspace_bytes = &stream_k_bytes};
const KernelInfo kNnOnly{.name = "nn-only",
                         .description = "highest rank, NN only",
                         .constraints = kNn,
                         .dispatch_rank = 20,
                         .workspace_bytes = &nn_workspace_bytes};

const std::array kAll = {kTeaching, kPlain, kStreamK, kNnOnly};

// A bf16 TN problem at fake, 1 MiB-aligned addresses.
GemmArgs tn_problem() {
  GemmArgs args;
  args.m = 512;
  args.n = 256;
  args.k = 4096;
  args.a = {reinterpret_cast<const void*>(std::uintptr_t{0x100000}), DType::kBF16,
            Layout::kRowMajor, args.k, 0};
  args.b = {reinterpret_cast<const void*>(std::uintptr_t{0x200000}), DType::kBF16,
            Layout::kColMajor, args.k, 0};
  args.c = {reinterpret_cast<void*>(std::uintptr_t{0x400000}), DType::kBF16, Layout::kColMajor,
            args.m, 0};
  return args;
}

void give_workspace(GemmArgs& args, std::size_t bytes) {
  args.workspace = reinterpret_cast<void*>(std::uintptr_t{0x800000});
  args.workspace_bytes = bytes;
}

const DeviceCaps kSm90{90};

// The kernel a choice names, or what went wrong.
std::string chosen(const KernelChoice& choice) {
  if (!choice.status.ok()) return "error: " + choice.status.message;
  return choice.kernel != nullptr ? std::string(choice.kernel->name) : "nothing";
}

TEST(Dispatch, PicksTheHighestRankedKernelWhenItHasItsWorkspace) {
  GemmArgs args = tn_problem();
  give_workspace(args, kStreamKBytes);
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, nullptr, args, kSm90, false)), "stream-k");
}

TEST(Dispatch, WithoutAWorkspaceFallsBackToAKernelThatNeedsNone) {
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, nullptr, tn_problem(), kSm90, false)), "plain");
}

TEST(Dispatch, TooSmallAWorkspaceFallsBackToo) {
  GemmArgs args = tn_problem();
  give_workspace(args, kStreamKBytes - 1);
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, nullptr, args, kSm90, false)), "plain");
}

TEST(Dispatch, AnUnlimitedWorkspacePicksTheKernelThatNeedsOne) {
  // What workspace_size asks: the kernel gemm runs once it has the workspace.
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, nullptr, tn_problem(), kSm90, true)), "stream-k");
}

TEST(Dispatch, AMissingWorkspaceIsAReasonInTheMessageWhenNothingElseFits) {
  const std::array kernels = {kStreamK, kNnOnly};
  const KernelChoice choice = tcgemm::choose_kernel(kernels, nullptr, tn_problem(), kSm90, false);
  EXPECT_EQ(choice.status.code, StatusCode::kNotSupported);
  EXPECT_EQ(choice.kernel, nullptr);
  const std::string& message = choice.status.message;
  EXPECT_NE(message.find("stream-k: needs 16908288 bytes of workspace (tcgemm::workspace_size); "
                         "args.workspace_bytes is 0"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nn-only: A layout"), std::string::npos) << message;
}

TEST(Dispatch, ANamedKernelWithoutItsWorkspaceIsNotSupported) {
  GemmArgs args = tn_problem();
  KernelChoice choice = tcgemm::choose_kernel(kAll, &kStreamK, args, kSm90, false);
  EXPECT_EQ(choice.status.code, StatusCode::kNotSupported);
  EXPECT_EQ(choice.status.message.find("stream-k: needs 16908288 bytes of workspace"), 0u)
      << choice.status.message;
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, &kStreamK, args, kSm90, true)), "stream-k");
  give_workspace(args, kStreamKBytes);
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, &kStreamK, args, kSm90, false)), "stream-k");
}

TEST(Dispatch, ANamedKernelRunsWhateverItsRank) {
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kAll, &kTeaching, tn_problem(), kSm90, false)),
            "teaching");
}

// A kernel the tuned table measured slower on a problem (passed_over says
// so) yields to the next-ranked one there, with its reason in the message
// when nothing else can run; where it is not passed over it keeps its rank;
// named, it still runs.
int passed_over_questions = 0;
bool passed_over_for_k4096(const GemmArgs& args) {
  ++passed_over_questions;
  return args.k == 4096;
}
const KernelInfo kTunedAway{.name = "tuned-away",
                            .description = "highest rank, measured slower at K = 4096",
                            .constraints = kTn,
                            .dispatch_rank = 30,
                            .passed_over = &passed_over_for_k4096};

TEST(Dispatch, AKernelTheTunedTableMeasuredSlowerYieldsToTheNextRanked) {
  const std::array kernels = {kPlain, kTunedAway};
  GemmArgs args = tn_problem();
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kernels, nullptr, args, kSm90, false)), "plain");
  args.k = 4095;
  args.a.ld = 4095;
  args.b.ld = 4095;
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kernels, nullptr, args, kSm90, false)), "tuned-away");
}

TEST(Dispatch, APassedOverKernelStillRunsByName) {
  const std::array kernels = {kPlain, kTunedAway};
  EXPECT_EQ(chosen(tcgemm::choose_kernel(kernels, &kTunedAway, tn_problem(), kSm90, false)),
            "tuned-away");
}

TEST(Dispatch, BeingPassedOverIsAReasonInTheMessageWhenNothingElseFits) {
  const std::array kernels = {kTunedAway};
  const KernelChoice choice = tcgemm::choose_kernel(kernels, nullptr, tn_problem(), kSm90, false);
  EXPECT_EQ(choice.status.code, StatusCode::kNotSupported);
  EXPECT_NE(
      choice.status.message.find("tuned-away: the tuned table measured another kernel faster"),
      std::string::npos)
      << choice.status.message;
}

TEST(Dispatch, PassedOverIsAskedOnlyOnceTheConstraintsHold) {
  passed_over_questions = 0;
  const std::array kernels = {kPlain, kTunedAway};
  GemmArgs args = tn_problem();
  args.a.layout = Layout::kColMajor;  // TN constraints refuse it
  args.a.ld = args.m;
  static_cast<void>(tcgemm::choose_kernel(kernels, nullptr, args, kSm90, false));
  EXPECT_EQ(passed_over_questions, 0);
  static_cast<void>(tcgemm::choose_kernel(kernels, nullptr, tn_problem(), kSm90, false));
  EXPECT_EQ(passed_over_questions, 1);
}

TEST(Dispatch, TheWorkspaceIsAskedForOnlyOnceTheConstraintsHold) {
  nn_workspace_questions = 0;
  static_cast<void>(tcgemm::choose_kernel(kAll, nullptr, tn_problem(), kSm90, false));
  static_cast<void>(tcgemm::choose_kernel(kAll, &kNnOnly, tn_problem(), kSm90, false));
  EXPECT_EQ(nn_workspace_questions, 0);
}

}  // namespace
