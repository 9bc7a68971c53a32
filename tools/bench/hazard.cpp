#include "hazard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace tcgemm::bench {
namespace {

// Each seed feeds A, B and C (seed, seed + 1, seed + 2).
constexpr std::uint64_t kStreamsPerRun = 3;

// Ascending, with NaN above +inf: a NaN error is the worst there is.
bool less_error(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  const int length = std::snprintf(nullptr, 0, fmt, args...);
  std::string text(static_cast<std::size_t>(std::max(length, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), fmt, args...);
  text.pop_back();  // snprintf's terminating NUL
  return text;
}

}  // namespace

std::uint64_t hazard_seed(std::uint64_t base, int run) {
  return base + kStreamsPerRun * static_cast<std::uint64_t>(run);
}

bool is_wrong(const HazardRun& run, double tolerance) {
  return run.nonfinite > 0 || !(run.rel_err < tolerance) ||
         (run.exact_binds && run.exact_mismatches > 0);
}

HazardSummary summarize_hazard(std::span<const HazardRun> runs, double tolerance) {
  HazardSummary s;
  s.runs = static_cast<int>(runs.size());
  if (runs.empty()) return s;
  std::vector<double> errors;
  errors.reserve(runs.size());
  const HazardRun* worst = &runs.front();
  for (const HazardRun& run : runs) {
    if (is_wrong(run, tolerance)) {
      ++s.wrong;
      if (run.nonfinite > 0) {
        ++s.wrong_nonfinite;
      } else if (!(run.rel_err < tolerance)) {
        ++s.wrong_rel_err;
      } else {
        ++s.wrong_exact;
      }
    }
    if (run.rerun_differs) ++s.rerun_differed;
    if (less_error(worst->rel_err, run.rel_err)) worst = &run;
    if (less_error(s.worst_max_abs, run.max_abs)) s.worst_max_abs = run.max_abs;
    errors.push_back(run.rel_err);
  }
  s.worst_rel_err = worst->rel_err;
  s.worst_seed = worst->seed;
  std::sort(errors.begin(), errors.end(), less_error);
  const std::size_t mid = errors.size() / 2;
  s.median_rel_err = errors.size() % 2 == 1 ? errors[mid] : 0.5 * (errors[mid - 1] + errors[mid]);
  return s;
}

std::string hazard_table_header() {
  return format("%-14s %4s  %-20s  %8s  %9s  %9s  %9s  %-9s  %s", "kernel", "run", "seed",
                "rel_err", "max_abs", "nonfinite", "inexact", "re-run", "verdict");
}

std::string format_hazard_run(const std::string& kernel, const HazardRun& run, double tolerance) {
  const std::string inexact =
      run.exact_mismatches < 0 ? "-" : std::to_string(run.exact_mismatches);
  return format("%-14s %4d  %-20llu  %8.2e  %9.3g  %9lld  %9s  %-9s  %s", kernel.c_str(),
                run.run + 1, static_cast<unsigned long long>(run.seed), run.rel_err, run.max_abs,
                static_cast<long long>(run.nonfinite), inexact.c_str(),
                run.rerun_differs ? "differs" : "identical", is_wrong(run, tolerance) ? "WRONG" : "ok");
}

std::string format_hazard_summary(const std::string& kernel, const HazardSummary& s,
                                  double tolerance) {
  if (s.runs == 0) return kernel + ": no runs";
  return format(
      "%s: %d runs on fresh inputs, %d wrong (%d with non-finite elements, %d with rel_err >= "
      "%.0e, %d inexact on small integers), %d differed from an immediate re-run on the same "
      "inputs; rel_err median %.2e, worst %.2e (seed %llu); max_abs worst %.3g",
      kernel.c_str(), s.runs, s.wrong, s.wrong_nonfinite, s.wrong_rel_err, tolerance, s.wrong_exact,
      s.rerun_differed, s.median_rel_err, s.worst_rel_err,
      static_cast<unsigned long long>(s.worst_seed), s.worst_max_abs);
}

}  // namespace tcgemm::bench
