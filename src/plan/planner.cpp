#include "plan/planner.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <string>

namespace tcgemm::plan {
namespace {

using i64 = std::int64_t;

constexpr i64 kRegisterBytes = 4;  // the register file is counted in 32-bit registers
constexpr i64 kMbarrierBytes = 8;  // PTX ISA: an mbarrier object is a .b64

i64 ceil_div(i64 x, i64 y) { return (x + y - 1) / y; }
i64 round_up(i64 x, i64 multiple) { return ceil_div(x, multiple) * multiple; }

// Registers one lane holds for a fragment of `bytes` spread over the warp.
i64 lane_regs(i64 bytes, i64 warp_size) {
  return ceil_div(ceil_div(bytes, warp_size), kRegisterBytes);
}

std::string str(i64 v) { return std::to_string(v); }

}  // namespace

std::optional<std::string> validate(const TileConfig& c) {
  const struct {
    const char* name;
    int value;
    int min;
  } fields[] = {
      {"mma_m", c.mma_m, 1},
      {"mma_n", c.mma_n, 1},
      {"mma_k", c.mma_k, 1},
      {"warp_mmas_m", c.warp_mmas_m, 1},
      {"warp_mmas_n", c.warp_mmas_n, 1},
      {"warps_m", c.warps_m, 1},
      {"warps_n", c.warps_n, 1},
      {"extra_warps", c.extra_warps, 0},
      {"blocks_per_sm", c.blocks_per_sm, 1},
      {"stages", c.stages, 1},
      {"bk", c.bk, 1},
      {"pad_a", c.pad_a, 0},
      {"pad_b", c.pad_b, 0},
      {"ab_bytes", c.ab_bytes, 1},
      {"acc_bytes", c.acc_bytes, 1},
      {"c_bytes", c.c_bytes, 1},
      {"c_stage_tiles", c.c_stage_tiles, 0},
      {"pad_c", c.pad_c, 0},
      {"barriers_per_stage", c.barriers_per_stage, 0},
      {"smem_align", c.smem_align, 0},
      {"a_frags", c.a_frags, 0},
      {"b_frags", c.b_frags, -1},
      {"fragment_copies", c.fragment_copies, 1},
      {"overhead_regs", c.overhead_regs, 0},
  };
  for (const auto& f : fields) {
    if (f.value < f.min) {
      return std::string(f.name) + " must be at least " + std::to_string(f.min) + ", got " +
             std::to_string(f.value);
    }
  }
  // Every quantity plan() derives, bounded before it is derived: under
  // these bounds plan()'s 64-bit sums and its 32-bit per-thread register
  // counts cannot wrap. They are far past any GPU, so a config they refuse
  // could never fit anyway.
  constexpr int kSane = 1 << 16;
  for (const auto& f : fields) {
    if (f.value > kSane) return std::string(f.name) + " is implausibly large";
  }
  // Whether a product of nonnegative factors is at most `cap`, without
  // forming a product past it.
  const auto at_most = [](i64 cap, std::initializer_list<i64> factors) {
    i64 product = 1;
    for (i64 f : factors) {
      if (f != 0 && product > cap / f) return false;
      product *= f;
    }
    return true;
  };
  constexpr i64 kTile = i64{1} << 20;      // BM, BN, warps per block
  constexpr i64 kFragment = i64{1} << 28;  // bytes of one warp's fragments of each kind
  constexpr i64 kSmem = i64{1} << 40;      // bytes of each shared-memory part
  if (!at_most(kTile, {c.mma_m, c.warp_mmas_m, c.warps_m}) ||
      !at_most(kTile, {c.mma_n, c.warp_mmas_n, c.warps_n}) ||
      !at_most(kTile - c.extra_warps, {c.warps_m, c.warps_n})) {
    return "the block tile is implausibly large";
  }
  const i64 bm = i64{c.mma_m} * c.warp_mmas_m * c.warps_m;
  const i64 bn = i64{c.mma_n} * c.warp_mmas_n * c.warps_n;
  const int live_b = c.b_frags < 0 ? c.warp_mmas_n : c.b_frags;
  if (!at_most(kFragment, {c.warp_mmas_m, c.warp_mmas_n, c.mma_m, c.mma_n, c.acc_bytes}) ||
      !at_most(kFragment, {c.a_frags, c.mma_m, c.mma_k, c.ab_bytes, c.fragment_copies}) ||
      !at_most(kFragment, {live_b, c.mma_k, c.mma_n, c.ab_bytes, c.fragment_copies})) {
    return "the register fragments are implausibly large (over 2^28 bytes per warp)";
  }
  if (!at_most(kSmem, {bm + c.pad_a, c.stages, c.bk, c.ab_bytes}) ||
      !at_most(kSmem, {bn, c.stages, i64{c.bk} + c.pad_b, c.ab_bytes}) ||
      !at_most(kSmem, {c.c_stage_tiles, i64{c.mma_m} + c.pad_c, c.mma_n, c.c_bytes, c.warps_m,
                       c.warps_n})) {
    return "the shared memory is implausibly large (a part over 2^40 bytes)";
  }
  if (c.smem_align > 0 && (c.smem_align & (c.smem_align - 1)) != 0) {
    return "smem_align must be a power of two";
  }
  if (c.bk % c.mma_k != 0) {
    return "bk must be a multiple of mma_k (a slab holds whole MMAs along K), got bk " + str(c.bk) +
           " and mma_k " + str(c.mma_k);
  }
  return std::nullopt;
}

void arrange_warps(TileConfig& config, int warps) {
  const i64 wm_extent = i64{config.mma_m} * config.warp_mmas_m;
  const i64 wn_extent = i64{config.mma_n} * config.warp_mmas_n;
  int best_m = 1;
  i64 best_sum = std::numeric_limits<i64>::max();
  i64 best_diff = 0;
  for (int wm = 1; wm <= warps; ++wm) {
    if (warps % wm != 0) continue;
    const i64 bm = i64{wm} * wm_extent;
    const i64 bn = i64{warps / wm} * wn_extent;
    const i64 sum = bm + bn;
    const i64 diff = std::llabs(bm - bn);
    // Ties on sum and squareness go to the larger BM (later wm).
    if (sum < best_sum || (sum == best_sum && diff <= best_diff)) {
      best_m = wm;
      best_sum = sum;
      best_diff = diff;
    }
  }
  config.warps_m = best_m;
  config.warps_n = warps / best_m;
}

Plan plan(const DeviceSpec& spec, const TileConfig& c) {
  Plan p;
  const i64 warp = spec.warp_size;
  const i64 blocks = c.blocks_per_sm;

  p.warps_per_block = c.warps();
  p.threads_per_block = static_cast<int>(i64{p.warps_per_block} * warp);
  p.bm = c.bm();
  p.bn = c.bn();
  p.bk = c.bk;

  // ---- registers: fragments as the hardware holds them ----
  const i64 acc_tile_bytes = i64{c.mma_m} * c.mma_n * c.acc_bytes;
  const i64 a_frag_bytes = i64{c.mma_m} * c.mma_k * c.ab_bytes * c.fragment_copies;
  const i64 b_frag_bytes = i64{c.mma_k} * c.mma_n * c.ab_bytes * c.fragment_copies;
  p.acc_regs = static_cast<int>(c.mmas_per_warp() * lane_regs(acc_tile_bytes, warp));
  p.a_regs = static_cast<int>(c.a_frags * lane_regs(a_frag_bytes, warp));
  p.b_regs = static_cast<int>(c.live_b_frags() * lane_regs(b_frag_bytes, warp));
  p.fragment_regs = p.acc_regs + p.a_regs + p.b_regs;
  p.regs_per_thread = p.fragment_regs + c.overhead_regs;
  p.regs_per_warp = static_cast<int>(round_up(p.regs_per_thread * warp, spec.reg_alloc_unit));
  p.regs_per_block = i64{p.regs_per_warp} * p.warps_per_block;
  p.max_regs_per_thread = max_regs_per_thread_at(spec, p.threads_per_block);

  // ---- shared memory ----
  const i64 a_stage = (i64{p.bm} + c.pad_a) * c.bk * c.ab_bytes;
  const i64 b_stage = i64{p.bn} * (c.bk + c.pad_b) * c.ab_bytes;
  p.smem_a = c.stages * a_stage;
  p.smem_b = c.stages * b_stage;
  p.smem_c = i64{c.c_stage_tiles} * (c.mma_m + c.pad_c) * c.mma_n * c.c_bytes * c.mma_warps();
  const i64 operands =
      c.c_union ? std::max(p.smem_a + p.smem_b, p.smem_c) : p.smem_a + p.smem_b + p.smem_c;
  p.smem_barriers = i64{c.stages} * c.barriers_per_stage * kMbarrierBytes;
  p.smem_block = operands + p.smem_barriers;
  if (c.smem_align > 0) p.smem_block = round_up(p.smem_block, c.smem_align) + c.smem_align;
  p.smem_alloc = round_up(p.smem_block + spec.smem_reserved_per_block, spec.smem_alloc_unit);

  // ---- limits ----
  const i64 threads = p.threads_per_block;
  p.threads_per_sm = static_cast<int>(threads * blocks);
  const bool block_ok = threads <= spec.max_threads_per_block &&
                        p.regs_per_thread <= p.max_regs_per_thread &&
                        p.smem_block <= spec.smem_per_block_max;
  p.checks.push_back({Limit::kThreadsPerBlock, "threads per block", threads,
                      spec.max_threads_per_block, threads <= spec.max_threads_per_block, ""});
  p.checks.push_back({Limit::kThreadsPerSm, "threads per SM", threads * blocks,
                      spec.max_threads_per_sm, threads * blocks <= spec.max_threads_per_sm, ""});
  if (spec.max_blocks_per_sm > 0) {
    p.checks.push_back({Limit::kBlocksPerSm, "blocks per SM", blocks, spec.max_blocks_per_sm,
                        blocks <= spec.max_blocks_per_sm, ""});
  }
  // The per-thread cap at this block size: the device's, or the block's share
  // of the per-block register file if smaller (the article's "128 at 1024").
  std::string thread_note;
  if (p.max_regs_per_thread < spec.max_regs_per_thread) {
    thread_note = str(spec.max_regs_per_thread) + " per thread, but " +
                  str(spec.max_regs_per_block) + " per block of " + str(threads) + " threads";
  }
  p.checks.push_back({Limit::kRegsPerThread, "registers per thread", p.regs_per_thread,
                      p.max_regs_per_thread, p.regs_per_thread <= p.max_regs_per_thread,
                      thread_note});

  // The hardware checks the per-block register limit as if the block's warps
  // were rounded up to a multiple of the sub-partitions (cuda_occupancy.h).
  const i64 warps_checked = round_up(p.warps_per_block, spec.reg_sub_partitions);
  const i64 regs_checked = i64{p.regs_per_warp} * warps_checked;
  std::string block_note;
  if (warps_checked != p.warps_per_block) {
    block_note = "checked as " + str(warps_checked) + " warps (a multiple of the " +
                 str(spec.reg_sub_partitions) + " sub-partitions)";
  }
  p.checks.push_back({Limit::kRegsPerBlock, "registers per block", regs_checked,
                      spec.max_regs_per_block, regs_checked <= spec.max_regs_per_block,
                      block_note});

  // Warps are placed in sub-partitions, each with its share of the registers.
  i64 blocks_by_regs = std::numeric_limits<int>::max();
  if (p.regs_per_warp > 0) {
    const i64 warps_per_sub = spec.regs_per_sm / spec.reg_sub_partitions / p.regs_per_warp;
    blocks_by_regs = warps_per_sub * spec.reg_sub_partitions / p.warps_per_block;
  }
  const i64 regs_need = p.regs_per_block * blocks;
  const bool regs_sm_ok = blocks <= blocks_by_regs;
  std::string sm_note;
  if (regs_need <= spec.regs_per_sm && !regs_sm_ok) {
    sm_note = "registers are allocated per sub-partition (" +
              str(spec.regs_per_sm / spec.reg_sub_partitions) + " each): " + str(blocks_by_regs) +
              " blocks fit";
  }
  p.checks.push_back(
      {Limit::kRegsPerSm, "registers per SM", regs_need, spec.regs_per_sm, regs_sm_ok, sm_note});

  p.checks.push_back({Limit::kSmemPerBlock, "shared memory per block (B)", p.smem_block,
                      spec.smem_per_block_max, p.smem_block <= spec.smem_per_block_max, ""});
  std::string smem_note;
  if (p.smem_alloc != p.smem_block) {
    smem_note = str(p.smem_alloc) + " B allocated per block";
    if (spec.smem_reserved_per_block > 0) {
      smem_note += " (" + str(spec.smem_reserved_per_block) + " B reserved";
      if (spec.smem_alloc_unit > 1) smem_note += ", " + str(spec.smem_alloc_unit) + " B units";
      smem_note += ")";
    }
  }
  p.checks.push_back({Limit::kSmemPerSm, "shared memory per SM (B)", p.smem_alloc * blocks,
                      spec.smem_per_sm, p.smem_alloc * blocks <= spec.smem_per_sm, smem_note});

  // ---- the most blocks every limit allows ----
  if (block_ok && regs_checked <= spec.max_regs_per_block) {
    i64 most = spec.max_threads_per_sm / threads;
    if (spec.max_blocks_per_sm > 0) most = std::min<i64>(most, spec.max_blocks_per_sm);
    most = std::min(most, blocks_by_regs);
    if (p.smem_alloc > 0) most = std::min(most, spec.smem_per_sm / p.smem_alloc);
    p.max_blocks_per_sm = static_cast<int>(most);
  }

  p.fits = true;
  for (const LimitCheck& check : p.checks) {
    if (check.ok) continue;
    p.fits = false;
    if (!p.reason.empty()) p.reason += "; ";
    p.reason += check.name + ": need " + str(check.need) + ", limit " + str(check.cap);
    if (!check.note.empty()) p.reason += " (" + check.note + ")";
  }
  return p;
}

}  // namespace tcgemm::plan
