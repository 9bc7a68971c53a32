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
  return tma_stride_ok(static_cast<std::uint64_t>(elements * elem_bytes));
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

Problem canonicalize(const GemmArgs& args) {
  Problem p;
  p.args = args;
  if (args.c.layout == Layout::kRowMajor) {
    // A row-major M x N C is a column-major N x M C^T = B^T A^T. B^T (N x K)
    // is B's memory read with the other layout, A^T (K x M) likewise.
    const auto flip = [](Layout l) {
      return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor;
    };
    p.swapped = true;
    p.args.m = args.n;
    p.args.n = args.m;
    p.args.a = args.b;
    p.args.a.layout = flip(args.b.layout);
    p.args.b = args.a;
    p.args.b.layout = flip(args.a.layout);
    p.args.c.layout = Layout::kColMajor;
  }
  const GemmArgs& c = p.args;
  p.a = view(c.a, c.m, c.k, /*is_a=*/true, c.batch_count);
  p.b = view(c.b, c.k, c.n, /*is_a=*/false, c.batch_count);
  const std::int64_t c_elem = static_cast<std::int64_t>(size_of(c.c.dtype));
  const bool c_tma =
      c_elem == 2 && reinterpret_cast<std::uintptr_t>(c.c.ptr) % kTmaAlignmentBytes == 0 &&
      stride_ok(c.c.ld, c_elem) && (c.batch_count == 1 || stride_ok(c.c.stride, c_elem)) &&
      // A TMA store clips the contiguous dimension at 16-byte
      // granularity only: with M % 8 != 0 it would write up to
      // 7 rows past M (docs/hopper-notes.md).
      c.m % 8 == 0;
  p.epilogue = c_tma ? EpiloguePath::kTmaStore : EpiloguePath::kDirect;
  return p;
}

std::int64_t repacked_ld(const OperandView& v) { return round_up(v.inner, 8); }

std::int64_t repacked_stride(const OperandView& v) {
  return v.shared ? 0 : repacked_ld(v) * v.outer;
}

std::size_t repacked_bytes(const OperandView& v, std::int64_t batch_count) {
  const std::int64_t entries = v.shared ? 1 : batch_count;
  return static_cast<std::size_t>(repacked_ld(v) * v.outer * entries) * size_of(v.dtype);
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

int select_config(const Problem& problem, int sm_count) {
  const GemmArgs& a = problem.args;
  int best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kConfigCount; ++i) {
    const TileConfig& t = kConfigs[i].tile;
    // Tiles per entry, rounded up to whole clusters along M; a wave is one
    // tile on every resident CTA (ctas_per_sm of them share an SM).
    const std::int64_t tiles_m = round_up(sched::ceil_div(a.m, t.bm), t.cluster_m);
    const std::int64_t tiles = tiles_m * sched::ceil_div(a.n, t.bn) * a.batch_count;
    const std::int64_t waves = sched::ceil_div(tiles, std::max(sm_count, 1) * t.ctas_per_sm);
    // A wave's padded work per SM (in M x N elements, K being common to all
    // configs) at the config's rate per SM. An estimate that tcgemm-tune
    // replaces with measurements (issue 11).
    const double cost = static_cast<double>(waves) * t.bm * t.bn * t.ctas_per_sm * 100.0 /
                        static_cast<double>(kConfigs[i].throughput_pct);
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  return best;
}

LaunchConfig launch_config(const Problem& problem, int config) {
  LaunchConfig l;
  l.config = config;
  l.swapped = problem.swapped;
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
      " scheduler=" + (t.scheduler == Scheduler::kDataParallel ? "data-parallel(hilbert)" : "?");
  s += std::string(" in=") + std::string(tcgemm::to_string(l.in)) +
       " out=" + std::string(tcgemm::to_string(l.out));
  s += std::string(l.swapped ? " swapped(C^T=B^T*A^T)" : "") + " a=" + name(l.a_major) + "/" +
       name(l.a_path) + " b=" + name(l.b_major) + "/" + name(l.b_path);
  s += l.epilogue == EpiloguePath::kTmaStore
           ? (t.deferred_store ? " epilogue=tma-store(deferred)" : " epilogue=tma-store")
           : " epilogue=direct";
  return s;
}

}  // namespace tcgemm::prod
