#include "tuner.h"

#include "cuda_check.h"
#include "measure.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/prod/launch.h"

namespace tcgemm::tune {
namespace {

using bench::Launcher;

Launcher choice_launcher(prod::Choice choice) {
  return [choice](const GemmArgs& args) {
    return bench::launch_outcome(kernels::prod::launch_choice(args, choice),
                                 /*not_supported_skips=*/false);
  };
}

std::string_view config_name(const prod::Choice& c) {
  return prod::kConfigs[static_cast<std::size_t>(c.config)].name;
}

std::string choice_label(const prod::Choice& c) {
  return std::string(config_name(c)) + " k_splits=" + std::to_string(c.k_splits) +
         (c.split_tail ? " (last wave)" : "");
}

// The candidates run: all of them, or the `max` of least estimate (in
// candidates() order) and the heuristic's, which is always among them.
std::vector<prod::Choice> run_list(const prod::Problem& problem, const prod::DeviceModel& model,
                                   prod::Choice heuristic, int max) {
  std::vector<prod::Choice> all = prod::candidates(problem, model);
  if (std::find(all.begin(), all.end(), heuristic) == all.end()) all.push_back(heuristic);
  if (max <= 0 || static_cast<int>(all.size()) <= max) return all;
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < all.size(); ++i) {
    ranked.emplace_back(prod::estimate_cycles(problem, model, all[i]), i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<bool> keep(all.size(), false);
  for (int i = 0; i < max; ++i) keep[ranked[static_cast<std::size_t>(i)].second] = true;
  std::vector<prod::Choice> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (keep[i] || all[i] == heuristic) out.push_back(all[i]);
  }
  return out;
}

}  // namespace

Tuner::Tuner(const bench::DeviceInfo& device, TuneOptions options)
    : device_(device), options_(std::move(options)) {
  bench::check_cuda(cudaSetDevice(device.device), "cudaSetDevice");
  if (const Status s = kernels::prod::device_model(&model_); !s.ok()) {
    throw bench::DeviceFault("device_model: " + s.message);
  }
  bench::check_cuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
}

Tuner::~Tuner() { cudaStreamDestroy(stream_); }

TunedShape Tuner::tune(const bench::Problem& problem, const TuneProgress& progress) {
  const Method& method = options_.method;
  progress("allocate and fill");
  const bench::OperandSets operands(problem, bench::plan_sets(problem, device_.l2_bytes),
                                    options_.seed, stream_);
  const GemmArgs operand_args = operands.args(0, stream_);
  const prod::Problem canonical = prod::canonicalize(operand_args);
  const prod::Choice heuristic = prod::select(canonical, model_);
  const std::vector<prod::Choice> choices =
      run_list(canonical, model_, heuristic, method.max_candidates);

  std::size_t workspace_bytes = 0;
  for (const prod::Choice& c : choices) {
    workspace_bytes = std::max(workspace_bytes, kernels::prod::workspace_choice(operand_args, c));
  }
  const bench::GemmWorkspace workspace(workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  TunedShape shape;
  shape.key = key_of(problem);
  shape.l2_sets = operands.sets();
  shape.timed_at = utc_now();

  // Each candidate checked once (no repeat run: the bench checks that).
  std::vector<bench::Result> checks(choices.size());
  {
    progress("reference GEMM");
    bench::Verifier verifier(args, operands.c_bytes(), stream_);
    for (std::size_t i = 0; i < choices.size(); ++i) {
      progress("verify " + std::to_string(i + 1) + "/" + std::to_string(choices.size()));
      checks[i].kernel = choice_label(choices[i]);
      verifier.verify(choice_launcher(choices[i]), checks[i], /*repeat=*/false);
    }
  }  // frees the reference: timing needs the operands and the workspace only

  std::vector<std::size_t> timed;
  std::vector<Launcher> launchers;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (checks[i].status != "ok") continue;
    timed.push_back(i);
    launchers.push_back(choice_launcher(choices[i]));
  }
  std::vector<bench::TimingOutcome> outcomes;
  shape.reps = method.reps;
  if (!launchers.empty()) {
    // One launch of the heuristic's choice (or the first verified) sizes the
    // sample count: long problems take fewer samples.
    const auto heuristic_at = std::find(choices.begin(), choices.end(), heuristic);
    const std::size_t probe_index =
        heuristic_at != choices.end() &&
                checks[static_cast<std::size_t>(heuristic_at - choices.begin())].status == "ok"
            ? static_cast<std::size_t>(heuristic_at - choices.begin())
            : timed.front();
    progress("estimate");
    const Launcher probe = choice_launcher(choices[probe_index]);
    const std::vector<bench::TimingOutcome> estimate = bench::time_interleaved(
        std::span<const Launcher>(&probe, 1), operands, workspace, 1, 1, stream_);
    if (estimate.front().timing && estimate.front().timing->median_ms > method.long_ms) {
      shape.reps = method.long_reps;
    }
    progress("time " + std::to_string(launchers.size()) + " candidates x " +
             std::to_string(shape.reps));
    outcomes =
        bench::time_interleaved(launchers, operands, workspace, method.warmup, shape.reps, stream_);
  }

  double best_ms = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    CandidateTiming c;
    c.measured.config = std::string(config_name(choices[i]));
    c.measured.k_splits = choices[i].k_splits;
    c.measured.split_tail = choices[i].split_tail;
    c.measured.status = checks[i].status;
    if (checks[i].error) c.rel_err = checks[i].error->rel_fro;
    const auto at = std::find(timed.begin(), timed.end(), i);
    if (at != timed.end()) {
      const bench::TimingOutcome& outcome = outcomes[static_cast<std::size_t>(at - timed.begin())];
      if (!outcome.error.empty()) {
        c.measured.status = "error: while timing: " + outcome.error;
      } else if (outcome.timing) {
        c.measured.ms = outcome.timing->median_ms;
        c.min_ms = outcome.timing->min_ms;
        c.max_ms = outcome.timing->max_ms;
        c.launches_per_sample = outcome.timing->launches_per_sample;
      }
    }
    if (c.measured.ms && *c.measured.ms < best_ms) {
      best_ms = *c.measured.ms;
      shape.tuned = c.measured;
    }
    if (choices[i] == heuristic) shape.heuristic = c.measured;
    shape.candidates.push_back(std::move(c));
  }
  return shape;
}

}  // namespace tcgemm::tune
