#include "tuner.h"

#include "cuda_check.h"
#include "measure.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tcgemm/registry.h>

#include "kernels/prod/launch.h"
#include "tuned/tuned.h"

namespace tcgemm::tune {
namespace {

using bench::Launcher;

// One way of running the problem: a production-family Choice, or the
// small-M path (its registry kernel: one launch shape, no K split to pick).
struct Candidate {
  std::optional<prod::Choice> choice;  // nullopt: the small-M path
  Launcher launch;

  std::string config() const {
    return choice ? std::string(prod::kConfigs[static_cast<std::size_t>(choice->config)].name)
                  : std::string(tuned::kSkinnyKernel);
  }
  std::string label() const {
    return choice ? config() + " k_splits=" + std::to_string(choice->k_splits) +
                        (choice->split_tail ? " (last wave)" : "") +
                        (choice->flipped ? " (flipped)" : "")
                  : config();
  }
};

Candidate choice_candidate(prod::Choice choice) {
  return {choice, [choice](const GemmArgs& args) {
            return bench::launch_outcome(kernels::prod::launch_choice(args, choice),
                                         /*not_supported_skips=*/false);
          }};
}

// The small-M path, where it applies.
std::optional<Candidate> skinny_candidate(const GemmArgs& args, int compute_capability) {
  if (!skinny_applies(args, compute_capability)) return std::nullopt;
  return Candidate{std::nullopt,
                   [launch = find_kernel(tuned::kSkinnyKernel)->launch](const GemmArgs& a) {
                     return bench::launch_outcome(launch(a), /*not_supported_skips=*/false);
                   }};
}

// The choices run in one orientation (`problem`, canonicalize(args,
// flipped)): all of them, or the `max` of least estimate (in candidates()
// order) and the heuristic's, which is always among them when it is of this
// orientation.
std::vector<prod::Choice> run_list(const prod::Problem& problem, bool flipped,
                                   const prod::DeviceModel& model, prod::Choice heuristic,
                                   int max) {
  std::vector<prod::Choice> all = prod::candidates(problem, model);
  for (prod::Choice& c : all) c.flipped = flipped;
  if (heuristic.flipped == flipped && std::find(all.begin(), all.end(), heuristic) == all.end()) {
    all.push_back(heuristic);
  }
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

bool skinny_applies(const GemmArgs& args, int compute_capability) {
  const KernelInfo* kernel = find_kernel(tuned::kSkinnyKernel);
  return kernel != nullptr &&
         check_constraints(kernel->constraints, args, DeviceCaps{compute_capability}).empty();
}

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
  const prod::Choice select = prod::select(operand_args, model_);
  // The candidates: the family's choices in both orientations (the one C's
  // layout gives, then the flipped one), then the small-M path where it
  // applies. The "heuristic" is what the dispatcher runs without a table
  // entry: the small-M path where it applies, else prod::select's choice.
  std::vector<Candidate> candidates;
  for (const bool flipped : {false, true}) {
    const prod::Problem oriented = prod::canonicalize(operand_args, flipped);
    for (const prod::Choice& c :
         run_list(oriented, flipped, model_, select, method.max_candidates)) {
      candidates.push_back(choice_candidate(c));
    }
  }
  std::size_t heuristic = static_cast<std::size_t>(
      std::find_if(candidates.begin(), candidates.end(),
                   [&](const Candidate& c) { return c.choice == select; }) -
      candidates.begin());
  if (std::optional<Candidate> skinny =
          skinny_candidate(operand_args, device_.compute_capability)) {
    heuristic = candidates.size();
    candidates.push_back(std::move(*skinny));
  }

  std::size_t workspace_bytes = 0;
  for (const Candidate& c : candidates) {
    if (c.choice) {
      workspace_bytes =
          std::max(workspace_bytes, kernels::prod::workspace_choice(operand_args, *c.choice));
    }
  }
  const bench::GemmWorkspace workspace(workspace_bytes, stream_);
  const GemmArgs args = workspace.attach(operand_args);

  TunedShape shape;
  shape.key = key_of(problem);
  shape.l2_sets = operands.sets();
  shape.timed_at = utc_now();

  // Each candidate checked once (no repeat run: the bench checks that).
  std::vector<bench::Result> checks(candidates.size());
  {
    progress("reference GEMM");
    bench::Verifier verifier(args, operands, stream_, options_.seed);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      progress("verify " + std::to_string(i + 1) + "/" + std::to_string(candidates.size()));
      checks[i].kernel = candidates[i].label();
      verifier.verify(candidates[i].launch, checks[i], /*repeat=*/false);
    }
  }  // frees the reference: timing needs the operands and the workspace only

  std::vector<std::size_t> timed;
  std::vector<Launcher> launchers;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (checks[i].status != "ok") continue;
    timed.push_back(i);
    launchers.push_back(candidates[i].launch);
  }
  std::vector<bench::TimingOutcome> outcomes;
  shape.reps = method.reps;
  if (!launchers.empty()) {
    // One launch of the heuristic's choice (or the first verified) sizes the
    // sample count: long problems take fewer samples.
    const std::size_t probe_index = checks[heuristic].status == "ok" ? heuristic : timed.front();
    progress("estimate");
    const Launcher& probe = candidates[probe_index].launch;
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
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    CandidateTiming c;
    c.measured.config = candidates[i].config();
    c.measured.k_splits = candidates[i].choice ? candidates[i].choice->k_splits : 1;
    c.measured.split_tail = candidates[i].choice && candidates[i].choice->split_tail;
    c.measured.flipped = candidates[i].choice && candidates[i].choice->flipped;
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
    if (i == heuristic) shape.heuristic = c.measured;
    shape.candidates.push_back(std::move(c));
  }
  return shape;
}

}  // namespace tcgemm::tune
