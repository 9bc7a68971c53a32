#include "runner.h"

#include <tcgemm/registry.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <thread>
#include <utility>

namespace tcgemm::bench {
namespace {

Launcher registry_launcher(const KernelInfo& kernel) {
  return [&kernel](const GemmArgs& args) {
    return launch_outcome(gemm(args, GemmOptions{.kernel = kernel.name}),
                          /*not_supported_skips=*/false);
  };
}

Launcher dispatcher_launcher() {
  return
      [](const GemmArgs& args) { return launch_outcome(gemm(args), /*not_supported_skips=*/true); };
}

// The cuBLAS call testing::cublas_gemm makes for `args`.
std::string_view cublas_call(const GemmArgs& args) {
  return args.batch_count == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx";
}

Launcher cublas_launcher(cublasHandle_t handle) {
  return [handle](const GemmArgs& args) -> Launch {
    const cublasStatus_t s = testing::cublas_gemm(handle, args);
    if (s == CUBLAS_STATUS_SUCCESS) return {};
    clear_pending_error();
    std::string message = std::string(cublas_call(args)) + ": " + cublasGetStatusString(s);
    // cuBLAS lacks some dtype pairs the API has (bf16 inputs to fp16 output).
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return {Launch::Kind::kSkipped, std::move(message)};
    return {Launch::Kind::kError, std::move(message)};
  };
}

// A problem's contenders made ready to run: a launcher for each, except a
// registry kernel whose constraints refuse the problem (its reason instead),
// and the GEMM workspace (GemmArgs::workspace) they share: the largest that
// any of them asks for this problem.
struct Lineup {
  std::vector<std::optional<Launcher>> launchers;  // one per contender
  std::vector<std::string> skip_reasons;           // one per contender; "" where it launches
  std::size_t workspace_bytes = 0;
};

Lineup line_up(std::span<const Contender> contenders, const GemmArgs& args, const DeviceCaps& caps,
               cublasHandle_t cublas) {
  Lineup lineup;
  const auto need_workspace = [&lineup](std::size_t bytes) {
    lineup.workspace_bytes = std::max(lineup.workspace_bytes, bytes);
  };
  for (const Contender& contender : contenders) {
    std::optional<Launcher>& launcher = lineup.launchers.emplace_back();
    std::string& reason = lineup.skip_reasons.emplace_back();
    switch (contender.kind) {
      case Contender::Kind::kRegistry: {
        const KernelInfo& kernel = *contender.kernel;
        reason = check_constraints(kernel.constraints, args, caps);
        if (!reason.empty()) break;
        launcher = registry_launcher(kernel);
        // A workspace function assumes check_constraints passed.
        if (kernel.workspace_bytes != nullptr) need_workspace(kernel.workspace_bytes(args));
        break;
      }
      case Contender::Kind::kDispatcher:
        launcher = dispatcher_launcher();
        need_workspace(workspace_size(args));  // what the user is told to give gemm()
        break;
      case Contender::Kind::kCublas:
        launcher = cublas_launcher(cublas);
        break;
    }
  }
  return lineup;
}

// Result::config: what `contender` runs on `args` (workspace attached, so the
// dispatcher is asked about the very call it gets).
std::string describe_contender(const Contender& contender, const GemmArgs& args) {
  if (contender.kind == Contender::Kind::kCublas) return std::string(cublas_call(args));
  const Description d = contender.kind == Contender::Kind::kDispatcher
                            ? describe(args)
                            : describe(args, GemmOptions{.kernel = contender.name});
  if (!d.status.ok()) return {};
  if (d.config.empty()) return d.kernel;
  if (d.kernel.empty()) return d.config;  // a BLAS quick return: no GEMM kernel ran
  return d.kernel + ": " + d.config;
}

}  // namespace

Runner::Runner(const DeviceInfo& device, RunOptions options, const ClockReader& clocks)
    : device_(device),
      options_(std::move(options)),
      clocks_(clocks),
      contenders_(select_contenders(options_.kernel_filters)) {
  check_cuda(cudaSetDevice(device.device), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
  if (const cublasStatus_t s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS) {
    cudaStreamDestroy(stream_);  // the destructor does not run for a throwing constructor
    throw DeviceFault(std::string("cublasCreate: ") + cublasGetStatusString(s));
  }
}

Runner::~Runner() {
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
}

void Runner::run(const Problem& problem, std::vector<Result>& results) {
  // Every row exists before anything is allocated or run, so a failure
  // leaves the problem's rows in the report ("not run" where it never got to).
  const std::size_t first_row = results.size();
  const int l2_sets = plan_sets(problem, device_.l2_bytes).sets;
  for (const Contender& contender : contenders_) {
    Result& row = results.emplace_back();
    row.problem = problem;
    row.kind = contender.kind;
    row.kernel = contender.name;
    row.status = "not run";
    row.l2_sets = l2_sets;
  }
  const std::span<Result> rows = std::span<Result>(results).subspan(first_row);

  // Out of memory ends this problem only: the buffers allocated so far are
  // freed on the way out and the next problem starts afresh.
  const auto fail_unfinished = [&rows](const std::string& status) {
    for (Result& r : rows) {
      if (r.status != "not run") continue;
      r.status = status;
      r.failed = true;
    }
  };
  try {
    measure(problem, rows);
  } catch (const testing::DeviceAllocError& e) {
    // Any other code than out-of-memory means the context is unusable.
    if (e.error() != cudaErrorMemoryAllocation) throw DeviceFault(e.what());
    fail_unfinished("error: out of memory: cudaMalloc of " + std::to_string(e.bytes()) +
                    " bytes failed");
  } catch (const std::bad_alloc&) {
    // The repeat check copies C to the host twice.
    fail_unfinished("error: out of host memory");
  }
}

void Runner::run_hazard(const Problem& problem, int runs, std::vector<HazardReport>& reports,
                        const HazardProgress& progress) {
  const std::size_t first_report = reports.size();
  for (const Contender& contender : contenders_) {
    HazardReport& report = reports.emplace_back();
    report.problem = problem;
    report.kind = contender.kind;
    report.kernel = contender.name;
  }
  const std::span<HazardReport> rows = std::span<HazardReport>(reports).subspan(first_report);

  const auto fail_unfinished = [&rows](const std::string& status) {
    for (HazardReport& r : rows) {
      if (r.status != "not run" && r.status != "ran") continue;
      r.status = "error: " + status;
      r.failed = true;
    }
  };
  try {
    hazard_runs(problem, runs, rows, progress);
  } catch (const testing::DeviceAllocError& e) {
    if (e.error() != cudaErrorMemoryAllocation) throw DeviceFault(e.what());
    fail_unfinished("out of memory: cudaMalloc of " + std::to_string(e.bytes()) + " bytes failed");
  } catch (const std::bad_alloc&) {
    fail_unfinished("out of host memory");
  }
}

void Runner::hazard_runs(const Problem& problem, int runs, std::span<HazardReport> reports,
                         const HazardProgress& progress) {
  // One buffer set: nothing is timed, so L2 does not matter.
  SetPlan plan = plan_sets(problem, device_.l2_bytes);
  plan.sets = 1;
  OperandSets operands(problem, plan, hazard_seed(options_.seed, 0), stream_);
  const GemmArgs operand_args = operands.args(0, stream_);
  Lineup lineup =
      line_up(contenders_, operand_args, DeviceCaps{device_.compute_capability}, cublas_);
  const GemmWorkspace workspace(lineup.workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  // A report whose launcher is gone has been skipped or has failed.
  std::vector<std::optional<Launcher>>& launchers = lineup.launchers;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (launchers[i]) {
      reports[i].config = describe_contender(contenders_[i], args);
    } else {
      reports[i].status = "skipped: " + lineup.skip_reasons[i];
    }
  }

  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = hazard_seed(options_.seed, run);
    if (run > 0) operands.fill(seed, stream_);
    Verifier verifier(args, operands, stream_, seed);  // this run's reference
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (!launchers[i]) continue;
      Result outcome;  // the Verifier's statuses for a launch that did not run
      outcome.kernel = reports[i].kernel;
      std::optional<Verifier::Checked> checked;
      try {
        checked = verifier.check(*launchers[i], outcome);
      } catch (const DeviceFault&) {
        reports[i].status = outcome.status;
        reports[i].failed = true;
        throw;
      }
      if (!checked) {
        reports[i].status = outcome.status;
        reports[i].failed = outcome.failed;
        launchers[i].reset();
        continue;
      }
      reports[i].status = "ran";
      reports[i].runs.push_back(HazardRun{
          .run = run,
          .seed = seed,
          .rel_err = checked->stats.rel_fro,
          .max_abs = checked->stats.max_abs,
          .nonfinite = checked->stats.nonfinite,
          .rerun_differs = !checked->repeatable,
          .exact_mismatches = checked->exact_mismatches.value_or(-1),
          .exact_binds = contenders_[i].kind != Contender::Kind::kCublas,
      });
    }
    progress(run, reports);
  }
}

void Runner::measure(const Problem& problem, std::span<Result> rows) {
  const OperandSets operands(problem, plan_sets(problem, device_.l2_bytes), options_.seed, stream_);
  const GemmArgs operand_args = operands.args(0, stream_);
  const Lineup lineup =
      line_up(contenders_, operand_args, DeviceCaps{device_.compute_capability}, cublas_);
  const GemmWorkspace workspace(lineup.workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  std::vector<std::pair<std::size_t, Launcher>> candidates;
  for (std::size_t row = 0; row < rows.size(); ++row) {
    if (!lineup.launchers[row]) {
      rows[row].status = "skipped: " + lineup.skip_reasons[row];
      continue;
    }
    // A kernel with a known data race (the registry marks it UNSAFE) can
    // pass one checked run and its repeat by chance: it is not timed as if
    // it were correct. Hazard mode runs it.
    const Contender& contender = contenders_[row];
    if (contender.kind == Contender::Kind::kRegistry &&
        contender.kernel->description.starts_with("UNSAFE")) {
      rows[row].status = "skipped: UNSAFE (a data race); run it with --hazard-runs";
      continue;
    }
    rows[row].config = describe_contender(contender, args);
    candidates.emplace_back(row, *lineup.launchers[row]);
  }

  {
    Verifier verifier(args, operands, stream_, options_.seed);
    for (const auto& [row, launch] : candidates) verifier.verify(launch, rows[row]);
  }  // frees the reference and the copies of C: timing needs the operands and workspace only

  std::vector<std::size_t> timed_rows;
  std::vector<Launcher> timed;
  for (const auto& [row, launch] : candidates) {
    if (rows[row].status != "ok") continue;
    timed_rows.push_back(row);
    timed.push_back(launch);
  }
  const auto record = [](Result& r, const TimingOutcome& outcome) {
    r.timing = outcome.timing;
    if (!outcome.error.empty()) {
      r.status = "error: while timing: " + outcome.error;
      r.failed = true;
    }
  };
  if (!options_.sequential_rest_ms) {
    const std::vector<TimingOutcome> outcomes =
        time_interleaved(timed, operands, workspace, options_.warmup, options_.iters, stream_);
    const std::optional<unsigned> sm_clock = clocks_.read().sm_mhz;
    for (std::size_t i = 0; i < timed_rows.size(); ++i) record(rows[timed_rows[i]], outcomes[i]);
    for (Result& r : rows) r.sm_clock_mhz = sm_clock;
  } else {
    // The diagnostic protocol: each kernel alone, after the GPU has idled;
    // each row is filled as soon as its block ends, so a later fault keeps it.
    for (std::size_t i = 0; i < timed_rows.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(*options_.sequential_rest_ms));
      Result& r = rows[timed_rows[i]];
      record(r, time_interleaved(std::span<const Launcher>(&timed[i], 1), operands, workspace,
                                  options_.warmup, options_.iters, stream_)
                     .front());
      r.sm_clock_mhz = clocks_.read().sm_mhz;
    }
  }
  // cuBLAS is always the last row.
  const std::optional<Timing> cublas_timing = rows.back().timing;
  for (Result& r : rows) {
    if (r.timing && cublas_timing) r.cublas_ms = cublas_timing->median_ms;
  }
}

}  // namespace tcgemm::bench
