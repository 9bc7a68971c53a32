// tcgemm-tune: times every candidate Choice of the production family
// (prod::candidates) on the given problems, with tcgemm-bench's method, and
// writes the fastest verified one of each to a tuned-table file that the
// library embeds at its next configure (docs/tuning.md). Resumable: the file
// is rewritten after every problem, and a re-run skips the problems in it.
//
// Exit status: 0 every candidate verified and every problem was tuned (or
// the report was printed); 1 a candidate failed verification or errored, a
// problem did not fit in memory, a CUDA error stopped the run, or the file
// could not be written; 2 a usage error (a file of another GPU or library
// version included), or no CUDA GPU.
#include "cli_checks.h"
#include "cuda_check.h"
#include "device_info.h"
#include "problems.h"
#include "table.h"
#include "testing/testing.h"
#include "tuner.h"

#include "kernels/prod/launch.h"
#include "kernels/prod/problem.h"
#include "tuned/tuned.h"

#include "git_describe.h"  // generated at build time: TCGEMM_GIT_DESCRIBE

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#ifndef TCGEMM_VERSION
#error "TCGEMM_VERSION must be defined by the build (the CMake project version)"
#endif

namespace {

using namespace tcgemm;
using namespace tcgemm::tune;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// The progress line's width when stderr is a terminal that does not say.
constexpr std::size_t kDefaultWidth = 100;

constexpr const char* kFooter = R"(
Shapes: --shapes takes tcgemm-bench's sets (square, worklog, llm, heldout,
ragged, batched), comma-separated for several; --shape MxNxK adds single problems.
Both may be given; a problem two of them name is tuned once.
Layouts (--layouts): tcgemm-bench's names: tn = A row-major, B column-major,
C column-major; tnr = the same with C row-major (what torch's F.linear
gives). Default: tn,tnr.
Method: per problem, every candidate of the production family
(prod::candidates: each config whose shared memory fits, each K split up to
what fills the device; and the small-M path, prod-skinny, where it applies)
is verified once against the reference GEMM (a wrong candidate is reported
and never chosen), then the verified ones are timed interleaved: --warmup
launches, then --reps CUDA-event samples each (--long-reps when one launch
takes over --long-ms), on operand sets rotated past 4x the L2; the median is
the time. The heuristic's choice is one of them: what the dispatcher runs
without a table entry (prod-skinny where it applies, else prod::select).
Resume: the file is rewritten (atomically) after every problem; a run with the
same --out skips the problems already tuned in it, unless --force.
Report: at the end, and alone with --report: for every problem, the tuned
choice and its time, the heuristic's and its time, and the heuristic's
slowdown; then the worst and the geometric-mean slowdown. --rates adds each
config's per-tile rate measured on the report's large problems (M, N >=
1024, at least 2 x 4096^3 flops) beside the one the heuristic assumes.
Exit status: 0 all verified; 1 a candidate failed or errored, out of memory,
a CUDA error, or the file could not be written; 2 a usage error or no GPU.
Details: docs/tuning.md in the tcgemm repository.)";

// One progress line redrawn in place on a terminal; on anything else (a log
// file) one line per finished problem.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {
    winsize size{};
    width_ = tty_ && ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0
                 ? static_cast<std::size_t>(size.ws_col) - 1
                 : kDefaultWidth;
  }

  void update(std::size_t done, std::size_t total, const std::string& activity) {
    if (!tty_) return;
    std::fprintf(stderr, "\r%s\033[K",
                 progress_line(done, total, activity, elapsed(), width_).c_str());
    std::fflush(stderr);
  }

  // A line that stays: clears the progress line first on a terminal.
  void line(const std::string& text) {
    std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", text.c_str());
    std::fflush(stderr);
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool tty_;
  std::size_t width_ = kDefaultWidth;
  std::chrono::steady_clock::time_point start_;
};

std::string summary_line(const TunedShape& s) {
  const auto ms = [](const std::optional<double>& v) {
    char text[32] = "-";
    if (v) std::snprintf(text, sizeof text, "%.4f ms", *v);
    return std::string(text);
  };
  std::string text = s.tuned ? "tuned " + choice_name(*s.tuned) + " " + ms(s.tuned->ms)
                             : std::string("no candidate verified");
  text += ", heuristic " + choice_name(s.heuristic) + " " + ms(s.heuristic.ms);
  if (const std::optional<double> slow = slowdown(s)) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, " (%.3fx)", *slow);
    text += ratio;
  }
  int failed = 0;
  for (const CandidateTiming& c : s.candidates) failed += c.measured.status != "ok" ? 1 : 0;
  text += ", " + std::to_string(s.candidates.size()) + " candidates";
  if (failed > 0) text += ", " + std::to_string(failed) + " FAILED";
  return text;
}

// Opt-in shared memory per block on sm_90 (227 KiB): the device model's
// without a GPU.
constexpr std::size_t kOptInSmemPerBlock = 232448;

// The choice the dispatcher makes for `key` without a table entry: the
// small-M path where it applies, else prod::select with `model`; for the
// problem tcgemm-tune times under that key (tight operands, at made-up
// aligned addresses: nothing is dereferenced), nullopt when that problem
// has another key (operands the file's run had off alignment).
std::optional<Measured> dispatcher_choice(const ShapeKey& key, const prod::DeviceModel& model) {
  const std::optional<GemmArgs> timed = timed_args(key);
  if (!timed) return std::nullopt;
  const GemmArgs& args = *timed;
  // (sm_90: the family's only target.)
  if (skinny_applies(args, 90))
    return Measured{std::string(tuned::kSkinnyKernel), 1, std::nullopt, "ok"};
  const prod::Choice c = prod::select(args, model);
  const int splits = prod::effective_splits(key.k, c.k_splits);
  return Measured{std::string(prod::kConfigs[static_cast<std::size_t>(c.config)].name), splits,
                  std::nullopt, "ok", splits > 1 && c.split_tail, c.flipped};
}

// --out read into *table (nullopt when the file does not exist); false,
// with the reason on stderr, when it is not a tuned table (a usage error).
bool read_out_table(const std::string& path, std::optional<TunedTable>* table) {
  try {
    *table = load_table(path);
    return true;
  } catch (const TableError& e) {
    std::fprintf(stderr, "tcgemm-tune: --out: %s\n", e.what());
    return false;
  }
}

int tune_main(int argc, char** argv) {
  CLI::App app{
      "tcgemm-tune: time the production family's candidate configs and K splits on the GPU and "
      "write the winners to a tuned table (docs/tuning.md)",
      "tcgemm-tune"};
  app.footer(kFooter);

  std::vector<std::string> set_names_given;
  std::vector<std::string> shape_texts;
  std::vector<std::string> layout_names{"tn", "tnr"};
  std::vector<std::string> dtype_names{"bf16"};
  std::string out_dtype;
  std::string out_path;
  bool force = false;
  bool report_only = false;
  Method method;
  std::uint64_t seed = 0;

  std::vector<std::string> set_names;
  for (std::string_view name : bench::shape_set_names()) set_names.emplace_back(name);
  app.add_option("--shapes", set_names_given, "tune a standard shape set (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember(set_names));
  app.add_option("--shape", shape_texts, "tune one problem MxNxK (repeatable, comma-separated)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& text) {
            return bench::parse_shape(text) ? std::string() : "not a shape MxNxK of integers from 1 to 2147483647";
          },
          "MxNxK"));
  auto* layouts_opt =
      app.add_option("--layouts", layout_names, "storage of A, B and C (tcgemm-bench's names)")
          ->delimiter(',')
          ->check(CLI::Validator(
              [](std::string& name) {
                return bench::parse_layouts(name) ? std::string()
                                                  : "not a layout (tn, nn, nt, tt, tnr, ...)";
              },
              "LAYOUT"))
          ->capture_default_str();
  auto* dtype_opt =
      app.add_option("--dtype", dtype_names, "input dtype of A and B, comma-separated for several")
          ->delimiter(',')
          ->check(CLI::IsMember({"bf16", "fp16"}))
          ->capture_default_str();
  auto* out_dtype_opt =
      app.add_option("--out-dtype", out_dtype, "dtype of C (default: the input dtype)")
          ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  app.add_option("--out", out_path,
                 "the tuned-table file to write or resume (default: "
                 "data/tuned/<gpu-name>.json, e.g. data/tuned/nvidia-h200.json)")
      ->type_name("FILE");
  auto* force_opt =
      app.add_flag("--force", force,
                   "re-time problems already in the file (and start afresh a file of another "
                   "library version)");
  auto* report_opt = app.add_flag(
      "--report", report_only,
      "print the report of --out's problems (those of --shapes/--shape when given) and "
      "exit; no GPU needed");
  bool rescore = false;
  int model_sms = 0;
  double model_bytes_per_cycle = 0.0;
  int model_pair_clusters = 0;
  app.add_flag("--rescore", rescore,
               "with --report: the heuristic column is this build's choice (what the dispatcher "
               "runs without the table), timed from the file's candidates; the device model "
               "from --model-sms and --model-bytes-per-cycle where given, else from the GPU");
  bool rates = false;
  app.add_flag("--rates", rates,
               "with --report: each config's per-tile rate measured in the file, relative to "
               "prod-128x256 and without wave quantization, beside the rate the heuristic assumes; "
               "the device model as for --rescore");
  app.add_option("--model-sms", model_sms,
                 "--rescore, --rates: the modeled device's SM count (instead of this GPU's; "
                 "needed without one)")
      ->transform(bench::integer_in(1, 100000));
  app.add_option("--model-bytes-per-cycle", model_bytes_per_cycle,
                 "--rescore, --rates: the modeled device's DRAM bytes per SM clock (H200: about "
                 "2483; with --model-sms)")
      ->transform(bench::finite_float())
      ->check(bench::above_zero());
  app.add_option("--model-pair-clusters", model_pair_clusters,
                 "--rescore, --rates: clusters of two whole-SM CTAs the modeled device holds at "
                 "once, at most --model-sms / 2 (default: SMs / 2, which the H200's 66 are)")
      ->transform(bench::integer_in(1, 100000));
  app.add_option("--warmup", method.warmup, "launches of each candidate before timing")
      ->transform(bench::integer_in(1, 1000))
      ->capture_default_str()
      ->excludes(report_opt);
  app.add_option("--reps", method.reps, "timed samples of each candidate (median reported)")
      ->transform(bench::integer_in(1, 10000))
      ->capture_default_str()
      ->excludes(report_opt);
  app.add_option("--long-reps", method.long_reps, "timed samples for a problem over --long-ms")
      ->transform(bench::integer_in(1, 10000))
      ->capture_default_str()
      ->excludes(report_opt);
  app.add_option("--long-ms", method.long_ms,
                 "a launch of the heuristic's choice longer than this makes a long problem")
      ->transform(bench::finite_float())
      ->check(bench::above_zero(/*or_zero=*/true))
      ->capture_default_str()
      ->excludes(report_opt);
  app.add_option("--max-candidates", method.max_candidates,
                 "run at most N candidates per problem, those of least estimated time, plus the "
                 "heuristic's (0: all)")
      ->type_name("N")
      ->transform(bench::integer_in(0, 100000))
      ->capture_default_str()
      ->excludes(report_opt);
  auto* seed_opt =
      app.add_option("--seed", seed, "seed of the random inputs (default: drawn and printed)")
          ->transform(bench::integer_from(std::uint64_t{0}))
          ->excludes(report_opt);
  // What only a run that times does is refused with --report, not ignored.
  force_opt->excludes(report_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (app.get_help_ptr()->count() > 0) return app.exit(CLI::CallForHelp());
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if ((rescore || rates) && !report_only) {
    std::fprintf(stderr, "tcgemm-tune: --rescore and --rates go with --report\n");
    return kExitUsage;
  }
  if (!rescore && !rates &&
      (model_sms > 0 || model_bytes_per_cycle > 0.0 || model_pair_clusters > 0)) {
    std::fprintf(stderr, "tcgemm-tune: --model-* options go with --rescore or --rates\n");
    return kExitUsage;
  }
  std::vector<bench::Shape> shapes;
  for (const std::string& name : set_names_given) {
    const std::vector<bench::Shape> set = *bench::shape_set(name);
    shapes.insert(shapes.end(), set.begin(), set.end());
  }
  for (const std::string& text : shape_texts) shapes.push_back(*bench::parse_shape(text));
  if (shapes.empty() && !report_only) {
    std::fprintf(stderr, "tcgemm-tune: nothing to tune: give --shapes SET or --shape MxNxK\n");
    return kExitUsage;
  }
  // Flags that would be silently ignored are refused instead.
  if (shapes.empty() &&
      (dtype_opt->count() > 0 || layouts_opt->count() > 0 || out_dtype_opt->count() > 0)) {
    std::fprintf(stderr,
                 "tcgemm-tune: --dtype, --layouts and --out-dtype select among the problems of "
                 "--shapes/--shape; --report alone reports every problem in the file\n");
    return kExitUsage;
  }
  if (dtype_opt->count() > 0 && bench::fixes_dtype(shapes)) {
    std::fprintf(stderr,
                 "tcgemm-tune: --shapes batched gives each problem its dtype: no --dtype\n");
    return kExitUsage;
  }
  std::vector<DType> dtypes;
  for (const std::string& name : dtype_names) dtypes.push_back(*bench::parse_dtype(name));
  std::vector<bench::OperandLayouts> layouts;
  for (const std::string& name : layout_names) layouts.push_back(*bench::parse_layouts(name));
  const std::optional<DType> output =
      out_dtype.empty() ? std::optional<DType>() : bench::parse_dtype(out_dtype);
  const ProblemList list = make_problems(shapes, dtypes, output, layouts);
  if (!list.error.empty()) {
    std::fprintf(stderr, "tcgemm-tune: %s\n", list.error.c_str());
    return kExitUsage;
  }

  if (report_only) {
    if (out_path.empty()) {
      std::fprintf(stderr, "tcgemm-tune: --report needs --out FILE\n");
      return kExitUsage;
    }
    std::optional<TunedTable> table;
    if (!read_out_table(out_path, &table)) return kExitUsage;
    if (!table) {
      std::fprintf(stderr, "tcgemm-tune: %s does not exist\n", out_path.c_str());
      return kExitUsage;
    }
    // The device model --rescore needs, before anything is printed.
    prod::DeviceModel model;
    if (rescore || rates) {
      // A device model given on the command line is used, GPU or not.
      const bool modeled = model_sms > 0 || model_bytes_per_cycle > 0.0 || model_pair_clusters > 0;
      if (modeled && (model_sms == 0 || model_bytes_per_cycle == 0.0)) {
        std::fprintf(stderr,
                     "tcgemm-tune: a device model needs both --model-sms and "
                     "--model-bytes-per-cycle\n");
        return kExitUsage;
      }
      if (model_pair_clusters > model_sms / 2) {
        std::fprintf(stderr,
                     "tcgemm-tune: --model-pair-clusters: %d clusters of two CTAs need more than "
                     "--model-sms %d SMs\n",
                     model_pair_clusters, model_sms);
        return kExitUsage;
      }
      if (modeled) {
        model.sm_count = model_sms;
        model.smem_per_block = kOptInSmemPerBlock;
        model.memory_bytes_per_cycle = model_bytes_per_cycle;
        model.pair_clusters = model_pair_clusters;
      } else if (bench::no_gpu_reason().empty()) {
        if (const Status s = kernels::prod::device_model(&model); !s.ok()) {
          std::fprintf(stderr, "tcgemm-tune: device_model: %s\n", s.message.c_str());
          return kExitFailed;
        }
      } else {
        std::fprintf(stderr,
                     "tcgemm-tune: --rescore and --rates without a GPU need --model-sms and "
                     "--model-bytes-per-cycle\n");
        return kExitUsage;
      }
    }
    std::printf("tuned table %s: %s (%d SMs), tcgemm %s, updated %s\n", out_path.c_str(),
                table->header.gpu_name.c_str(), table->header.sm_count,
                table->header.library_version.c_str(), table->header.updated.c_str());
    std::vector<TunedShape> report = select_shapes(*table, list.keys);
    if (report.size() < list.keys.size()) {
      std::fprintf(stderr, "tcgemm-tune: %zu of the %zu problems asked for are not in %s\n",
                   list.keys.size() - report.size(), list.keys.size(), out_path.c_str());
    }
    if (rescore) {
      if (model.sm_count != table->header.sm_count) {
        std::fprintf(stderr,
                     "tcgemm-tune: note: the model has %d SMs, the table's GPU %d: the rescored "
                     "choices are for another device than the one measured\n",
                     model.sm_count, table->header.sm_count);
      }
      std::printf(
          "heuristic rescored: this build's choices (%d SMs, %.0f DRAM bytes per cycle, %d "
          "clusters of two), timed from the file's candidates\n",
          model.sm_count, model.memory_bytes_per_cycle,
          // (prod-128x256's clusters of two)
          static_cast<int>(prod::resident_units(model, prod::kConfigs[0].tile)));
      for (TunedShape& shape : report) {
        if (const std::optional<Measured> choice = dispatcher_choice(shape.key, model)) {
          shape = with_heuristic(shape, *choice);
        }
      }
    }
    std::fputs(format_report(report).c_str(), stdout);
    if (rates) {
      const TunedTable selected{table->header, report};
      std::printf("\n%s", format_rates(tile_rates(selected, model)).c_str());
    }
    return kExitOk;
  }

  if (const std::string why = bench::no_gpu_reason(); !why.empty()) {
    std::fprintf(stderr, "tcgemm-tune: no CUDA GPU found (%s); nothing to tune\n", why.c_str());
    return kExitUsage;
  }
  const bench::DeviceInfo device = bench::query_device(0);
  if (out_path.empty()) out_path = "data/tuned/" + file_slug(device.name) + ".json";

  TableHeader now;
  now.gpu_name = device.name;
  now.sm_count = device.sm_count;
  now.library_version = TCGEMM_VERSION;
  now.source = TCGEMM_GIT_DESCRIBE;
  now.created = utc_now();
  now.updated = now.created;
  now.method = method;

  TunedTable table;
  table.header = now;
  std::optional<TunedTable> existing;
  if (!read_out_table(out_path, &existing)) return kExitUsage;
  if (existing) {
    if (const std::string why = check_resumable(existing->header, now, force); !why.empty()) {
      std::fprintf(stderr, "tcgemm-tune: cannot add to %s: %s\n", out_path.c_str(), why.c_str());
      return kExitUsage;
    }
    // Another library version's file is started afresh (--force); else the
    // run adds to it, under this run's method and source.
    if (existing->header.library_version == now.library_version) {
      table.shapes = std::move(existing->shapes);
      table.header.created = existing->header.created;
    }
  }

  if (seed_opt->count() == 0) seed = std::random_device{}();
  std::printf("tcgemm-tune: %s (%d SMs, sm_%d), tcgemm %s (%s), %zu problems into %s, seed %llu\n",
              device.name.c_str(), device.sm_count, device.compute_capability, TCGEMM_VERSION,
              TCGEMM_GIT_DESCRIBE, list.problems.size(), out_path.c_str(),
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);

  Progress progress;
  bool failed = false;
  std::string fault;
  std::size_t skipped = 0;
  try {
    Tuner tuner(device, TuneOptions{method, seed});
    for (std::size_t i = 0; i < list.problems.size(); ++i) {
      const ShapeKey& key = list.keys[i];
      const std::string prefix = "[" + std::to_string(i + 1) + "/" +
                                 std::to_string(list.problems.size()) + "] " + shape_name(key);
      if (already_tuned(table, key, force)) {
        ++skipped;
        progress.line(prefix + ": in the table, skipped");
        continue;
      }
      const auto show = [&](std::string_view activity) {
        progress.update(i, list.problems.size(), shape_name(key) + ": " + std::string(activity));
      };
      try {
        TunedShape shape = tuner.tune(list.problems[i], show);
        for (const CandidateTiming& c : shape.candidates) {
          if (c.measured.status == "ok") continue;
          failed = true;
          progress.line(prefix + ": candidate " + c.measured.config + " k_splits=" +
                        std::to_string(c.measured.k_splits) + ": " + c.measured.status);
        }
        failed = failed || !shape.tuned;
        progress.line(prefix + ": " + summary_line(shape));
        table.upsert(std::move(shape));
        table.header.updated = utc_now();
        save_table(out_path, table);
      } catch (const testing::DeviceAllocError& e) {
        if (e.error() != cudaErrorMemoryAllocation) throw bench::DeviceFault(e.what());
        failed = true;
        progress.line(prefix + ": out of memory (" + std::to_string(e.bytes()) +
                      " bytes), not tuned");
      }
    }
  } catch (const bench::DeviceFault& e) {
    fault = e.what();
  } catch (const TableError& e) {
    progress.line(std::string("tcgemm-tune: ") + e.what());
    return kExitFailed;
  }
  if (!fault.empty()) {
    progress.line("tcgemm-tune: stopped after a CUDA error (the context is unusable): " + fault);
  }
  if (skipped > 0) {
    progress.line("tcgemm-tune: " + std::to_string(skipped) + " of " +
                  std::to_string(list.problems.size()) +
                  " problems were already in the table (resumed; --force re-times them)");
  }

  std::printf("\n");
  std::fputs(format_report(select_shapes(table, list.keys)).c_str(), stdout);
  std::printf("tuned table: %s (%zu problems)\n", out_path.c_str(), table.shapes.size());
  return fault.empty() && !failed ? kExitOk : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = tune_main(argc, argv);
    // A report that could not be written (a full disk, a closed pipe) is a
    // failure, not a run that printed nothing.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      std::fprintf(stderr, "tcgemm-tune: writing standard output failed\n");
      return status == kExitOk ? kExitFailed : status;
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcgemm-tune: %s\n", e.what());
    return kExitFailed;
  }
}
