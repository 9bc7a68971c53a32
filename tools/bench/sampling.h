// How many launches one timing sample spans, and the median the samples
// are summarized by (tcgemm-bench, tcgemm-tune): plain C++, host-tested.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace tcgemm::bench {

// Launches under ~50 us are batched between one event pair, here until a
// sample lasts about 0.5 ms.
inline constexpr double kShortLaunchMs = 0.05;
inline constexpr double kMinSampleMs = 0.5;
// Bounds the batch when the estimate is near the events' ~0.5 us resolution.
inline constexpr int kMaxLaunchesPerSample = 10000;

// Launches per sample for launchers whose warm-up took `estimate_ms` per
// launch (0: the launcher failed and is not timed). One way of timing for
// all of a problem's launchers: when any of them runs under kShortLaunchMs,
// every one is batched, at least 2 launches a sample and enough for
// kMinSampleMs (at most kMaxLaunchesPerSample); otherwise each sample is one
// launch. Batched samples leave out the gap between launches and let a
// programmatic dependent launch overlap the one before; a single launch has
// neither (a ~45 us kernel read 6-7% slower alone, H200). Decided per
// launcher, jitter around 50 us in the warm-up timed some of a problem's
// candidates (or tcgemm and cuBLAS) one way and some the other.
inline std::vector<int> launches_per_sample(std::span<const double> estimate_ms) {
  // (A launcher that failed its warm-up has no estimate, 0: it is not timed.)
  double shortest = std::numeric_limits<double>::infinity();
  for (const double ms : estimate_ms) {
    if (ms > 0.0) shortest = std::min(shortest, ms);
  }
  std::vector<int> out(estimate_ms.size(), 1);
  if (!(shortest < kShortLaunchMs)) return out;
  for (std::size_t i = 0; i < estimate_ms.size(); ++i) {
    const double ms = estimate_ms[i];
    out[i] = ms * kMaxLaunchesPerSample <= kMinSampleMs
                 ? kMaxLaunchesPerSample
                 : std::clamp(static_cast<int>(std::ceil(kMinSampleMs / ms)), 2,
                              kMaxLaunchesPerSample);
  }
  return out;
}

// The median of `values` (non-empty): the middle one, or the mean of the two
// middle ones.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace tcgemm::bench
