#include "kernels/prod/problem.h"

#include <algorithm>
#include <limits>
#include <string>

#include "sched/tile_order.h"
#include "tensor_map.h"

namespace tcgemm::prod {
namespace {

constexpr std::int64_t kScratchAlignment = 256;

// TMA can address this many elements as a stride (tensor_map.h's rules).
bool stride_ok(std::int64_t elements, std::int64_t elem_bytes) {
  std::int64_t bytes = 0;
  return !__builtin_mul_overflow(elements, elem_bytes, &bytes) &&
         tma_stride_ok(static_cast<std::uint64_t>(bytes));
}

OperandView view(const MatrixRef& ref, std::int64_t rows, std::int64_t cols, bool is_a,
                 std::int64_t batch_count) {
  OperandView v;
  v.ptr = ref.ptr;
  v.dtype = ref.dtype;
  // A (M x K) is K-major when row-major; B (K x N) when column-major.
  const bool k_major = is_a ? ref.layout == Layout::kRowMajor : ref.layout == Layout::kColMajor;
  v.major = k_major ? Major::kK : Major::kMN;
  v.inner = ref.layout == Layout::kRowMajor ? cols : rows;
  v.outer = ref.layout == Layout::kRowMajor ? rows : cols;
  v.ld = ref.ld;
  v.shared = batch_count == 1 || ref.stride == 0;
  v.stride = v.shared ? 0 : ref.stride;
  const std::int64_t elem = static_cast<std::int64_t>(size_of(ref.dtype));
  const bool aligned = reinterpret_cast<std::uintptr_t>(ref.ptr) % kTmaAlignmentBytes == 0;
  const bool strides_ok = stride_ok(v.ld, elem) && (v.shared || stride_ok(v.stride, elem));
  // A base off 16 bytes is repacked too. Mapping the aligned address below
  // it with shifted coordinates (a view one element wider) would be free,
  // but the H200 faults on those loads (an illegal instruction at UTMALDG,
  // not seen under compute-sanitizer): docs/production.md.
  v.path = aligned && strides_ok ? OperandPath::kTma : OperandPath::kRepack;
  return v;
}

std::int64_t round_up(std::int64_t x, std::int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

}  // namespace

Problem canonicalize(const GemmArgs& args, bool flipped) {
  Problem p;
  p.args = args;
  p.swapped = (args.c.layout == Layout::kRowMajor) != flipped;
  p.c_row_major = flipped;
  if (p.swapped) {
    // A row-major M x N C is a column-major N x M C^T = B^T A^T (and a
    // column-major C a row-major C^T). B^T (N x K) is B's memory read with
    // the other layout, A^T (K x M) likewise.
    const auto flip = [](Layout l) {
      return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor;
    };
    p.args.m = args.n;
    p.args.n = args.m;
    p.args.a = args.b;
    p.args.a.layout = flip(args.b.layout);
    p.args.b = args.a;
    p.args.b.layout = flip(args.a.layout);
  }
  p.args.c.layout = flipped ? Layout::kRowMajor : Layout::kColMajor;
  const GemmArgs& c = p.args;
  p.a = view(c.a, c.m, c.k, /*is_a=*/true, c.batch_count);
  p.b = view(c.b, c.k, c.n, /*is_a=*/false, c.batch_count);
  const std::int64_t c_elem = static_cast<std::int64_t>(size_of(c.c.dtype));
  // A TMA store clips the contiguous dimension (M, or N for a row-major
  // output) at 16-byte granularity only: with M % 8 != 0 it would write up
  // to 7 rows past M (docs/hopper-notes.md).
  const bool c_tma =
      c_elem == 2 && reinterpret_cast<std::uintptr_t>(c.c.ptr) % kTmaAlignmentBytes == 0 &&
      stride_ok(c.c.ld, c_elem) && (c.batch_count == 1 || stride_ok(c.c.stride, c_elem)) &&
      (flipped ? c.n : c.m) % 8 == 0;
  p.epilogue = c_tma ? EpiloguePath::kTmaStore : EpiloguePath::kDirect;
  return p;
}

std::int64_t repacked_ld(const OperandView& v) {
  // 16 bytes for TMA; past kRepackLineFrom elements a whole 128-byte line,
  // so that no box row straddles two (two L2 requests each): on the H100,
  // 4096^3 streamed at ld 4104 took 0.187 ms against 0.177 at ld 4160, both
  // with 128-byte promotion (bench/results/h100/2026-12-06-s15/ld/), for at
  // most 63 elements (3%) more scratch a row.
  return round_up(v.inner, v.inner >= kRepackLineFrom ? kRepackLineElements : 8);
}

std::int64_t repacked_stride(const OperandView& v) {
  return v.shared ? 0 : repacked_ld(v) * v.outer;
}

namespace {

// An operand's repacked bytes into *bytes; false when the count wraps 64 bits.
bool copy_bytes(const OperandView& v, std::int64_t batch_count, std::int64_t* bytes) {
  const std::int64_t entries = v.shared ? 1 : batch_count;
  return !__builtin_mul_overflow(repacked_ld(v), v.outer, bytes) &&
         !__builtin_mul_overflow(*bytes, entries, bytes) &&
         !__builtin_mul_overflow(*bytes, static_cast<std::int64_t>(size_of(v.dtype)), bytes);
}

}  // namespace

std::size_t repacked_bytes(const OperandView& v, std::int64_t batch_count) {
  std::int64_t bytes = 0;
  copy_bytes(v, batch_count, &bytes);  // repack_fits: it does not wrap
  return static_cast<std::size_t>(bytes);
}

bool repack_fits(const Problem& problem) {
  // Both copies and the 256-byte gap between them under 2^62 bytes: the
  // sums in scratch_bytes and the launch's scratch layout cannot wrap.
  constexpr std::int64_t kLimit = std::int64_t{1} << 62;
  std::int64_t total = 0;
  for (const OperandView* v : {&problem.a, &problem.b}) {
    if (v->path != OperandPath::kRepack) continue;
    std::int64_t bytes = 0;
    if (!copy_bytes(*v, problem.args.batch_count, &bytes) ||
        bytes > kLimit - total - kScratchAlignment) {
      return false;
    }
    total += bytes + kScratchAlignment;
  }
  return true;
}

std::size_t scratch_offset_b(const Problem& problem) {
  if (problem.a.path != OperandPath::kRepack) return 0;
  return static_cast<std::size_t>(
      round_up(static_cast<std::int64_t>(repacked_bytes(problem.a, problem.args.batch_count)),
               kScratchAlignment));
}

std::size_t scratch_bytes(const Problem& problem) {
  if (problem.b.path != OperandPath::kRepack) {
    return problem.a.path == OperandPath::kRepack
               ? repacked_bytes(problem.a, problem.args.batch_count)
               : 0;
  }
  return scratch_offset_b(problem) + repacked_bytes(problem.b, problem.args.batch_count);
}

int effective_splits(std::int64_t k, int k_splits) {
  const std::int64_t k_tiles = sched::ceil_div(k, std::int64_t{kChunk});
  const std::int64_t per = sched::ceil_div(k_tiles, std::clamp<std::int64_t>(k_splits, 1, k_tiles));
  return static_cast<int>(sched::ceil_div(k_tiles, per));
}

std::int64_t k_tiles_per_split(std::int64_t k, int k_splits) {
  return sched::ceil_div(sched::ceil_div(k, std::int64_t{kChunk}),
                         std::int64_t{effective_splits(k, k_splits)});
}

std::int64_t work_units(const Problem& problem, int config) {
  const GemmArgs& a = problem.args;
  const TileConfig& t = kConfigs[config].tile;
  return sched::ceil_div(sched::ceil_div(a.m, t.bm), std::int64_t{t.cluster_m}) *
         sched::ceil_div(a.n, t.bn) * a.batch_count;
}

std::int64_t split_flag_count(int config, std::int64_t split_units, int splits) {
  const TileConfig& t = kConfigs[config].tile;
  return split_units * t.cluster_m * t.consumers * splits;
}

int max_in_place_splits(int config) {
  const TileConfig& t = kConfigs[config].tile;
  return static_cast<int>(1 + kMaxInPlacePartialBytes /
                                  (static_cast<std::size_t>(t.bm) * t.bn * sizeof(float)));
}

bool reduces_in_place(const Problem& problem, Choice choice) {
  const int splits = effective_splits(problem.args.k, choice.k_splits);
  if (splits == 1 || choice.separate_reduction) return false;
  if (kConfigs[choice.config].tile.ctas_per_sm != 1) return false;
  if (splits > max_in_place_splits(choice.config)) return false;
  // A tail split has at most a wave of split units: its flags fit (the
  // launch checks the count it has).
  return choice.split_tail ||
         split_flag_count(choice.config, work_units(problem, choice.config), splits) <=
             static_cast<std::int64_t>(kSplitFlagSlices);
}

std::int64_t whole_units(std::int64_t units, std::int64_t resident) {
  return resident > 0 && units >= resident ? units / resident * resident : 0;
}

std::int64_t split_units(const Problem& problem, Choice choice, std::int64_t resident) {
  if (effective_splits(problem.args.k, choice.k_splits) == 1) return 0;
  const std::int64_t units = work_units(problem, choice.config);
  return choice.split_tail ? units - whole_units(units, resident) : units;
}

std::int64_t split_units_bound(const Problem& problem, Choice choice, std::int64_t max_resident) {
  if (effective_splits(problem.args.k, choice.k_splits) == 1) return 0;
  const std::int64_t units = work_units(problem, choice.config);
  // units % r < r <= max_resident for every residency r that has a whole
  // wave; fewer units than r are all split, and fewer than max_resident.
  return choice.split_tail ? std::min(units, std::max<std::int64_t>(max_resident, 1)) : units;
}

std::size_t partials_bytes(const Problem& problem, Choice choice, std::int64_t split) {
  const GemmArgs& a = problem.args;
  const int splits = effective_splits(a.k, choice.k_splits);
  if (splits == 1 || split == 0) return 0;
  if (reduces_in_place(problem, choice)) {
    const TileConfig& t = kConfigs[choice.config].tile;
    return static_cast<std::size_t>(split) * static_cast<std::size_t>(t.cluster_m) *
           static_cast<std::size_t>(splits) * static_cast<std::size_t>(t.bm) *
           static_cast<std::size_t>(t.bn) * sizeof(float);
  }
  return static_cast<std::size_t>(a.m) * static_cast<std::size_t>(a.n) *
         static_cast<std::size_t>(a.batch_count) * static_cast<std::size_t>(splits) * sizeof(float);
}

namespace {

// sm_90's dense 16-bit tensor-core rate per SM (2048 FMAs per clock): the
// 128 x 256 config's throughput_pct of 100.
constexpr double kTensorFlopsPerSmCycle = 4096.0;
// L2 bandwidth over DRAM bandwidth, an estimate for Hopper parts (the tile
// loads of a wave hit L2; only unique bytes reach DRAM). 2.5 rather than 2:
// scored against the H200 table's measurements (tcgemm-tune --report
// --rescore, in-sample, 105 shapes) 14 choices moved to the tuned one and
// none away (3072^3 to prod-128x192, 1.13x behind before; 1024^3 to
// prod-128x64, 1.20x), geomean 1.024x -> 1.013x; 3.0 gave 1.014x.
constexpr double kL2OverDram = 2.5;
// Fixed costs, in SM cycles: a persistent CTA's first pipeline fill (about
// one DRAM latency), a tile's epilogue hand-off, and a second kernel launch
// back to back on the stream (a split-K reduction that cannot run in place).
constexpr double kFillCycles = 2000.0;
constexpr double kTileCycles = 400.0;
constexpr double kLaunchCycles = 3000.0;
// What a round of split pieces costs beyond its share of the work, per
// element of C a tile holds, measured rather than derived: against the same
// config unsplit, a split of 2 on prod-128x128 (16384 elements a tile) added
// 6 us for one round of pieces (1024^3) and 10 us a round over four
// (2048^3) on the H200 at 1.98 GHz (data/tuned/nvidia-h200.json,
// 2026-12-01-split-cost-ncu.txt); 0.75 is the lower end. Scored against the
// committed table's measurements (tcgemm-tune --report --rescore, the same
// 105 shapes it was fitted on), the heuristic's worst went from 1.96x (a
// split of 512 x 4096 x 4096 that ran at half the tuned unsplit speed) to
// 1.40x and its geomean from 1.043x to 1.020x.
constexpr double kSplitCyclesPerElement = 0.75;
// What one SM reads from L2 per clock, and an L2 round trip, about (sm_90).
constexpr double kSmL2BytesPerCycle = 64.0;
constexpr double kL2LatencyCycles = 700.0;
// Splits tried: up to what fills every CTA slot twice, at most this many.
constexpr int kMaxSplits = 16;

std::int64_t padded_tiles(const GemmArgs& a, const TileConfig& t) {
  const std::int64_t tiles_m = round_up(sched::ceil_div(a.m, t.bm), t.cluster_m);
  return tiles_m * sched::ceil_div(a.n, t.bn) * a.batch_count;
}

bool fits(const TileConfig& t, const Problem& problem, const DeviceModel& device) {
  return smem_bytes(t, static_cast<int>(size_of(problem.args.c.dtype))) <= device.smem_per_block;
}

}  // namespace

double zero_filled_rows(const GemmArgs& a, const TileConfig& t) {
  constexpr std::int64_t kMostUnitsAcross = 2;
  double rows = 0.0;
  const std::int64_t clusters_m =
      sched::ceil_div(sched::ceil_div(a.m, t.bm), std::int64_t{t.cluster_m});
  if (clusters_m <= kMostUnitsAcross) {
    rows +=
        static_cast<double>(std::min<std::int64_t>(t.bm, clusters_m * t.cluster_m * t.bm - a.m));
  }
  const std::int64_t tiles_n = sched::ceil_div(a.n, t.bn);
  if (tiles_n <= kMostUnitsAcross) rows += static_cast<double>(tiles_n * t.bn - a.n);
  return rows;
}

std::int64_t resident_units(const DeviceModel& device, const TileConfig& t) {
  const std::int64_t ctas = std::int64_t{std::max(device.sm_count, 1)} * t.ctas_per_sm;
  if (t.cluster_m == 1) return ctas;
  const std::int64_t clusters = std::max<std::int64_t>(ctas / t.cluster_m, 1);
  // pair_clusters counts clusters of two CTAs that each take a whole SM.
  if (t.cluster_m != 2 || t.ctas_per_sm != 1 || device.pair_clusters <= 0) return clusters;
  return std::max<std::int64_t>(std::min<std::int64_t>(clusters, device.pair_clusters), 1);
}

DeviceModel budgeted(DeviceModel device, int sm_count) {
  if (budget_binds(sm_count, device.sm_count)) {
    device.sm_count = sm_count;
    device.budget = true;
  }
  return device;
}

namespace {

// The bytes of A and B (one copy of a matrix shared by every batch entry)
// and of C (written once) a problem moves through DRAM at least.
struct DramBytes {
  double a;
  double b;
  double c;
};

DramBytes dram_bytes(const Problem& problem) {
  const GemmArgs& a = problem.args;
  const double in_bytes = static_cast<double>(size_of(a.a.dtype));
  const double batch = static_cast<double>(a.batch_count);
  return {static_cast<double>(a.m) * static_cast<double>(a.k) * in_bytes *
              (problem.a.shared ? 1.0 : batch),
          static_cast<double>(a.k) * static_cast<double>(a.n) * in_bytes *
              (problem.b.shared ? 1.0 : batch),
          static_cast<double>(a.m) * static_cast<double>(a.n) * batch *
              static_cast<double>(size_of(a.c.dtype))};
}

}  // namespace

sched::StreamKSchedule stream_k_tail(int config, std::int64_t units, std::int64_t k_tiles,
                                     std::int64_t resident) {
  const auto k = static_cast<std::int32_t>(k_tiles);
  resident = std::max<std::int64_t>(resident, 1);
  if (kConfigs[config].tile.ctas_per_sm != 1) {
    return sched::data_parallel_schedule(units, k, resident);
  }
  const sched::StreamKSchedule sk =
      sched::make_stream_k_schedule(units, k, resident, kStreamKFixupKTiles,
                                    /*overhead_64ths=*/0, kStreamKSplitCost5ths);
  const sched::StreamKSchedule dp = sched::data_parallel_schedule(units, k, resident);
  if (sk.sk_iters == 0) return sk;
  // Under one whole round, K splits serve (Choice::k_splits), each tile
  // summed by its last split.
  if (sk.dp_units == 0) return dp;
  // Every cluster's share at least half a unit: a head adds at most two
  // partial sums.
  if (2 * sk.sk_iters >= sk.workers * k_tiles) return sk;
  // A thin last round (4096 x 4097 x 4096 in 128 x 256 pairs: 272 on 66
  // clusters, 8 left): the last whole round joins the split range, so that
  // each cluster's share is 1 to 1.5 units and a head adds one partial sum,
  // where the estimate still beats the data-parallel rounds.
  sched::StreamKSchedule wide = sk;
  wide.dp_units -= sk.workers;
  wide.sk_iters += sk.workers * k_tiles;
  const std::int64_t dp_load = sched::ceil_div(units, resident) * k_tiles;
  return sched::stream_k_load(wide, kStreamKFixupKTiles, /*overhead_64ths=*/0,
                              kStreamKSplitCost5ths) < dp_load
             ? wide
             : dp;
}

bool uses_stream_k(const Problem& problem, Choice choice, const DeviceModel& device) {
  const TileConfig& t = kConfigs[choice.config].tile;
  if (effective_splits(problem.args.k, choice.k_splits) > 1) return false;
  // Not where memory time is within half the tensor cores' time: a partial
  // round streams as fast as a full one there, and the partial sums (a BM x
  // BN fp32 tile per CTA, written and read) add traffic. (128 x 28672 x 8192
  // on prod-128x256 ran 0.126 ms data-parallel, 0.181 with the tail; H200.)
  const GemmArgs& a = problem.args;
  const double flops = 2.0 * static_cast<double>(a.m) * static_cast<double>(a.n) *
                       static_cast<double>(a.k) * static_cast<double>(a.batch_count);
  const DramBytes bytes = dram_bytes(problem);
  const double compute_cycles = flops / (kTensorFlopsPerSmCycle * std::max(device.sm_count, 1));
  const double memory_cycles =
      (bytes.a + bytes.b + bytes.c) / std::max(device.memory_bytes_per_cycle, 1.0);
  if (2.0 * memory_cycles > compute_cycles) return false;
  const std::int64_t resident = resident_units(device, t);
  return stream_k_tail(choice.config, work_units(problem, choice.config),
                       sched::ceil_div(problem.args.k, std::int64_t{t.bk}), resident)
             .sk_iters > 0;
}

std::size_t stream_k_partials_bytes(int config, std::int64_t clusters) {
  const TileConfig& t = kConfigs[config].tile;
  return static_cast<std::size_t>(clusters) * static_cast<std::size_t>(t.cluster_m) *
         static_cast<std::size_t>(t.bm) * static_cast<std::size_t>(t.bn) * sizeof(float);
}

double estimate_cycles(const Problem& problem, const DeviceModel& device, Choice choice) {
  const GemmArgs& a = problem.args;
  const ConfigEntry& entry = kConfigs[choice.config];
  const TileConfig& t = entry.tile;
  const int splits = effective_splits(a.k, choice.k_splits);
  const std::int64_t k_whole = sched::ceil_div(a.k, std::int64_t{t.bk}) * t.bk;
  const std::int64_t k_per_split = k_tiles_per_split(a.k, splits) * t.bk;
  const std::int64_t tiles = padded_tiles(a, t);
  const std::int64_t slots = resident_tiles(device, t);
  // Tiles run over all of K and tiles run in `splits` pieces: a tail split
  // runs the whole waves whole and splits the rest; otherwise all or none
  // are split.
  const std::int64_t split_tiles =
      splits == 1 ? 0 : (choice.split_tail ? tiles - whole_units(tiles, slots) : tiles);
  const std::int64_t whole_tiles = tiles - split_tiles;
  std::int64_t whole_waves = sched::ceil_div(whole_tiles, slots);
  const std::int64_t piece_waves = sched::ceil_div(split_tiles * splits, slots);
  // Tensor cores: each wave runs one tile (or piece) per CTA slot;
  // ctas_per_sm CTAs share an SM's throughput_pct.
  const auto flops = [&](std::int64_t k) { return 2.0 * t.bm * t.bn * static_cast<double>(k); };
  const double sm_rate = kTensorFlopsPerSmCycle * entry.throughput_pct / 100.0;
  double compute = (static_cast<double>(whole_waves) * flops(k_whole) +
                    static_cast<double>(piece_waves) * flops(k_per_split)) *
                   t.ctas_per_sm / sm_rate;
  if (uses_stream_k(problem, choice, device)) {
    // A stream-K tail: the busiest cluster's k-tiles as its schedule counts
    // them (split k-tiles at 6/5, the fixup as kStreamKFixupKTiles).
    const sched::StreamKSchedule sk =
        stream_k_tail(choice.config, work_units(problem, choice.config), k_whole / t.bk,
                      resident_units(device, t));
    const auto k_tiles = static_cast<double>(
        sched::stream_k_load(sk, kStreamKFixupKTiles, /*overhead_64ths=*/0, kStreamKSplitCost5ths));
    compute = k_tiles * flops(t.bk) * t.ctas_per_sm / sm_rate;
    // Tiles stored: the whole rounds, then one per unit's worth of a
    // cluster's split share (one for a thin tail, two for a widened one).
    whole_waves = sk.dp_units / sk.workers + sched::ceil_div(sk.sk_iters, sk.workers * sk.k_tiles);
  }
  // Memory: unique operand bytes and C (read too when beta != 0) over DRAM,
  // plus the partial sums written and read back; every unit's tile loads
  // over L2.
  const double in_bytes = static_cast<double>(size_of(a.a.dtype));
  const double mn =
      static_cast<double>(a.m) * static_cast<double>(a.n) * static_cast<double>(a.batch_count);
  const DramBytes unique = dram_bytes(problem);
  const double a_bytes = unique.a;
  const double b_bytes = unique.b;
  const double c_bytes = unique.c * (a.beta != 0.0f ? 2.0 : 1.0);
  const double split_share =
      tiles > 0 ? static_cast<double>(split_tiles) / static_cast<double>(tiles) : 0.0;
  const double partial_bytes = 2.0 * mn * split_share * splits * sizeof(float);
  const double dram =
      (a_bytes + b_bytes + c_bytes + partial_bytes) / std::max(device.memory_bytes_per_cycle, 1.0);
  // B's tile loads are shared by a cluster's CTAs when both have rows of C
  // (with fewer rows the second CTA's tiles are padding; its loads are
  // counted as if it had its own, which ranks small-M choices as measured).
  const double multicast = a.m >= static_cast<std::int64_t>(t.bm) * t.cluster_m ? t.cluster_m : 1;
  const double l2 = (static_cast<double>(whole_tiles) * static_cast<double>(k_whole) +
                     static_cast<double>(split_tiles * splits) * static_cast<double>(k_per_split)) *
                    (t.bm + static_cast<double>(t.bn) / multicast) * in_bytes /
                    (std::max(device.memory_bytes_per_cycle, 1.0) * kL2OverDram);
  double cycles = std::max({compute, dram, l2}) + kFillCycles +
                  static_cast<double>(whole_waves + piece_waves) * kTileCycles;
  // Rows TMA zero-fills (zero_filled_rows: M within two clusters' tiles or
  // N within two tiles) are charged, at every k-tile through the busiest SM
  // (its CTAs' together where several share it, as the compute term counts
  // them; the stream-K schedule's count on that path), what reading as many
  // rows from L2 costs it, added to the rest. An empirical term for why the
  // orientation of a small-M problem matters on a tile that is not square
  // (the few rows belong on its short side) and why a few rows want a tile
  // they fill. On prod-128x64 16 x 4096 x 14336 ran 92.6 us with the 16 rows
  // in the 128-row box and 55.5 us in the 64-row one; on prod-64x256, 78.5
  // us in the 64-row box and 163.9 in the 256-row one (H100,
  // bench/results/h100/2026-12-06-s21/retune/). Rescored out of sample
  // (tcgemm-tune --report --rescore, the heldout sets of sessions 21 and 20,
  // H100): 1.029x -> 1.016x behind the best (worst 1.32x -> 1.22x) and
  // 1.025x -> 1.016x (1.27x -> 1.18x); on the committed tables no pick moves
  // but to a tuned choice. Half or twice the cost scores about the same
  // (1.016x-1.017x). Where M or N spans two units over several waves an SM
  // alternates edge and inner units, so this overcharges up to 2x there.
  const double busiest_k_tiles = compute * sm_rate / flops(t.bk);
  cycles += busiest_k_tiles * zero_filled_rows(a, t) * t.bk * in_bytes / kSmL2BytesPerCycle;

  // A split reduced in place ends with each tile's last piece adding the
  // others' partial sums through its SM (splits - 1 tiles' worth, after a
  // round trip for their flags and one for the first reads); one reduced by
  // a second kernel costs that launch.
  if (splits > 1) {
    const double valid = static_cast<double>(std::min<std::int64_t>(a.m, t.bm)) *
                         static_cast<double>(std::min<std::int64_t>(a.n, t.bn));
    cycles += static_cast<double>(piece_waves) * valid * kSplitCyclesPerElement;
    if (reduces_in_place(problem, choice)) {
      cycles += 2 * kL2LatencyCycles + (splits - 1) * valid * sizeof(float) / kSmL2BytesPerCycle;
    } else {
      cycles += kLaunchCycles;
    }
  }
  return cycles;
}

std::vector<Choice> candidates(const Problem& problem, const DeviceModel& device,
                               bool batch_invariant) {
  const GemmArgs& a = problem.args;
  std::vector<Choice> out;
  for (int i = 0; i < kConfigCount; ++i) {
    const TileConfig& t = kConfigs[i].tile;
    if (!fits(t, problem, device) || !takes_b(t, problem.b.major)) continue;
    // Under an SM budget a row of several CTAs per SM would run one per SM.
    if (device.budget && t.ctas_per_sm > 1) continue;
    const std::int64_t tiles = padded_tiles(a, t);
    const std::int64_t slots = resident_tiles(device, t);
    // More splits than fill every slot twice only add partial sums.
    const int max_splits = batch_invariant ? 1
                                           : static_cast<int>(std::clamp<std::int64_t>(
                                                 sched::ceil_div(2 * slots, tiles), 1, kMaxSplits));
    int previous = 0;
    for (int s = 1; s <= max_splits; ++s) {
      const int splits = effective_splits(a.k, s);
      if (splits == previous) continue;  // the same launch as the last
      previous = splits;
      out.push_back({i, splits});
    }
    // Past one wave with a partial last one: split only that wave's tiles,
    // into as many pieces as fill the device once (and half as many), where
    // the split reduces in place (a tail split needs it).
    const std::int64_t tail = tiles - whole_units(tiles, slots);
    if (!batch_invariant && t.ctas_per_sm == 1 && tiles > slots && tail > 0) {
      // (At most as many pieces as a tile's last piece may add up, so every
      // such candidate reduces in place, as a tail split must.)
      const int most = std::min(max_in_place_splits(i), kMaxSplits);
      const int fill = static_cast<int>(std::clamp<std::int64_t>(slots / tail, 2, most));
      int last = 0;
      for (const int s : {fill, fill / 2}) {
        const int splits = effective_splits(a.k, s);
        if (splits < 2 || splits == last) continue;
        last = splits;
        out.push_back({i, splits, /*separate_reduction=*/false, /*split_tail=*/true});
      }
    }
  }
  // A device model whose shared memory fits no config (a made-up one) still
  // gets the first row: the launch will say what is wrong.
  if (out.empty()) out.push_back({0, 1});
  return out;
}

namespace {

// The candidate of least estimate among those `keep` accepts.
template <typename Keep>
Choice least_estimate(const Problem& problem, const DeviceModel& device, Keep keep) {
  Choice best{};
  double best_cycles = std::numeric_limits<double>::infinity();
  for (const Choice& c : candidates(problem, device)) {
    if (!keep(c)) continue;
    const double cycles = estimate_cycles(problem, device, c);
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best = c;
    }
  }
  return best;
}

// The narrowest tile in the table.
constexpr int min_bn() {
  int bn = kConfigs[0].tile.bn;
  for (const ConfigEntry& e : kConfigs) bn = std::min(bn, e.tile.bn);
  return bn;
}

// What the estimate cannot score. (Last-wave splits it scores like any
// other choice: reduced in place, they keep C's TMA store. Until
// 2026-12-05 they were left to the tuned table where C could leave by TMA
// store; scoring them beside the rest cut the heuristic's slowdown against
// the tuned choices from 1.025x to 1.023x on the H200 table, 1.035x to
// 1.030x on the H100 one and 1.044x to 1.024x on the H100 heldout set,
// worse on no problem: docs/tuning.md.)
// It does not see a consumer warpgroup whose 64 rows all lie past M: it
// charges such a tile's padding to tensor-core time, which small M does not
// run short of, so a two-consumer tile could outscore the one-consumer rows
// made for small M while half its math is padding. The same holds for a
// tile at least twice as wide as N (a flipped small-M problem: 64 x 14336 x
// 4096 on prod-128x128 ran 1.46x the tuned choice, H200) where a narrower
// tile exists. Nor does it see A, the larger operand where M > N, read
// from DRAM again by each column tile of a narrow tile: 256 x 4096 x 4096
// with a row-major C (the kernel's 4096 x 256, three 96-column tiles) ran
// 29.9 us on prod-128x96, about A's 32 MB three times over at the copy
// rate, against 24.3 on prod-128x128 (two columns), and 21.5 with C
// column-major (the kernel's 256 x 4096: A is 2 MB) (H100,
// bench/results/h100/2026-12-06-s19/): a row off whole 64-column chunks
// (prod-128x96) is left out where M > N and N spans more than two of its
// tiles. (Measured on that row only: the 64-column rows' picks, scored
// against the tuned tables, are left as they were.) Rows the estimate does
// not model at all (ConfigEntry::estimated) are the tuned table's alone.
bool estimate_covers(const Problem& problem, const Choice& c) {
  if (!kConfigs[c.config].estimated) return false;
  const TileConfig& t = kConfigs[c.config].tile;
  const GemmArgs& a = problem.args;
  const bool idle_consumer = a.m <= static_cast<std::int64_t>(kWgmmaM) * (t.consumers - 1);
  const bool idle_columns = t.bn > min_bn() && 2 * a.n <= t.bn;
  const bool a_reread = t.bn % kChunk != 0 && a.m > a.n && a.n > 2 * std::int64_t{t.bn};
  return !idle_consumer && !idle_columns && !a_reread;
}

}  // namespace

HeuristicKey heuristic_key(const GemmArgs& a, int device, int config, int device_sms) {
  const auto offset = [](const void* p) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) % kTmaAlignmentBytes);
  };
  HeuristicKey key;
  key.device = device;
  key.config = config;
  key.m = a.m;
  key.n = a.n;
  key.k = a.k;
  key.batch_count = a.batch_count;
  const MatrixRef operands[3] = {a.a, a.b, MatrixRef{a.c.ptr, a.c.dtype, a.c.layout, a.c.ld,
                                                     a.c.stride}};
  for (int i = 0; i < 3; ++i) {
    key.ld[i] = operands[i].ld;
    key.stride[i] = operands[i].stride;
    key.offset[i] = offset(operands[i].ptr);
    key.dtype[i] = operands[i].dtype;
    key.layout[i] = operands[i].layout;
  }
  key.beta_zero = a.beta == 0.0f;
  key.sm_count = budget_binds(a.sm_count, device_sms) ? a.sm_count : 0;
  return key;
}

std::size_t HeuristicKeyHash::operator()(const HeuristicKey& key) const {
  // FNV-1a over the fields.
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.device)) << 32 |
      static_cast<std::uint32_t>(key.config));
  for (const std::int64_t v : {key.m, key.n, key.k, key.batch_count}) {
    mix(static_cast<std::uint64_t>(v));
  }
  for (int i = 0; i < 3; ++i) {
    mix(static_cast<std::uint64_t>(key.ld[i]));
    mix(static_cast<std::uint64_t>(key.stride[i]));
    mix(std::uint64_t{key.offset[i]} << 16 | static_cast<std::uint64_t>(key.dtype[i]) << 8 |
        static_cast<std::uint64_t>(key.layout[i]));
  }
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.sm_count)) << 1 |
      (key.beta_zero ? 1u : 0u));
  return static_cast<std::size_t>(h);
}

Choice select(const GemmArgs& args, const DeviceModel& device, bool batch_invariant) {
  const Problem native = canonicalize(args);
  const Choice best = select(native, device, batch_invariant);
  if (batch_invariant) return best;
  const Problem flipped = canonicalize(args, /*flipped=*/true);
  Choice other = select(flipped, device);
  other.flipped = true;
  // Both orientations write the same memory, so C leaves by TMA store in
  // both or in neither (the flipped output through CStore::kTmaRowMajor):
  // the estimates alone decide. (Until the flipped output had a TMA store,
  // a flip was charged the register epilogue's cost, 0.34 SM cycles an
  // element of C; the flipped TMA store ran as fast as the native one on
  // the same kernel problem: 96 x 6144 x 4096 tn flipped on prod-128x96 24.5
  // us, its tnr twin 24.4, H100, bench/results/h100/2026-12-06-s20/.)
  return estimate_cycles(flipped, device, other) < estimate_cycles(native, device, best) ? other
                                                                                        : best;
}

Choice select_split(const Problem& problem, const DeviceModel& device, int config) {
  Choice c = least_estimate(problem, device, [&](const Choice& each) {
    return each.config == config && estimate_covers(problem, each);
  });
  // A config whose shared memory the model says does not fit runs unsplit
  // (and its launch reports the failure).
  if (c.config != config) c = {config, 1};
  return c;
}

Choice select(const Problem& problem, const DeviceModel& device, bool batch_invariant) {
  if (batch_invariant) {
    // Pick as for a tall problem of the same N and K: the caller's M is the
    // kernel's N after the C^T = B^T A^T swap.
    Problem tall = problem;
    (problem.swapped ? tall.args.n : tall.args.m) = 4096;
    Choice c = select(tall, device, /*batch_invariant=*/false);
    c.k_splits = 1;
    c.split_tail = false;
    return c;
  }
  return least_estimate(problem, device,
                        [&](const Choice& c) { return estimate_covers(problem, c); });
}

LaunchConfig launch_config(const Problem& problem, Choice choice, const DeviceModel& device) {
  LaunchConfig l;
  l.config = choice.config;
  l.k_splits = effective_splits(problem.args.k, choice.k_splits);
  l.split_tail = l.k_splits > 1 && choice.split_tail;
  l.split_in_place = reduces_in_place(problem, choice);
  l.stream_k = uses_stream_k(problem, choice, device);
  l.swapped = problem.swapped;
  l.c_row_major = problem.c_row_major;
  l.a_major = problem.a.major;
  l.b_major = problem.b.major;
  l.a_path = problem.a.path;
  l.b_path = problem.b.path;
  l.epilogue = problem.epilogue;
  l.in = problem.args.a.dtype;
  l.out = problem.args.c.dtype;
  return l;
}

namespace {

const char* name(Major m) { return m == Major::kK ? "K-major" : "MN-major"; }
const char* name(OperandPath p) {
  switch (p) {
    case OperandPath::kTma:
      return "tma";
    case OperandPath::kRepack:
      return "repack+tma";
  }
  return "?";
}

}  // namespace

std::string to_string(const LaunchConfig& l) {
  const ConfigEntry& e = kConfigs[l.config];
  const TileConfig& t = e.tile;
  std::string s =
      std::string(e.name) + ": BM=" + std::to_string(t.bm) + " BN=" + std::to_string(t.bn) +
      " BK=" + std::to_string(t.bk) + " stages=" + std::to_string(t.stages) +
      " consumers=" + std::to_string(t.consumers) + " cluster=" + std::to_string(t.cluster_m) +
      "x1" + (t.cluster_m > 1 ? " multicast=B" : "") + " ctas/SM=" + std::to_string(t.ctas_per_sm) +
      " scheduler=data-parallel(hilbert)" + (l.stream_k ? "+stream-K last round" : "") +
      (l.k_splits > 1
           ? " split-k=" + std::to_string(l.k_splits) +
                 (l.split_tail ? "(last wave only" : "(every tile") +
                 (l.split_in_place ? ", reduced in place)" : ", second-kernel reduction)")
           : std::string());
  s += std::string(" in=") + std::string(tcgemm::to_string(l.in)) +
       " out=" + std::string(tcgemm::to_string(l.out));
  s += std::string(l.swapped ? " swapped(C^T=B^T*A^T)" : "") +
       (l.c_row_major ? " flipped(output row-major)" : "") + " a=" + name(l.a_major) + "/" +
       name(l.a_path) + " b=" + name(l.b_major) + "/" + name(l.b_path);
  s += l.epilogue == EpiloguePath::kTmaStore
           ? (t.deferred_store ? " epilogue=tma-store(deferred)" : " epilogue=tma-store")
           : " epilogue=direct";
  return s;
}

}  // namespace tcgemm::prod
