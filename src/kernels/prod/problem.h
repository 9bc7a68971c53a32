// How the production family sees a problem: the host-side mapping from the
// API's GemmArgs to what the kernel reads, and the choice of tile config.
// Plain C++ (no device access), unit-tested on the CPU
// (tests/host/test_prod_problem.cpp).
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/prod/config.h"
#include "sched/stream_k.h"

namespace tcgemm::prod {

// The full configuration of one launch, for describe() and the bench.
enum class OperandPath : std::uint8_t {
  kTma,     // TMA straight from the caller's matrix
  kRepack,  // copied into aligned scratch first (base, ld or batch stride off 16 bytes)
};

enum class EpiloguePath : std::uint8_t {
  kTmaStore,  // C staged in shared memory and stored by TMA
  kDirect,    // registers to global memory (fp32 C, C that TMA cannot address, M % 8 != 0)
};

struct LaunchConfig {
  int config = 0;  // index into kConfigs
  int k_splits = 1;
  bool split_tail = false;      // only the last wave's tiles split (Choice::split_tail)
  bool split_in_place = false;  // the pieces of a tile reduce it (else a second kernel)
  bool stream_k = false;        // the last, partial round spread over every cluster
  bool swapped = false;         // C^T = B^T A^T (A and B swapped)
  bool c_row_major = false;     // the kernel's output row-major (Choice::flipped)
  Major a_major = Major::kK;
  Major b_major = Major::kK;
  OperandPath a_path = OperandPath::kTma;
  OperandPath b_path = OperandPath::kTma;
  EpiloguePath epilogue = EpiloguePath::kTmaStore;
  DType in = DType::kBF16;
  DType out = DType::kBF16;
};

// "BM=128 BN=256 BK=64 stages=4 consumers=2 cluster=2x1 multicast=B ..."
std::string to_string(const LaunchConfig& launch);

// One input operand as the kernel's tensor map addresses it: `batch` (or one
// shared) matrices of `outer` lines of `inner` contiguous elements, `ld`
// apart, `stride` apart from one batch entry to the next. For A, inner is K
// when A is K-major (row-major), M when M-major; for B, K or N.
struct OperandView {
  const void* ptr = nullptr;  // the caller's base pointer (batch entry 0)
  DType dtype = DType::kBF16;
  Major major = Major::kK;
  std::int64_t inner = 0;
  std::int64_t outer = 0;
  std::int64_t ld = 0;
  std::int64_t stride = 0;
  bool shared = true;  // one matrix for every batch entry (batch 1, or stride 0)
  OperandPath path = OperandPath::kTma;
};

// The problem after canonicalization: the kernel computes C, or C^T = B^T
// A^T with A and B (and M and N) swapped, and writes its output column-major
// in its own coordinates: the native orientation, the one C's layout gives
// (C^T for a row-major C). A flipped problem is the other orientation (C^T
// for a column-major C, C for a row-major one), its output row-major in the
// kernel's coordinates: stored by TMA where TMA can address it and N is a
// multiple of 8, from registers (EpiloguePath::kDirect) otherwise.
struct Problem {
  GemmArgs args;         // A, B, M, N swapped when `swapped`; C's layout as the kernel writes it
  bool swapped = false;  // C^T = B^T A^T: the caller's C row-major, or a column-major C flipped
  bool c_row_major = false;  // flipped: the kernel's output is row-major (ldc apart)
  OperandView a;
  OperandView b;
  EpiloguePath epilogue = EpiloguePath::kTmaStore;
};

// Builds the kernel's view of a problem validate() accepted (M, N, K >= 1,
// bf16/fp16 inputs), in the native orientation or, with `flipped`, the
// other one.
Problem canonicalize(const GemmArgs& args, bool flipped = false);

// The dense, 16-byte-aligned copy a kRepack operand is streamed from: ld
// rounded up to 8 elements, and from kRepackLineFrom elements a row up to
// kRepackLineElements (a 128-byte line of 16-bit elements); batch entries
// back to back (one when shared).
inline constexpr std::int64_t kRepackLineElements = 64;
inline constexpr std::int64_t kRepackLineFrom = 2048;
std::int64_t repacked_ld(const OperandView& v);
std::int64_t repacked_stride(const OperandView& v);
std::size_t repacked_bytes(const OperandView& v, std::int64_t batch_count);
// Whether the repacked copies' bytes (below) stay under 2^62, so that none
// of the sizes wraps; a problem whose copies would not is not supported.
bool repack_fits(const Problem& problem);

// Scratch the problem's repacked operands need, each 256-byte aligned, A's
// first: 0 when nothing is repacked. B's copy starts scratch_offset_b bytes
// in.
std::size_t scratch_bytes(const Problem& problem);
std::size_t scratch_offset_b(const Problem& problem);

// The first bytes of a GEMM workspace hold flags that are zero between
// calls: the stream-K ladder step's first (hopper/tma_store_kernel.cuh,
// kStreamKFlagBytes; its scratch starts past these flags, at
// kStreamKPartialsOffset), which the family never writes, then the family's
// split flags (kSplitFlagBytes from kSplitFlagOffset: one 32-bit flag per
// consumer slice of a piece of a split unit, kernel.cuh's split_unit_fixup,
// back to zero when the launch ends; room for kSplitFlagSlices slices).
// Scratch (repacked operands, partial sums) follows them.
inline constexpr std::size_t kSplitFlagOffset = 4096;
inline constexpr std::size_t kSplitFlagSlices = 65536;
inline constexpr std::size_t kSplitFlagBytes = kSplitFlagSlices * 4;
inline constexpr std::size_t kReservedWorkspaceBytes = kSplitFlagOffset + kSplitFlagBytes;

// The work units of a launch of `config`: tile pairs of a cluster (tiles
// along M rounded up to whole clusters) times the batch entries.
std::int64_t work_units(const Problem& problem, int config);

// The split flags an in-place K split of `splits` pieces per unit needs
// for `split_units` split units of `config`: one per consumer slice of
// every piece.
std::int64_t split_flag_count(int config, std::int64_t split_units, int splits);

// What the heuristic weighs about the device: read from it by launch.cpp
// (cudaDeviceGetAttribute), made up by the host tests.
struct DeviceModel {
  int sm_count = 0;
  std::size_t smem_per_block = 0;     // opt-in dynamic shared memory per block, bytes
  double memory_bytes_per_cycle = 0;  // DRAM bandwidth of the whole device per SM clock
  // Clusters of two CTAs, one per SM, resident at once: at most
  // sm_count / 2, fewer where the GPCs leave SMs out of whole clusters (all
  // 66 on the H200's 132 SMs; of clusters of 4 it holds 30, not 33). 0:
  // unknown, taken as sm_count / 2.
  int pair_clusters = 0;
  // An SM budget binds (GemmArgs::sm_count below the device's SM count):
  // kernels run one CTA per SM, so that their CTAs stay on sm_count SMs (the
  // block scheduler spreads a grid over every SM before it stacks CTAs),
  // and rows of several CTAs per SM are not candidates.
  bool budget = false;
};

// Whether GemmArgs::sm_count = `sm_count` limits a device of `device_sms`
// SMs: 0 < sm_count < device_sms (0, or at least the device's, is none).
constexpr bool budget_binds(int sm_count, int device_sms) {
  return sm_count > 0 && sm_count < device_sms;
}

// The work units of config `t` resident at once on `device`: its clusters
// (CTAs without one) that run at the same time, which is what a persistent
// launch's round holds; and the tiles of C those units hold.
std::int64_t resident_units(const DeviceModel& device, const TileConfig& t);
inline std::int64_t resident_tiles(const DeviceModel& device, const TileConfig& t) {
  return resident_units(device, t) * t.cluster_m;
}

// The device as a call with GemmArgs::sm_count = `sm_count` may use it:
// at most that many SMs, one CTA on each. The DRAM bandwidth stays the
// device's: a few SMs fewer still draw nearly all of it.
DeviceModel budgeted(DeviceModel device, int sm_count);

// One way to run a problem on the family: a table row and a K split. With
// k_splits > 1 each tile's K range is cut into k_splits parts run as separate
// work units, their fp32 partial sums reduced into C after (split_k.h).
struct Choice {
  int config = 0;    // index into kConfigs
  int k_splits = 1;  // >= 1; 1 is a plain data-parallel launch
  // With a split: reduce in a second kernel even where the tile flags would
  // let the pieces reduce in place (reduces_in_place); tests use it.
  bool separate_reduction = false;
  // With a split: split only the units of the last, partial wave (the
  // stream-K idea as split-K): the whole waves the resident CTAs can run
  // go first, each over all of K, then the remaining units in k_splits
  // pieces each, so that the last wave fills the device too. Reduced in
  // place; one CTA per SM only. Without it every unit is split.
  bool split_tail = false;
  // Run the problem in the orientation opposite to the one C's layout gives
  // (canonicalize(args, true)): for a column-major C the kernel computes
  // C^T = B^T A^T, for a row-major C it computes C as given, and either way
  // writes its output row-major (by TMA store where C allows). Small M with a
  // column-major C is the case for it: the swap puts the few rows of C on
  // the kernel's N (as the native orientation of a row-major C does)
  // against wide tiles of the weights; where the tuner measured the other
  // way round faster, a row-major C is flipped too. A Choice's config,
  // splits and estimate refer to the problem in its own orientation.
  bool flipped = false;

  constexpr bool operator==(const Choice&) const = default;
};

// The split a launch really runs with: k_splits at most the k-tiles there
// are, lowered until every split has at least one k-tile.
int effective_splits(std::int64_t k, int k_splits);
std::int64_t k_tiles_per_split(std::int64_t k, int k_splits);

// The most partial sums, in bytes, a tile's last split adds through its SM
// when a split is reduced in place: (splits - 1) x BM x BN x 4. Past it a
// second kernel reduces, all SMs sharing the reads (a 64 x 256 tile split
// 16 ways would read 960 KiB through one SM).
inline constexpr std::size_t kMaxInPlacePartialBytes = 256 * 1024;

// The most pieces a split of `config` may have to reduce in place: the
// others' partial sums within kMaxInPlacePartialBytes (128 x 256: 3,
// 128 x 128 and 64 x 256: 5, 192 x 192: 2).
int max_in_place_splits(int config);

// Whether a choice's K split is reduced in place (else by a second kernel):
// a row of one CTA per SM (the 64 x 64 row's registers have no room for the
// sum), the head's reads within kMaxInPlacePartialBytes, the flags within
// kSplitFlagSlices, and no separate_reduction; false without a split.
bool reduces_in_place(const Problem& problem, Choice choice);

// The units a split_tail choice runs whole when `resident` clusters run at
// once: every whole wave (none when there is less than one wave).
std::int64_t whole_units(std::int64_t units, std::int64_t resident);

// Units a choice splits when `resident` clusters run at once: 0 without a
// split, every unit without split_tail, else those past whole_units. And an
// upper bound on it for any residency up to `max_resident` (workspace sizes
// asked before a launch has its grid).
std::int64_t split_units(const Problem& problem, Choice choice, std::int64_t resident);
std::int64_t split_units_bound(const Problem& problem, Choice choice, std::int64_t max_resident);

// The stream-K tail of an unsplit launch ("DP + SK", sched/stream_k.h): with
// `resident` clusters at once, the whole rounds of `units` work units run
// data-parallel and the k-tiles of the last, partial round are spread evenly
// over every cluster, each split unit finished by the cluster that holds its
// first k-tile (kernel.cuh, split_unit_fixup). Taken where the schedule's
// estimate finishes sooner: kStreamKFixupKTiles for the partial sums'
// traffic and a split k-tile at 6/5 of a whole one (ladder step 15's
// measurements, docs/ladder.md). Nothing for bookkeeping: the whole rounds
// run the same kernel either way (4096^3, which stays data-parallel, ran
// 0.1759 ms with and without the tail compiled in, H200).
// Only past a whole round (under a round, K splits serve). Where each
// cluster's share of the last round would be under half a unit, the last
// whole round joins the split range (shares of 1 to 1.5 units), so a head
// adds at most two partial sums either way. Rows of several CTAs per SM (no
// registers for the fixup) and launches that split K get the data-parallel
// schedule (sk_iters == 0).
inline constexpr std::int64_t kStreamKFixupKTiles = 16;
inline constexpr std::int64_t kStreamKSplitCost5ths = 6;
sched::StreamKSchedule stream_k_tail(int config, std::int64_t units, std::int64_t k_tiles,
                                     std::int64_t resident);

// Whether an unsplit choice's launch takes a stream-K tail on `device`
// (every CTA slot resident; never where the problem is near memory-bound),
// and the fp32 partial sums one may write with `clusters` workers: a BM x BN
// slot per CTA.
bool uses_stream_k(const Problem& problem, Choice choice, const DeviceModel& device);
std::size_t stream_k_partials_bytes(int config, std::int64_t clusters);

// The fp32 partial sums a split-K launch writes for `split` split units: in
// place, one BM x BN slot per split tile and split; through a second kernel,
// M x N per batch entry and split; 0 without a split.
std::size_t partials_bytes(const Problem& problem, Choice choice, std::int64_t split);

// Every choice the family can run the problem with on the device (configs
// whose shared memory fits and that take the problem's B (takes_b), splits
// from 1 up to what could fill the device):
// what tcgemm-tune times and the heuristic scores. Never empty. With
// `batch_invariant`, only k_splits == 1.
std::vector<Choice> candidates(const Problem& problem, const DeviceModel& device,
                               bool batch_invariant = false);

// Rows of a k-tile's A and B boxes past the matrix's edge that TMA
// zero-fills, on the CTA with the most, as estimate_cycles counts them:
// where M spans at most two clusters' tiles (a pair's second CTA past M
// fills its whole box: BM rows) or N at most two tiles, so that the edge is
// in at least half the work units; elsewhere 0 (the few edge units are left
// out). Host-tested.
double zero_filled_rows(const GemmArgs& args, const TileConfig& tile);

// The heuristic's estimate of a choice's run time, in SM clock cycles: the
// slower of the tensor-core time (waves of padded tile work at the config's
// rate) and the memory time (the operands, C and any partial sums over DRAM;
// every tile's operand loads over L2), plus the fixed costs of a wave, a
// pipeline fill and, for a split, the reduction pass. Relative, not absolute:
// it only has to rank choices.
double estimate_cycles(const Problem& problem, const DeviceModel& device, Choice choice);

// The heuristic's pick in the problem's own orientation: the candidate of
// least estimate_cycles, leaving out rows the estimate does not model
// (ConfigEntry::estimated) and tiles whose padding it does not see (a
// consumer warpgroup with no rows of C; a tile at least twice as wide as
// N where a narrower one exists). With
// `batch_invariant`, the choice cannot depend on the caller's M: no split,
// and the config the heuristic would pick for a tall problem (M = 4096) of
// the same N and K, so each row of C comes out of the same kernel, with the
// same summation order, whatever M is.
Choice select(const Problem& problem, const DeviceModel& device, bool batch_invariant = false);

// Everything select() and select_split() read of a call, for remembering
// their picks (the dispatcher's cache, kernels/prod/launch.cpp): the device
// (ordinal), the config asked for (a table row, or the dispatcher's or the
// batch-invariant pick), the shape and batch, each operand's dtype, layout,
// leading dimension, batch stride and pointer offset from a 16-byte boundary
// (the feed and epilogue paths), whether beta is 0, and the SM budget where
// it binds (0 where it does not: budget_binds). Some of it a pick does not
// always depend on (A's and B's offsets and leading dimensions only through
// whether they are repacked, a stride at batch 1): such calls only miss the
// cache more often. Left out, as no pick reads them: alpha, beta's value, a
// pointer past its 16-byte offset, the workspace, the stream. Host-tested
// (tests/host/test_prod_problem.cpp): equal keys give equal picks, and a
// one-field change that moves the pick moves the key.
struct HeuristicKey {
  int device = 0;
  int config = 0;
  std::int64_t m = 0, n = 0, k = 0, batch_count = 0;
  std::int64_t ld[3] = {}, stride[3] = {};
  std::uint32_t offset[3] = {};
  DType dtype[3] = {};
  Layout layout[3] = {};
  bool beta_zero = true;
  int sm_count = 0;
  bool operator==(const HeuristicKey&) const = default;
};
HeuristicKey heuristic_key(const GemmArgs& args, int device, int config, int device_sms);
struct HeuristicKeyHash {
  std::size_t operator()(const HeuristicKey& key) const;
};

// The heuristic's pick over both orientations of `args` (validate() passed,
// M, N, K >= 1): select() on the native problem and on the flipped one, the
// flipped choice taken only where its estimate is lower (both orientations
// store C alike: by TMA where C allows, else from registers). With
// `batch_invariant`, the native orientation only (an orientation that
// changed with M would change the summation order).
Choice select(const GemmArgs& args, const DeviceModel& device, bool batch_invariant = false);

// The Problem a choice runs: canonicalize(args, choice.flipped).
inline Problem oriented(const GemmArgs& args, const Choice& choice) {
  return canonicalize(args, choice.flipped);
}

// The heuristic's best K split for table row `config` (a kernel named by the
// caller: "prod-128x128"), last-wave splits among them.
Choice select_split(const Problem& problem, const DeviceModel& device, int config);

// The whole launch description (for describe() and the bench), on `device`
// (whether the last round is stream-K depends on how many clusters it holds).
LaunchConfig launch_config(const Problem& problem, Choice choice, const DeviceModel& device);

}  // namespace tcgemm::prod
