// tcgemm-bench: verifies and times every tcgemm registry kernel, and what
// tcgemm::gemm runs through its dispatcher (the row "tcgemm"), against cuBLAS
// on the problems docs/benchmarking.md defines, and writes the result files.
// With --hazard-runs N it instead runs each kernel N times on fresh inputs and
// reports how often it is wrong (for kernels with data races).
//
// Exit status: 0 every kernel that ran verified (hazard mode: the mode ran);
// 1 a verification failed or a run errored (hazard mode: a launch or CUDA
// error); 2 no GPU, or a usage error. No other status is returned.
#include "cli_checks.h"
#include "cuda_check.h"
#include "device_info.h"
#include "report.h"
#include "runner.h"
#include "shapes.h"
#include "table.h"  // tcgemm-tune's tuned-table file (--tuned-table)
#include "tuned/tuned.h"

#include <tcgemm/registry.h>

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace tcgemm;
using namespace tcgemm::bench;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// Enough for any question about how often a race strikes; keeps the seeds of
// all runs (3 apart) far from wrapping.
constexpr int kMaxHazardRuns = 1000000;
// Ten minutes of idle before each kernel is more than any GPU needs to cool.
constexpr int kMaxSequentialRestMs = 600000;
// cuBLAS takes the batch count as an int.
constexpr std::int64_t kMaxBatch = INT32_MAX;

constexpr const char* kFooter = R"(
Layouts (--layout): BLAS-style letters for op(A) and op(B); C is column-major.
  n = column-major (not transposed), t = row-major (transposed in BLAS terms).
  tn = A row-major, B column-major: the worklog's problem (the default).
  A third letter sets C's storage: c = column-major (default), r = row-major;
  e.g. tnr. Several layouts may be given, comma-separated: --layout tn,nn,nt,tt
Shape sets (--shapes; not with --m/--n/--k/--ld*/--batch/--stride-*/--offset):
  square   M=N=K in 512 ... 16384
  worklog  M=N=K = 512, 1024, 2048, 4096 (the headline), 8192
  llm      M in {1 ... 16384} x (N,K) of transformer projections
  heldout  other projections and token counts, none in the llm set (nor in
           the tuned table): the heuristic's choices
  ragged   odd and tiny sizes, odd K with a tight lda, leading dimensions
           padded by +8 and +1, and a 1-element base offset
  batched  8 x 2048^3 bf16 and 65536 x (8x64x8) fp16 (each its own dtype:
           not with --dtype)
Rows: every registry kernel --kernels selects, then "tcgemm" (what
tcgemm::gemm runs with default options, through the dispatcher: the product
as a user gets it; its config column names the kernel), then cuBLAS (always).
--kernels matches "tcgemm" like a kernel name: --kernels tcgemm runs only it
and cuBLAS; --kernels hopper- leaves it out.
Batches (--batch N): every operand holds N entries, one after another
(--stride-a/b/c set the distance in elements; 0 on A or B shares one matrix);
cuBLAS runs cublasGemmStridedBatchedEx on the same strides. Every entry is
verified on its own; FLOPs count all N. --offset E puts A, B and C E elements
past their 256-byte-aligned allocations (E = 1: 2-byte-aligned 16-bit bases);
cuBLAS gets the same pointers.
Verification: every element of every batch entry against a reference GEMM
(rel. Frobenius error under 1e-2 for bf16/fp16 output, 1e-4 for fp32, in each
entry), NaN-poisoned C, and a bitwise repeat. Timing: CUDA events, median of
--iters samples interleaved with cuBLAS, buffers rotated to defeat L2 for
small problems.
Sequential timing (--sequential MS): a diagnostic of clock and power state,
not the standard measurement. Each verified kernel is timed alone, in turn
(cuBLAS last), after MS milliseconds of idle GPU; its SM clock is read after
its own samples. --sequential 5000 --warmup 3 --iters 20 is close to the
Hopper worklog's protocol (a rested, boosting card); --sequential 0 with many
--iters gives each kernel's sustained clock. Its ratios are not same-run
interleaved ratios: never quote them as such.
Hazard mode (--hazard-runs N): for kernels with a data race (wmma-09), where
one verified run proves nothing. Each selected kernel, and cuBLAS as the
control, runs N times, run i on fresh inputs (seed + 3 (i - 1), printed),
against the reference and against an immediate re-run on the same inputs; the
report counts the wrong runs (a non-finite element, rel_err over the
tolerance, or an inexact element of the run on small integers; cuBLAS's
inexact elements are shown, not counted) and the runs that differed from
their re-run, with the median and
worst rel_err. Nothing is timed; no --csv/--json. Example:
  tcgemm-bench --kernels wmma-09 --layout nn --dtype fp16 --m 1024 --n 1024
               --k 1024 --hazard-runs 50
Exit status, always one of:
  0  every kernel that ran verified (skipped kernels do not count); in hazard
     mode: the runs were made and reported, however wrong their results
  1  a verification failed, or a run errored (out of memory, a CUDA error,
     a result file that could not be written); in hazard mode: a launch
     failed, out of memory, or a CUDA error
  2  a usage error (a result file that cannot be created included), or no
     CUDA GPU
Details: docs/benchmarking.md in the tcgemm repository.)";

// argv joined back into a command a shell would accept.
std::string command_line(int argc, char** argv) {
  const auto quote = [](const std::string& arg) {
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-+=.,/:@%") == std::string::npos;
    if (plain) return arg;
    std::string quoted = "'";
    for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return quoted + "'";
  };
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i > 0 ? " " : "") + quote(argv[i]);
  return command;
}

void print_kernel_list() {
  std::printf(
      "%.*s\n  tcgemm::gemm with default options: the kernel the dispatcher picks for each "
      "problem (its config column says which)\n  constraints: those of the kernels it picks "
      "from\n",
      static_cast<int>(kDispatcherName.size()), kDispatcherName.data());
  if (registry().empty()) std::printf("no registry kernels\n");
  for (const KernelInfo& kernel : registry()) {
    std::printf("%.*s\n  %.*s\n  constraints: %s\n", static_cast<int>(kernel.name.size()),
                kernel.name.data(), static_cast<int>(kernel.description.size()),
                kernel.description.data(), describe(kernel.constraints).c_str());
  }
}

// "4096x4096x4096 bf16 tn", with the batch count and offset when they are not
// the plain problem's, for progress lines.
std::string problem_name(const Problem& p) {
  std::string name = (p.batch > 1 ? std::to_string(p.batch) + " x " : std::string()) +
                     std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                     " " + std::string(to_string(p.input)) + " " + layouts_name(p.layouts);
  if (p.offset != 0) name += " offset " + std::to_string(p.offset);
  return name;
}

// One line per problem on stderr while the run goes, so a long sweep shows
// progress without mixing into the table on stdout.
void print_progress(std::size_t index, std::size_t total, std::span<const Result> rows) {
  if (rows.empty()) return;
  const Problem& p = rows.front().problem;
  const int sets = rows.front().l2_sets;
  const std::string l2 = sets > 1 ? "rotate " + std::to_string(sets) + " sets"
                                  : std::string("one set (A+B+C exceed 4x L2)");
  std::fprintf(stderr, "[%zu/%zu] %s, l2: %s:", index + 1, total, problem_name(p).c_str(),
               l2.c_str());
  for (const Result& r : rows) {
    const bool skipped = r.status.starts_with("skipped");
    std::fprintf(stderr, " %s %s", r.kernel.c_str(), skipped ? "skipped" : r.status.c_str());
    if (r.timing) std::fprintf(stderr, " %.4f ms", r.timing->median_ms);
    std::fprintf(stderr, ";");
  }
  std::fprintf(stderr, "\n");
}

// --hazard-runs: every problem's reports, printed as each problem finishes
// (progress on stderr, one line per run). Returns the exit status.
int run_hazard_mode(const DeviceInfo& device, const RunOptions& options, const ClockReader& clocks,
                    std::span<const Problem> problems, int runs) {
  print_hazard_intro(stdout, runs);
  std::vector<HazardReport> reports;
  std::string fault;
  std::size_t printed = 0;
  try {
    Runner runner(device, options, clocks);
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const Problem& p = problems[i];
      runner.run_hazard(p, runs, reports, [&](int run, std::span<const HazardReport> rows) {
        const double tolerance = testing::tolerance_for(p.output);
        std::fprintf(stderr, "[%zu/%zu] %s, run %d/%d (seed %llu):", i + 1, problems.size(),
                     problem_name(p).c_str(), run + 1, runs,
                     static_cast<unsigned long long>(hazard_seed(options.seed, run)));
        for (const HazardReport& r : rows) {
          const bool this_run = !r.runs.empty() && r.runs.back().run == run;
          const char* verdict = !this_run                            ? "-"
                                : is_wrong(r.runs.back(), tolerance) ? "WRONG"
                                                                     : "ok";
          std::fprintf(stderr, " %s %s;", r.kernel.c_str(), verdict);
        }
        std::fprintf(stderr, "\n");
      });
      print_hazard_problem(stdout, std::span<const HazardReport>(reports).subspan(printed));
      printed = reports.size();
      std::fflush(stdout);
    }
  } catch (const DeviceFault& e) {
    fault = e.what();
  }
  // A problem the fault interrupted: its reports so far.
  print_hazard_problem(stdout, std::span<const HazardReport>(reports).subspan(printed));
  if (!fault.empty()) {
    std::printf("tcgemm-bench: stopped after a CUDA error (the context is unusable): %s\n",
                fault.c_str());
  }
  const bool ran = fault.empty() && std::none_of(reports.begin(), reports.end(),
                                                 [](const HazardReport& r) { return r.failed; });
  return ran ? kExitOk : kExitFailed;
}

// Runs every problem, printing progress; returns the CUDA fault that stopped
// the run early, or "" when it ran to the end.
std::string run_problems(const DeviceInfo& device, const RunOptions& options,
                         const ClockReader& clocks, std::span<const Problem> problems,
                         std::vector<Result>& results) {
  try {
    Runner runner(device, options, clocks);
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const std::size_t first_row = results.size();
      const auto progress = [&] {
        print_progress(i, problems.size(), std::span<const Result>(results).subspan(first_row));
      };
      try {
        runner.run(problems[i], results);
      } catch (const DeviceFault&) {
        progress();  // the problem's rows are kept; show them before stopping
        throw;
      }
      progress();
    }
  } catch (const DeviceFault& e) {
    return e.what();
  }
  return {};
}

int bench_main(int argc, char** argv) {
  CLI::App app{
      "tcgemm-bench: verify and time tcgemm kernels against cuBLAS "
      "(docs/benchmarking.md)",
      "tcgemm-bench"};
  app.footer(kFooter);

  std::int64_t m = 4096;
  std::int64_t n = 4096;
  std::int64_t k = 4096;
  std::vector<std::string> dtypes{"bf16"};
  std::string out_dtype;
  std::vector<std::string> layout_names{"tn"};
  float alpha = 1.0f;
  float beta = 0.0f;
  LdOverride ld;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0;
  std::int64_t stride_b = 0;
  std::int64_t stride_c = 0;
  std::int64_t offset = 0;
  std::vector<std::string> kernel_filters;
  RunOptions run_options;
  std::uint64_t seed = 0;
  std::string csv_path;
  std::string tuned_table_path;
  std::string json_path;
  std::string shapes_name;
  int hazard_runs = 0;
  bool list = false;

  const CLI::Validator layout_check(
      [](std::string& name) {
        return parse_layouts(name) ? std::string() : "not a layout (tn, nn, nt, tt, tnr, ...)";
      },
      "LAYOUT");
  const CLI::Validator positive = integer_from(std::int64_t{1}, "POSITIVE");
  auto* m_opt =
      app.add_option("--m", m, "rows of A and C")->transform(positive)->capture_default_str();
  auto* n_opt =
      app.add_option("--n", n, "columns of B and C")->transform(positive)->capture_default_str();
  auto* k_opt = app.add_option("--k", k, "columns of A, rows of B")
                    ->transform(positive)
                    ->capture_default_str();
  auto* dtype_opt =
      app.add_option("--dtype", dtypes, "input dtype of A and B, comma-separated for several")
          ->delimiter(',')
          ->check(CLI::IsMember({"bf16", "fp16"}))
          ->capture_default_str();
  app.add_option("--out-dtype", out_dtype, "dtype of C (default: the input dtype)")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  app.add_option("--layout", layout_names, "storage of A, B (and C); see below")
      ->delimiter(',')
      ->check(layout_check)
      ->capture_default_str();
  app.add_option("--alpha", alpha, "C = alpha * A * B + beta * C")
      ->transform(finite_float())
      ->capture_default_str();
  app.add_option("--beta", beta, "beta != 0 reads a random C")
      ->transform(finite_float())
      ->capture_default_str();
  auto* lda_opt = app.add_option("--lda", ld.lda, "leading dimension of A (default: tight)")
                      ->transform(positive);
  auto* ldb_opt = app.add_option("--ldb", ld.ldb, "leading dimension of B (default: tight)")
                      ->transform(positive);
  auto* ldc_opt = app.add_option("--ldc", ld.ldc, "leading dimension of C (default: tight)")
                      ->transform(positive);
  auto* batch_opt = app.add_option("--batch", batch,
                                   "strided batched GEMM of N entries (cuBLAS: "
                                   "cublasGemmStridedBatchedEx)")
                        ->type_name("N")
                        ->transform(integer_in(std::int64_t{1}, kMaxBatch))
                        ->capture_default_str();
  const CLI::Validator stride = integer_from(std::int64_t{0}, "ELEMENTS");
  auto* stride_a_opt = app.add_option("--stride-a", stride_a,
                                      "elements between batch entries of A (default: one "
                                      "entry's span; 0: one A for every entry)")
                           ->transform(stride);
  auto* stride_b_opt = app.add_option("--stride-b", stride_b,
                                      "elements between batch entries of B (default: one "
                                      "entry's span; 0: one B for every entry)")
                           ->transform(stride);
  auto* stride_c_opt = app.add_option("--stride-c", stride_c,
                                      "elements between batch entries of C (default: one "
                                      "entry's span; entries must not overlap)")
                           ->transform(stride);
  auto* offset_opt = app.add_option("--offset", offset,
                                    "A, B and C start E elements past their 256-byte-aligned "
                                    "allocations (1: 2-byte-aligned bases)")
                         ->type_name("E")
                         ->transform(integer_from(std::int64_t{0}))
                         ->capture_default_str();
  app.add_option("--kernels", kernel_filters,
                 "run only the rows whose name contains one of these comma-separated substrings: "
                 "registry kernels and \"tcgemm\", the dispatcher (cuBLAS always runs)")
      ->delimiter(',');
  auto* warmup_opt = app.add_option("--warmup", run_options.warmup,
                                    "launches of each kernel before timing (at least 3)")
                         ->transform(integer_from(3))
                         ->capture_default_str();
  auto* iters_opt = app.add_option("--iters", run_options.iters,
                                   "timed samples of each kernel, median reported (at least 20)")
                        ->transform(integer_from(20))
                        ->capture_default_str();
  auto* seed_opt = app.add_option("--seed", seed,
                                  "seed of the random inputs, 0 to 2^64 - 1 (default: drawn "
                                  "and printed)")
                       ->transform(integer_from(std::uint64_t{0}));
  const auto non_empty = CLI::Validator(
      [](const std::string& path) { return path.empty() ? std::string("an empty path") : ""; },
      "FILE");
  auto* csv_opt =
      app.add_option("--csv", csv_path, "write one CSV row per (kernel, problem) to FILE")
          ->type_name("FILE")
          ->check(non_empty);
  auto* json_opt = app.add_option("--json", json_path, "write the results as JSON to FILE")
                       ->type_name("FILE")
                       ->check(non_empty);
  std::vector<std::string> set_names;
  for (std::string_view name : shape_set_names()) set_names.emplace_back(name);
  app.add_option("--shapes", shapes_name, "run a standard shape set; see below")
      ->check(CLI::IsMember(set_names))
      ->excludes(m_opt)
      ->excludes(n_opt)
      ->excludes(k_opt)
      ->excludes(lda_opt)
      ->excludes(ldb_opt)
      ->excludes(ldc_opt)
      ->excludes(batch_opt)
      ->excludes(stride_a_opt)
      ->excludes(stride_b_opt)
      ->excludes(stride_c_opt)
      ->excludes(offset_opt);
  app.add_option("--hazard-runs", hazard_runs,
                 "hazard mode: run each kernel N times, each on fresh random inputs, and report "
                 "how often and how badly it is wrong (see below); no timing")
      ->type_name("N")
      ->transform(integer_in(1, kMaxHazardRuns))
      ->excludes(csv_opt)
      ->excludes(json_opt)
      ->excludes(warmup_opt)
      ->excludes(iters_opt);
  app.add_option("--sequential", run_options.sequential_rest_ms,
                 "diagnostic timing: each kernel alone, in turn, after the GPU idled MS "
                 "milliseconds; see below")
      ->type_name("MS")
      ->transform(integer_in(0, kMaxSequentialRestMs))
      ->excludes("--hazard-runs");
  app.add_option("--tuned-table", tuned_table_path,
                 "run the tcgemm row as the library would with FILE (a tcgemm-tune table) "
                 "embedded: its entries are looked up before the library's own")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  app.add_flag("--list", list,
               "list the rows' kernels (tcgemm, then the registry's) with their constraints and "
               "exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 checks the values before it looks at --help; asking for help
    // gets help even next to a bad value.
    if (app.get_help_ptr()->count() > 0) return app.exit(CLI::CallForHelp());
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  // An empty name would match every row (--kernels "": CLI11 drops the
  // empty fields of a list such as "a,,b", not a value that is empty).
  if (std::any_of(kernel_filters.begin(), kernel_filters.end(),
                  [](const std::string& f) { return f.empty(); })) {
    std::fprintf(stderr, "tcgemm-bench: --kernels takes non-empty names, comma-separated\n");
    return kExitUsage;
  }

  if (list) {
    print_kernel_list();
    return 0;
  }
  // The table's entries point into it: it outlives every lookup.
  static std::optional<tune::TunedTable> tuned_table;
  if (!tuned_table_path.empty()) {
    try {
      tuned_table = tune::load_table(tuned_table_path);
    } catch (const tune::TableError& e) {
      std::fprintf(stderr, "tcgemm-bench: --tuned-table: %s\n", e.what());
      return kExitUsage;
    }
    if (!tuned_table) {
      std::fprintf(stderr, "tcgemm-bench: --tuned-table: %s does not exist\n",
                   tuned_table_path.c_str());
      return kExitUsage;
    }
    tuned::set_table_override(tune::entries_of(*tuned_table));
  }
  // Only cuBLAS left: the filters matched no kernel and not the dispatcher.
  if (select_contenders(kernel_filters).size() == 1) {
    std::fprintf(stderr,
                 "tcgemm-bench: --kernels matches no registry kernel and not \"%.*s\" (see "
                 "--list)\n",
                 static_cast<int>(kDispatcherName.size()), kDispatcherName.data());
    return kExitUsage;
  }
  const auto given = [](const CLI::Option* opt, std::int64_t value) {
    return opt->count() > 0 ? std::optional<std::int64_t>(value) : std::nullopt;
  };
  // One file for both would hold whichever was written last.
  const auto same_file = [](const std::string& x, const std::string& y) {
    // (weakly_canonical leaves a relative path of no existing file relative.)
    std::error_code ex, ey;
    const auto cx = std::filesystem::weakly_canonical(std::filesystem::absolute(x, ex), ex);
    const auto cy = std::filesystem::weakly_canonical(std::filesystem::absolute(y, ey), ey);
    return x == y || (!ex && !ey && cx == cy);
  };
  if (!csv_path.empty() && !json_path.empty() && same_file(csv_path, json_path)) {
    std::fprintf(stderr, "tcgemm-bench: --csv and --json name the same file (%s)\n",
                 csv_path.c_str());
    return kExitUsage;
  }
  ld.stride_a = given(stride_a_opt, stride_a);
  ld.stride_b = given(stride_b_opt, stride_b);
  ld.stride_c = given(stride_c_opt, stride_c);
  // Strides mean nothing to a single GEMM (the API ignores them): say so
  // rather than ignore the flag.
  if (batch == 1 && (ld.stride_a || ld.stride_b || ld.stride_c)) {
    std::fprintf(stderr,
                 "tcgemm-bench: --stride-a, --stride-b and --stride-c need --batch N "
                 "with N > 1\n");
    return kExitUsage;
  }

  const std::vector<Shape> shapes =
      shapes_name.empty()
          ? std::vector<Shape>{{.m = m, .n = n, .k = k, .offset = offset, .batch = batch}}
          : *shape_set(shapes_name);
  if (fixes_dtype(shapes) && dtype_opt->count() > 0) {
    std::fprintf(stderr, "tcgemm-bench: --shapes %s gives each problem its dtype: no --dtype\n",
                 shapes_name.c_str());
    return kExitUsage;
  }
  const std::optional<DType> output =
      out_dtype.empty() ? std::optional<DType>() : parse_dtype(out_dtype);
  std::vector<Problem> problems;
  for (const std::string& dtype_name : dtypes) {
    for (const std::string& layout_name : layout_names) {
      for (const Shape& shape : shapes) {
        problems.push_back(make_problem(shape, *parse_dtype(dtype_name), output,
                                        *parse_layouts(layout_name), alpha, beta, ld));
        for (const auto check : {check_leading_dimensions, check_size, check_arguments}) {
          if (const std::string error = check(problems.back()); !error.empty()) {
            std::fprintf(stderr, "tcgemm-bench: %s\n", error.c_str());
            return kExitUsage;
          }
        }
      }
    }
  }

  if (const std::string why = no_gpu_reason(); !why.empty()) {
    std::fprintf(stderr, "tcgemm-bench: no CUDA GPU found (%s); nothing to run\n", why.c_str());
    return kExitUsage;
  }

  // Open the result files before the run, so a bad path fails in a second
  // rather than after an hour of measurements.
  std::ofstream csv_file;
  std::ofstream json_file;
  for (auto [path, file] : {std::pair{&csv_path, &csv_file}, std::pair{&json_path, &json_file}}) {
    if (path->empty()) continue;
    file->open(*path);
    if (!*file) {
      std::fprintf(stderr, "tcgemm-bench: cannot write %s\n", path->c_str());
      return kExitUsage;
    }
  }

  if (seed_opt->count() == 0) seed = std::random_device{}();
  run_options.seed = seed;
  run_options.kernel_filters = kernel_filters;

  RunInfo info;
  info.device = query_device(0);
  info.seed = seed;
  info.command = command_line(argc, argv);
  if (hazard_runs > 0) {
    info.timing = "none (hazard mode)";
  } else if (run_options.sequential_rest_ms) {
    info.timing = "sequential, each kernel alone after " +
                  std::to_string(*run_options.sequential_rest_ms) +
                  " ms of idle GPU (a diagnostic: its ratios are not same-run interleaved ones)";
  }
  const ClockReader clocks(info.device.pci_bus_id);
  info.clocks_start = clocks.read();
  for (const std::string& line : header_lines(info)) std::printf("%s\n", line.c_str());
  if (info.device.compute_capability != 90) {
    std::printf(
        "tcgemm-bench: sm_%d is not Hopper (sm_90): Hopper kernels are skipped; cuBLAS "
        "and any kernel whose constraints allow this GPU still run\n",
        info.device.compute_capability);
  }
  std::fflush(stdout);
  if (hazard_runs > 0) {
    return run_hazard_mode(info.device, run_options, clocks, problems, hazard_runs);
  }

  std::vector<Result> results;
  const std::string fault = run_problems(info.device, run_options, clocks, problems, results);
  info.clocks_end = clocks.read();

  std::printf("\n");
  print_table(stdout, results);
  std::printf("clocks at end: %s\n", to_string(*info.clocks_end).c_str());
  if (!fault.empty()) {
    std::printf("tcgemm-bench: stopped after a CUDA error (the context is unusable): %s\n",
                fault.c_str());
  }
  if (csv_file.is_open()) write_csv(csv_file, info, results);
  if (json_file.is_open()) write_json(json_file, info, results);
  for (auto [path, file] : {std::pair{&csv_path, &csv_file}, std::pair{&json_path, &json_file}}) {
    if (file->is_open() && !file->flush()) {
      std::fprintf(stderr, "tcgemm-bench: writing %s failed\n", path->c_str());
      return kExitFailed;
    }
  }

  const bool all_verified = fault.empty() && std::none_of(results.begin(), results.end(),
                                                          [](const Result& r) { return r.failed; });
  return all_verified ? kExitOk : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = bench_main(argc, argv);
    // A table or list that could not be written (a full disk, a closed pipe)
    // is a failure, not a run that printed nothing.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      std::fprintf(stderr, "tcgemm-bench: writing standard output failed\n");
      return status == 0 ? kExitFailed : status;
    }
    return status;
  } catch (const std::exception& e) {
    // A CUDA error outside the runner (reading the device's properties, say,
    // or a TCGEMM_CHECK_CUDA in the verification toolkit) or the host out of
    // memory.
    std::fprintf(stderr, "tcgemm-bench: %s\n", e.what());
    return kExitFailed;
  }
}
