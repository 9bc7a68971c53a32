// tcgemm-tune's host side (tools/tune/table.h, problems.h): the tuned-table
// file's JSON form and its atomic rewrite, which problems a re-run skips
// (resume), the report's slowdown arithmetic, the progress line, and the
// problem list a command line gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "problems.h"
#include "table.h"

#ifndef TCGEMM_TUNED_FIXTURE
#error "TCGEMM_TUNED_FIXTURE must name tests/host/data/tuned-fixture.json"
#endif

namespace tcgemm::tune {
// Failure messages name the problem.
void PrintTo(const ShapeKey& key, std::ostream* out) { *out << shape_name(key); }
}  // namespace tcgemm::tune

namespace {

using namespace tcgemm;
using namespace tcgemm::tune;
using nlohmann::json;

constexpr bench::OperandLayouts kTN{Layout::kRowMajor, Layout::kColMajor, Layout::kColMajor};
constexpr bench::OperandLayouts kTNR{Layout::kRowMajor, Layout::kColMajor, Layout::kRowMajor};

ShapeKey key(std::int64_t m, std::int64_t n, std::int64_t k, bench::OperandLayouts layouts = kTN) {
  return ShapeKey{.m = m, .n = n, .k = k, .layouts = layouts, .paths = {}};
}

TunedShape timed(const ShapeKey& k, double tuned_ms, double heuristic_ms) {
  TunedShape s;
  s.key = k;
  s.tuned = Measured{"prod-128x256", 1, tuned_ms, "ok"};
  s.heuristic = Measured{"prod-128x128", 2, heuristic_ms, "ok"};
  s.candidates = {{s.heuristic, heuristic_ms * 0.99, heuristic_ms * 1.01, 3, 0.003},
                  {*s.tuned, tuned_ms * 0.99, tuned_ms * 1.01, 1, 0.0031}};
  s.l2_sets = 4;
  s.reps = 5;
  s.timed_at = "2026-12-02T10:11:12Z";
  return s;
}

TableHeader h200() {
  TableHeader h;
  h.gpu_name = "NVIDIA H200";
  h.sm_count = 132;
  h.library_version = "0.1.0";
  h.source = "abc123";
  h.created = "2026-12-02T10:00:00Z";
  h.updated = "2026-12-02T10:20:00Z";
  return h;
}

TunedTable sample_table() {
  TunedTable t;
  t.header = h200();
  t.shapes.push_back(timed(key(16, 4096, 4096), 0.0125, 0.0150));
  t.shapes.push_back(timed(key(16, 4096, 4096, kTNR), 0.0130, 0.0130));
  TunedShape failed;
  failed.key = key(1000, 1000, 8);
  failed.heuristic = {"prod-64x64", 1, std::nullopt, "FAIL(rel_err)"};
  failed.candidates = {{failed.heuristic, std::nullopt, std::nullopt, 1, 0.5}};
  t.shapes.push_back(failed);
  return t;
}

// A fresh directory under the system's temporary one, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tcgemm-tune-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// ---- the file ------------------------------------------------------------------

TEST(TuneTableFile, JsonRoundTripKeepsEveryField) {
  const TunedTable t = sample_table();
  EXPECT_EQ(from_json(to_json(t), "memory"), t);
}

TEST(TuneTableFile, JsonRoundTripKeepsTheFlippedOrientation) {
  TunedTable t;
  t.header = h200();
  TunedShape flipped = timed(key(64, 14336, 4096), 0.0340, 0.0430);
  flipped.tuned->flipped = true;
  flipped.candidates[1].measured.flipped = true;
  t.shapes.push_back(flipped);
  const json j = to_json(t);
  // Written only when set: the native orientation's choices keep their form.
  EXPECT_EQ(j.at("shapes").at(0).at("tuned").at("flipped"), true);
  EXPECT_FALSE(j.at("shapes").at(0).at("heuristic").contains("flipped"));
  EXPECT_EQ(from_json(j, "memory"), t);
  EXPECT_EQ(choice_name(*flipped.tuned), "prod-128x256 flipped");
}

TEST(TuneTableFile, JsonNamesTheFormatVersionGpuAndLibrary) {
  const json j = to_json(sample_table());
  EXPECT_EQ(j.at("format"), "tcgemm-tuned-table");
  EXPECT_EQ(j.at("format_version"), 1);
  EXPECT_EQ(j.at("gpu").at("name"), "NVIDIA H200");
  EXPECT_EQ(j.at("gpu").at("sm_count"), 132);
  EXPECT_EQ(j.at("library_version"), "0.1.0");
  const json& shape = j.at("shapes").at(1);
  EXPECT_EQ(shape.at("layout"), "tnr");
  EXPECT_EQ(shape.at("a_path"), "tma");
  EXPECT_EQ(shape.at("epilogue"), "tma_store");
  EXPECT_EQ(shape.at("tuned").at("config"), "prod-128x256");
  EXPECT_TRUE(j.at("shapes").at(2).at("tuned").is_null());
}

TEST(TuneTableFile, FixtureIsInTheTunersFormat) {
  // The fixture the CMake generator is tested on reads back as a table and
  // writes out as the same document: it is what tcgemm-tune writes.
  std::ifstream in(TCGEMM_TUNED_FIXTURE);
  const json fixture = json::parse(in);
  const TunedTable t = from_json(fixture, "fixture");
  EXPECT_EQ(t.shapes.size(), 6u);
  EXPECT_EQ(to_json(t), fixture);
}

TEST(TuneTableFile, RejectsAnotherFormatVersionOrAMissingMember) {
  json j = to_json(sample_table());
  j["format_version"] = 2;
  EXPECT_THROW(from_json(j, "x.json"), TableError);
  j = to_json(sample_table());
  j["shapes"][0].erase("k");
  try {
    from_json(j, "x.json");
    FAIL() << "a shape without k was read";
  } catch (const TableError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json.shapes[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"k\""), std::string::npos) << e.what();
  }
  j = to_json(sample_table());
  j["shapes"][0]["layout"] = "zz";
  EXPECT_THROW(from_json(j, "x.json"), TableError);
}

// Values the generator (cmake/tuned_table.cmake) refuses, the tuner refuses
// too, naming the member: nlohmann alone would read 4096.5 as 4096 (another
// problem's key) and 1e30 as a wrapped integer.
TEST(TuneTableFile, RejectsIntegersThatAreNotCountsAndMembersOfTheWrongKind) {
  struct Broken {
    const char* what;
    std::function<void(json&)> edit;
    const char* named;
  };
  const Broken cases[] = {
      {"fractional m", [](json& j) { j["shapes"][0]["m"] = 4096.5; }, "\"m\" is 4096.5"},
      {"m of 1e30", [](json& j) { j["shapes"][0]["m"] = 1e30; }, "\"m\" is 1e+30"},
      {"zero batch", [](json& j) { j["shapes"][0]["batch"] = 0; }, "\"batch\" is 0"},
      {"m as text", [](json& j) { j["shapes"][0]["m"] = "4096"; }, "\"m\" is \"4096\""},
      {"fractional split", [](json& j) { j["shapes"][0]["tuned"]["k_splits"] = 2.5; },
       "\"k_splits\" is 2.5"},
      {"version 1.5", [](json& j) { j["format_version"] = 1.5; }, "\"format_version\" is 1.5"},
      {"candidates a number", [](json& j) { j["shapes"][0]["candidates"] = 5; },
       "\"candidates\" is not an array"},
      {"a shape that is a number", [](json& j) { j["shapes"][0] = 7; }, "not a JSON object"},
      {"m past 2^31 - 1", [](json& j) { j["shapes"][0]["m"] = std::int64_t{1} << 31; },
       "\"m\" is 2147483648"},
      {"a split past 65535", [](json& j) { j["shapes"][0]["tuned"]["k_splits"] = 70000; },
       "\"k_splits\" is 70000"},
      {"fp32 inputs", [](json& j) { j["shapes"][0]["dtype"] = "fp32"; }, "inputs are bf16"},
      {"no tuned member", [](json& j) { j["shapes"][0].erase("tuned"); }, "\"tuned\""},
      {"a null flag", [](json& j) { j["shapes"][0]["tuned"]["flipped"] = nullptr; },
       "\"flipped\" is null"},
      {"a config name C++ cannot quote plainly",
       [](json& j) { j["shapes"][0]["tuned"]["config"] = "prod;x"; }, "not a config name"},
      {"an empty GPU name", [](json& j) { j["gpu"]["name"] = ""; }, "printable ASCII"},
      {"the same problem twice", [](json& j) { j["shapes"].push_back(j["shapes"][0]); },
       "the same problem"},
  };
  for (const Broken& b : cases) {
    json j = to_json(sample_table());
    b.edit(j);
    try {
      from_json(j, "x.json");
      ADD_FAILURE() << b.what << ": read";
    } catch (const TableError& e) {
      EXPECT_NE(std::string(e.what()).find(b.named), std::string::npos)
          << b.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos) << e.what();
    }
  }
}

TEST(TuneTableFile, ADirectoryIsNotATable) {
  const TempDir dir;
  try {
    load_table(dir.path());
    ADD_FAILURE() << "a directory was read as a table";
  } catch (const TableError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(TuneTableFile, SaveIsAtomicAndLoadReadsItBack) {
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "tuned" / "nvidia-h200.json";
  EXPECT_FALSE(load_table(path));  // no file yet: nothing to resume
  TunedTable t = sample_table();
  save_table(path, t);  // creates data/tuned/ as needed
  EXPECT_EQ(load_table(path), t);
  // A second save replaces the file whole; no temporary is left beside it.
  t.upsert(timed(key(64, 4096, 4096), 0.02, 0.03));
  save_table(path, t);
  EXPECT_EQ(load_table(path), t);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST(TuneTableFile, StaleTemporaryFromAKilledWriteIsHarmless) {
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "t.json";
  const TunedTable t = sample_table();
  save_table(path, t);
  // A run killed while writing leaves half a temporary; the table is intact
  // and the next save overwrites the temporary.
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  std::ofstream(tmp) << "{\"format\": \"tcgemm-tu";
  EXPECT_EQ(load_table(path), t);
  save_table(path, t);
  EXPECT_EQ(load_table(path), t);
}

TEST(TuneTableFile, UnparsableFileIsAnError) {
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "t.json";
  std::ofstream(path) << "not json";
  EXPECT_THROW(load_table(path), TableError);
}

// ---- resume ----------------------------------------------------------------------

TEST(TuneResume, SkipsProblemsAlreadyTunedUnlessForced) {
  const TunedTable t = sample_table();
  EXPECT_TRUE(already_tuned(t, key(16, 4096, 4096), /*force=*/false));
  EXPECT_TRUE(already_tuned(t, key(16, 4096, 4096, kTNR), false));
  EXPECT_FALSE(already_tuned(t, key(16, 4096, 4096), /*force=*/true));
  EXPECT_FALSE(already_tuned(t, key(64, 4096, 4096), false));
  // A problem with no verified candidate is tried again.
  EXPECT_FALSE(already_tuned(t, key(1000, 1000, 8), false));
}

TEST(TuneResume, AnInterruptedRunResumesWithTheProblemsItHadNotSaved) {
  // The run saves after every problem; killed during the third of four, the
  // file holds the first two, and the re-run tunes the last two only.
  const std::vector<ShapeKey> run = {key(1, 4096, 4096), key(16, 4096, 4096), key(64, 4096, 4096),
                                     key(128, 4096, 4096)};
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "t.json";
  TunedTable t;
  t.header = h200();
  for (std::size_t i = 0; i < 2; ++i) {
    t.upsert(timed(run[i], 0.01, 0.011));
    save_table(path, t);
  }
  const TunedTable resumed = *load_table(path);
  std::vector<ShapeKey> left;
  for (const ShapeKey& k : run) {
    if (!already_tuned(resumed, k, false)) left.push_back(k);
  }
  EXPECT_EQ(left, (std::vector<ShapeKey>{run[2], run[3]}));
}

TEST(TuneResume, UpsertReplacesTheSameProblem) {
  TunedTable t = sample_table();
  t.upsert(timed(key(16, 4096, 4096), 0.0100, 0.0150));
  EXPECT_EQ(t.shapes.size(), 3u);
  EXPECT_EQ(t.find(key(16, 4096, 4096))->tuned->ms, 0.0100);
  EXPECT_EQ(t.find(key(7, 7, 7)), nullptr);
}

TEST(TuneResume, OnlyTheSameGpuAndLibraryVersionResume) {
  const TableHeader file = h200();
  TableHeader now = h200();
  now.created = "later";
  now.source = "def456-dirty";
  EXPECT_EQ(check_resumable(file, now, false), "");
  now.gpu_name = "NVIDIA H100 80GB HBM3";
  EXPECT_NE(check_resumable(file, now, false), "");
  EXPECT_NE(check_resumable(file, now, /*force=*/true), "");  // never mixed
  now = h200();
  now.sm_count = 114;
  EXPECT_NE(check_resumable(file, now, true), "");
  now = h200();
  now.library_version = "0.2.0";
  EXPECT_NE(check_resumable(file, now, false).find("--force"), std::string::npos);
  EXPECT_EQ(check_resumable(file, now, true), "");
}

// ---- the report -----------------------------------------------------------------

TEST(TuneReport, SlowdownIsTheHeuristicsTimeOverTheTunedTime) {
  EXPECT_DOUBLE_EQ(*slowdown(timed(key(1, 1, 1), 0.010, 0.012)), 1.2);
  EXPECT_DOUBLE_EQ(*slowdown(timed(key(1, 1, 1), 0.010, 0.010)), 1.0);
  TunedShape failed = timed(key(1, 1, 1), 0.010, 0.012);
  failed.heuristic.ms.reset();
  EXPECT_FALSE(slowdown(failed));
  failed = timed(key(1, 1, 1), 0.010, 0.012);
  failed.tuned.reset();
  EXPECT_FALSE(slowdown(failed));
}

// --rescore: another heuristic choice takes its candidate's time from the
// file, or none when the file never timed it.
TEST(TuneReport, AnotherHeuristicTakesItsCandidatesTime) {
  const TunedShape s = timed(key(16, 4096, 4096), 0.0125, 0.0150);
  const TunedShape same = with_heuristic(s, Measured{"prod-128x256", 1, std::nullopt, "ok"});
  ASSERT_TRUE(same.heuristic.ms);
  EXPECT_DOUBLE_EQ(*same.heuristic.ms, 0.0125);
  EXPECT_DOUBLE_EQ(*slowdown(same), 1.0);
  EXPECT_EQ(same.tuned, s.tuned);
  EXPECT_EQ(same.candidates, s.candidates);
  const TunedShape untimed = with_heuristic(s, Measured{"prod-64x64", 4, std::nullopt, "ok"});
  EXPECT_FALSE(untimed.heuristic.ms);
  EXPECT_EQ(untimed.heuristic.status, "not timed");
  EXPECT_EQ(untimed.heuristic.config, "prod-64x64");
  EXPECT_FALSE(slowdown(untimed));
  // The split matters, and so does "last wave only".
  EXPECT_FALSE(with_heuristic(s, Measured{"prod-128x128", 3, std::nullopt, "ok"}).heuristic.ms);
  Measured tail{"prod-128x128", 2, std::nullopt, "ok", /*split_tail=*/true};
  EXPECT_FALSE(with_heuristic(s, tail).heuristic.ms);
  EXPECT_DOUBLE_EQ(*with_heuristic(s, Measured{"prod-128x128", 2, std::nullopt, "ok"}).heuristic.ms,
                   0.0150);
}

TEST(TuneReport, WorstAndGeometricMeanOverTheComparedShapes) {
  const std::vector<TunedShape> shapes = {
      timed(key(1, 4096, 4096), 0.010, 0.010),    // 1.00
      timed(key(16, 4096, 4096), 0.010, 0.0121),  // 1.21
      timed(key(64, 4096, 4096), 0.020, 0.025),   // 1.25
  };
  ReportSummary s = summarize(shapes);
  EXPECT_EQ(s.shapes, 3);
  EXPECT_EQ(s.compared, 3);
  EXPECT_DOUBLE_EQ(s.worst, 1.25);
  EXPECT_EQ(s.worst_shape, key(64, 4096, 4096));
  EXPECT_NEAR(s.geomean, std::cbrt(1.0 * 1.21 * 1.25), 1e-12);

  // Failed heuristic choices and untuned shapes are counted, not averaged.
  const TunedTable t = sample_table();
  s = summarize(t.shapes);
  EXPECT_EQ(s.shapes, 3);
  EXPECT_EQ(s.compared, 2);
  EXPECT_EQ(s.untuned, 1);
  EXPECT_NEAR(s.geomean, std::sqrt(1.2 * 1.0), 1e-12);

  EXPECT_EQ(summarize({}).compared, 0);
  EXPECT_DOUBLE_EQ(summarize({}).geomean, 1.0);
}

TEST(TuneReport, ListsEveryShapeThenTheSummary) {
  const TunedTable t = sample_table();
  const std::string report = format_report(t.shapes);
  EXPECT_NE(report.find("16x4096x4096 bf16 tn "), std::string::npos) << report;
  EXPECT_NE(report.find("16x4096x4096 bf16 tnr"), std::string::npos) << report;
  EXPECT_NE(report.find("prod-128x128 k2"), std::string::npos) << report;
  EXPECT_NE(report.find("1.200x"), std::string::npos) << report;
  EXPECT_NE(report.find("none verified"), std::string::npos) << report;
  EXPECT_NE(report.find("worst 1.200x (16x4096x4096 bf16 tn)"), std::string::npos) << report;
  EXPECT_NE(report.find("geometric mean 1.095x"), std::string::npos) << report;
  EXPECT_NE(report.find("1 shape(s) with no verified candidate"), std::string::npos) << report;
}

TEST(TuneReport, SelectShapesKeepsTheRequestedOrderOrGivesAll) {
  const TunedTable t = sample_table();
  EXPECT_EQ(select_shapes(t, {}).size(), 3u);
  const std::vector<ShapeKey> keys = {key(16, 4096, 4096, kTNR), key(7, 7, 7), key(16, 4096, 4096)};
  const std::vector<TunedShape> picked = select_shapes(t, keys);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].key, keys[0]);
  EXPECT_EQ(picked[1].key, keys[2]);
}

TEST(TuneReport, ShapeNamesSayBatchOutputDtypeAndPaths) {
  ShapeKey k = key(16, 4096, 4096);
  EXPECT_EQ(shape_name(k), "16x4096x4096 bf16 tn");
  k.batch = 8;
  k.out = DType::kFP32;
  k.paths.a = prod::OperandPath::kRepack;
  k.paths.epilogue = prod::EpiloguePath::kDirect;
  EXPECT_EQ(shape_name(k), "8 x 16x4096x4096 bf16->fp32 tn a=repack epilogue=direct");
}

// ---- progress, names, problems ---------------------------------------------------

TEST(TuneProgress, LineFitsItsWidthAndFillsTheBar) {
  const std::string half = progress_line(5, 10, "4096x4096x4096 bf16 tn: verify 3/5", 83.0, 100);
  EXPECT_LE(half.size(), 100u);
  EXPECT_NE(half.find(" 5/10 shapes "), std::string::npos) << half;
  EXPECT_NE(half.find("verify 3/5"), std::string::npos) << half;
  EXPECT_NE(half.find("1:23"), std::string::npos) << half;
  const std::size_t bar = half.find(']') - 1;
  const auto filled = static_cast<std::size_t>(std::count(half.begin(), half.end(), '#'));
  EXPECT_EQ(filled, bar / 2) << half;
  // A narrow display cuts the activity, not the bar.
  const std::string narrow = progress_line(1, 3, std::string(200, 'x'), 4000.0, 60);
  EXPECT_LE(narrow.size(), 60u) << narrow;
  EXPECT_NE(narrow.find("..."), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("1:06:40"), std::string::npos) << narrow;
  EXPECT_EQ(progress_line(3, 3, "", 0, 80).find('.'), std::string::npos);
}

TEST(TuneNames, FileSlugOfGpuNames) {
  EXPECT_EQ(file_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(file_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(file_slug("  GH200 (480GB) "), "gh200-480gb");
  EXPECT_EQ(file_slug("!!"), "gpu");
}

TEST(TuneProblems, ParseShapeTakesMxNxKOnly) {
  const std::optional<bench::Shape> s = parse_shape("16x4096X14336");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->m, 16);
  EXPECT_EQ(s->n, 4096);
  EXPECT_EQ(s->k, 14336);
  for (const char* bad : {"", "16", "16x4096", "16x4096x", "0x1x1", "-1x2x3", "1x2x3x4", "ax2x3",
                          "1 x2x3", "99999999999999999999x1x1"}) {
    EXPECT_FALSE(parse_shape(bad)) << bad;
  }
}

TEST(TuneProblems, SetsCrossLayoutsAndDropDuplicates) {
  std::vector<bench::Shape> shapes = *bench::shape_set("llm");
  const std::vector<bench::Shape> square = *bench::shape_set("square");
  shapes.insert(shapes.end(), square.begin(), square.end());
  const std::vector<DType> dtypes = {DType::kBF16};
  const std::vector<bench::OperandLayouts> layouts = {kTN, kTNR};
  const ProblemList list = make_problems(shapes, dtypes, std::nullopt, layouts);
  ASSERT_EQ(list.error, "");
  // 40 llm + 9 square per layout, 4096^3 in both sets.
  EXPECT_EQ(list.problems.size(), 2u * (40 + 9 - 1));
  EXPECT_EQ(list.keys.size(), list.problems.size());
  ShapeKey first = key(1, 4096, 4096);
  first.paths.epilogue = prod::EpiloguePath::kDirect;  // M % 8 != 0: no TMA store
  EXPECT_EQ(list.keys.front(), first);
  EXPECT_EQ(list.keys.back(), key(16384, 16384, 16384, kTNR));
  // Each problem beside its key, and no key twice.
  for (std::size_t i = 0; i < list.keys.size(); ++i) {
    const bench::Problem& p = list.problems[i];
    const ShapeKey& k = list.keys[i];
    EXPECT_EQ(std::tuple(p.m, p.n, p.k, p.batch), std::tuple(k.m, k.n, k.k, k.batch)) << i;
    EXPECT_EQ(bench::layouts_name(p.layouts), bench::layouts_name(k.layouts)) << i;
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(list.keys[j] == k) << j << " and " << i;
  }
}

TEST(TuneProblems, KeysCarryAlignmentAsCanonicalizeSeesIt) {
  const std::vector<DType> dtypes = {DType::kBF16};
  const std::vector<bench::OperandLayouts> layouts = {kTN};
  const ProblemList ragged =
      make_problems(*bench::shape_set("ragged"), dtypes, std::nullopt, layouts);
  ASSERT_EQ(ragged.error, "");
  bool repacked = false;
  bool direct = false;
  for (const ShapeKey& k : ragged.keys) {
    repacked = repacked || k.paths.a == prod::OperandPath::kRepack;
    direct = direct || k.paths.epilogue == prod::EpiloguePath::kDirect;
  }
  EXPECT_TRUE(repacked);  // odd K with a tight lda, ld + 1, offset 1
  EXPECT_TRUE(direct);    // M = 4095, 17, 1
  // Tight, aligned TN: every operand by TMA.
  EXPECT_EQ(key_of(make_problems(std::vector<bench::Shape>{{.m = 64, .n = 64, .k = 64}}, dtypes,
                                 std::nullopt, layouts)
                       .problems.front())
                .paths,
            tuned::OperandPaths{});
}

TEST(TuneProblems, ARefusedProblemIsAnError) {
  const std::vector<DType> dtypes = {DType::kBF16};
  const std::vector<bench::OperandLayouts> layouts = {kTN};
  // 2^62 elements per operand cannot be counted in bytes.
  const std::vector<bench::Shape> huge = {
      {.m = std::int64_t{1} << 31, .n = 1, .k = std::int64_t{1} << 31}};
  EXPECT_NE(make_problems(huge, dtypes, std::nullopt, layouts).error, "");
}

}  // namespace
