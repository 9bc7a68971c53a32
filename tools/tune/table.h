// tcgemm-tune's tuned-table file and the arithmetic around it, apart from the
// GPU timing (tuner.h): the file's contents and its JSON form (docs/tuning.md,
// "The table's format"), the atomic rewrite after every shape, which shapes a
// re-run skips (resume), the report's slowdowns and the progress line. Plain
// host C++, unit-tested on the CPU (tests/host/test_tune_table.cpp).
#pragma once

#include "shapes.h"
#include "tuned/tuned.h"

#include <tcgemm/tcgemm.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tcgemm::tune {

// The "format" member of every tuned-table file, and the version this build
// reads and writes. cmake/tuned_table.cmake checks the same two values.
inline constexpr std::string_view kFormat = "tcgemm-tuned-table";
inline constexpr int kFormatVersion = 1;
// The bounds cmake/tuned_table.cmake holds the library's table to: M, N, K
// and the batch count up to 2^31 - 1, K splits up to 65535.
inline constexpr std::int64_t kMaxExtent = bench::kMaxShapeExtent;
inline constexpr int kMaxKSplits = 65535;

// What a tuned problem is matched on: the embedded table's key
// (tuned::Entry) without the device, which the file's header gives.
struct ShapeKey {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType in = DType::kBF16;
  DType out = DType::kBF16;
  bench::OperandLayouts layouts;
  tuned::OperandPaths paths;

  bool operator==(const ShapeKey& other) const;
};

// The key of a bench problem as its buffers would be placed: each operand's
// allocation 256-byte aligned, the base pointers `offset` elements in (as
// tcgemm-bench and tcgemm-tune allocate them).
ShapeKey key_of(const bench::Problem& problem);

// The arguments of the problem tcgemm-tune times under `key` (tight
// operands, beta 0) at made-up aligned addresses, for host-side choices:
// nothing is dereferenced. nullopt when that problem has another key (one
// whose operands the file's run had off alignment).
std::optional<GemmArgs> timed_args(const ShapeKey& key);

// "16x4096x4096 bf16 tn", with "8 x " before it for a batch, "->fp32" after
// the dtype when C's differs, and the paths when they are not all TMA
// ("a=repack", "epilogue=direct").
std::string shape_name(const ShapeKey& key);

// One way of running a problem and its time: a prod::kConfigs name (or
// tuned::kSkinnyKernel, the small-M path, with k_splits 1), a K split
// (as candidates() gives it: already effective), the median per-launch time
// in milliseconds (unset when it did not verify or could not be timed), and
// the check's verdict ("ok", "FAIL(rel_err)", "FAIL(nonfinite)", "FAIL(exact)",
// "error: ...").
struct Measured {
  std::string config;
  int k_splits = 1;
  std::optional<double> ms;
  std::string status = "ok";
  bool split_tail = false;  // the split covers the last wave only (prod::Choice::split_tail)
  bool flipped = false;     // the orientation opposite to C's layout (prod::Choice::flipped)

  bool operator==(const Measured&) const = default;
};

// A measured choice as the report names it: "prod-128x256", "prod-64x256 k8",
// "prod-128x256 k5 tail" (a split of the last wave only), "prod-128x64 k2
// flipped" (the orientation opposite to C's layout).
std::string choice_name(const Measured& m);

// A candidate's full timing, as the file keeps it.
struct CandidateTiming {
  Measured measured;
  std::optional<double> min_ms;
  std::optional<double> max_ms;
  int launches_per_sample = 1;
  std::optional<double> rel_err;  // the verified run's relative Frobenius error (worst entry)

  bool operator==(const CandidateTiming&) const = default;
};

// One problem's measurement.
struct TunedShape {
  ShapeKey key;
  // The fastest candidate that verified; unset when none did (the shape is
  // then tuned again on the next run and left out of the embedded table).
  std::optional<Measured> tuned;
  // What the dispatcher runs without the entry (the small-M path where it
  // applies, else prod::select()'s choice), timed in the same loop as every
  // candidate.
  Measured heuristic;
  std::vector<CandidateTiming> candidates;  // every candidate timed, in candidates() order
  int l2_sets = 1;                          // operand sets rotated through while timing
  int reps = 0;                             // timed samples per candidate
  std::string timed_at;                     // UTC, ISO 8601

  bool operator==(const TunedShape&) const = default;
};

// How the file's shapes were timed.
struct Method {
  int warmup = 2;     // launches per candidate before timing
  int reps = 5;       // timed samples per candidate
  int long_reps = 3;  // ... for a problem whose launch takes over long_ms
  double long_ms = 5.0;
  int max_candidates = 0;  // 0: every candidate; else the best by the heuristic's estimate

  bool operator==(const Method&) const = default;
};

struct TableHeader {
  std::string gpu_name;  // cudaDeviceProp::name
  int sm_count = 0;
  std::string library_version;  // the tcgemm (CMake project) version that tuned it
  std::string source;           // git describe of the tree tcgemm-tune was built from
  std::string created;          // UTC, ISO 8601
  std::string updated;
  Method method;

  bool operator==(const TableHeader&) const = default;
};

struct TunedTable {
  TableHeader header;
  std::vector<TunedShape> shapes;

  // The shape of `key`, or nullptr.
  const TunedShape* find(const ShapeKey& key) const;
  // Replaces the shape of the same key, or appends it.
  void upsert(TunedShape shape);

  bool operator==(const TunedTable&) const = default;
};

// A tuned-table file that cannot be read or written: the message names the
// file and what is wrong.
class TableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const TunedTable& table);
// Throws TableError (naming `origin`) for a document that is not a tuned table
// of kFormatVersion or lacks a member.
TunedTable from_json(const nlohmann::json& json, const std::string& origin);

// The table in `path`, or nullopt when there is no such file. Throws
// TableError when it cannot be read or parsed.
std::optional<TunedTable> load_table(const std::filesystem::path& path);

// The tensor-core rate per tile each row of the config table measured in a
// table, relative to the first row's (prod-128x256): over the problems of
// at least kRateMinFlops with M and N >= kRateMinSide (whole rounds of tiles
// dominate there), each row's unsplit, unflipped time against the first
// row's, scaled by the ratio of their padded work per CTA slot (rounds of
// work units on `device` x BM x BN x CTAs per SM), so that wave
// quantization does not count. The median over those problems, beside the
// ConfigEntry::throughput_pct the heuristic's estimate assumes (in percent;
// rows with no such problem are left out). `tcgemm-tune --report --rates`.
inline constexpr double kRateMinFlops = 2.0 * 4096.0 * 4096.0 * 4096.0;
inline constexpr std::int64_t kRateMinSide = 1024;
struct TileRate {
  int config = 0;       // index into prod::kConfigs
  double median = 0.0;  // measured rate relative to kConfigs[0]'s
  int problems = 0;     // problems it is the median of
};
std::vector<TileRate> tile_rates(const TunedTable& table, const prod::DeviceModel& device);
std::string format_rates(std::span<const TileRate> rates);

// The table's entries as the library embeds them (tuned::Entry, what
// cmake/tuned_table.cmake generates from the same file): one per shape with
// a verified choice, on the header's GPU. Their string views point into
// `table`, which must outlive them. For tuned::set_table_override
// (tcgemm-bench --tuned-table).
std::vector<tuned::Entry> entries_of(const TunedTable& table);

// Writes the table to `path` atomically: into "<path>.tmp" beside it, then a
// rename over `path`, so a reader (or a run killed mid-write) sees the old
// file or the new one, never half of one. Creates the parent directory.
// Throws TableError.
void save_table(const std::filesystem::path& path, const TunedTable& table);

// Empty when a run on the GPU `now` describes may add to `file`, else why
// not: another GPU name or SM count (never mixed), or another library
// version unless `force` (the run then starts a fresh table).
std::string check_resumable(const TableHeader& file, const TableHeader& now, bool force);

// Whether a run skips `key`: it is in the table with a verified choice and
// the run is not --force.
bool already_tuned(const TunedTable& table, const ShapeKey& key, bool force);

// `shape` with `choice` (a config name or the small-M path's, its effective
// split, last wave only) as its heuristic in place of the recorded one: the
// time and status of the shape's candidate of that choice, or, when the file
// has none, no time and the status "not timed" (the report then leaves the
// shape out of the comparison). What `tcgemm-tune --report --rescore` shows:
// this build's heuristic against the file's measurements, no GPU run.
TunedShape with_heuristic(const TunedShape& shape, const Measured& choice);

// The heuristic's slowdown: its time over the tuned time (1 when it picked
// the winner; above 1 when it falls behind). Unset unless both were timed.
std::optional<double> slowdown(const TunedShape& shape);

struct ReportSummary {
  int shapes = 0;
  int compared = 0;          // shapes with both times
  int heuristic_failed = 0;  // shapes whose heuristic choice has no time (failed, or never timed)
  int untuned = 0;           // shapes with no verified candidate
  double worst = 1.0;        // the largest slowdown (1 with none)
  std::optional<ShapeKey> worst_shape;
  double geomean = 1.0;  // exp(mean(log slowdown)) over the compared shapes
};

ReportSummary summarize(std::span<const TunedShape> shapes);

// The report: one line per shape (the tuned choice and its time, the
// heuristic's and its time, the slowdown), then the summary lines; lines end
// with '\n'.
std::string format_report(std::span<const TunedShape> shapes);

// The shapes of `table` among `keys`, in the order of `keys`; every shape of
// the table when `keys` is empty.
std::vector<TunedShape> select_shapes(const TunedTable& table, std::span<const ShapeKey> keys);

// "[#######.......]  12/98 shapes  4096x14336x4096 bf16 tn: candidate 3/12  1:23"
// for a progress display `width` characters wide (the bar takes what the
// rest leaves, 10 to 40 characters; a long activity is cut with "..."),
// `elapsed_s` as m:ss (h:mm:ss past an hour).
std::string progress_line(std::size_t done, std::size_t total, std::string_view activity,
                          double elapsed_s, std::size_t width);

// The default file name's stem for a GPU: lower-case letters and digits, each
// other run of characters one '-' ("NVIDIA H200" -> "nvidia-h200"; "gpu"
// when nothing is left).
std::string file_slug(std::string_view gpu_name);

// The current time, UTC, ISO 8601 to the second ("2026-12-02T10:11:12Z").
std::string utc_now();

}  // namespace tcgemm::tune
