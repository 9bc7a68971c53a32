// Hybrid data-parallel + stream-K work split for persistent workers
// (Osama, Merrill, Cecka, Garland, Owens: "Stream-K: Work-centric Parallel
// Decomposition for Dense Matrix Multiplication on the GPU", PPoPP 2023;
// CUTLASS calls the hybrid "DP + SK").
//
// A persistent grid of W workers (clusters) over U units (output tiles or
// tile pairs) of K iterations (k-tiles) each needs ceil(U / W) rounds when
// every unit is done whole: at 4096^3 in 128 x 256 tile pairs, 256 pairs on
// 66 clusters take 4 rounds of which the last is 58/66 full. Stream-K keeps
// the first R = floor(U / W) rounds whole (data-parallel, round-robin in tile
// order) and splits the last T = U - R * W units' T * K iterations evenly
// over all W workers: worker w takes iterations [T K w / W, T K (w + 1) / W)
// of that range, which cross at most the boundaries of the units it touches.
// A unit split over several workers is finished by the worker holding its
// first k-tile (its "head"): that worker reaches the unit last (the unit's
// head ends its range, the later parts begin the following workers' ranges),
// so the partial sums it adds are written long before it needs them.
//
// Pure integer math, __host__ __device__, unit-tested on the CPU
// (tests/host/test_stream_k.cpp).
#pragma once

#include <cstdint>

#include "sched/tile_order.h"

namespace tcgemm::sched {

// One worker's piece of work: k-tiles [k_begin, k_end) of unit `unit`.
struct StreamKItem {
  // peers == 0: the unit's whole K range; compute it and store C.
  // peers == kPartial: a later part of a split unit; write the partial sum to
  //   the worker's workspace slot and raise its flag (each worker has at most
  //   one such part: only its first piece can start inside a unit).
  // peers > 0: the head of a unit split peers + 1 ways; workers worker + 1 ..
  //   worker + peers hold the rest, and this worker adds their partial sums
  //   (in that order) before it stores C.
  static constexpr std::int32_t kPartial = -1;
  std::int64_t unit = 0;
  std::int32_t k_begin = 0;
  std::int32_t k_end = 0;
  std::int32_t peers = 0;
};

struct StreamKSchedule {
  std::int64_t units = 0;
  std::int64_t workers = 1;
  // Units 0 .. dp_units - 1 (tile order) are done whole: worker w takes w,
  // w + workers, ... The rest are split into sk_iters iterations.
  std::int64_t dp_units = 0;
  std::int64_t sk_iters = 0;
  std::int32_t k_tiles = 1;

  // First stream-K iteration of worker w, 0 <= w <= workers.
  TCGEMM_HOST_DEVICE constexpr std::int64_t sk_begin(std::int64_t w) const {
    return sk_iters * w / workers;
  }
  // The worker whose stream-K range holds iteration i (0 <= i < sk_iters):
  // the largest w with sk_begin(w) <= i.
  TCGEMM_HOST_DEVICE constexpr std::int64_t sk_worker(std::int64_t i) const {
    return ((i + 1) * workers - 1) / sk_iters;
  }

  // Random access to worker w's items, for kernels whose threads each find
  // their own (the cursor below walks them in order): the data-parallel
  // units come first, dp_items(w) of them, unit w + i * workers for item i;
  // then sk_items(w) stream-K pieces, sk_item(w, j) the j-th.
  TCGEMM_HOST_DEVICE constexpr std::int64_t dp_items(std::int64_t w) const {
    return w < dp_units ? (dp_units - w + workers - 1) / workers : 0;
  }
  TCGEMM_HOST_DEVICE constexpr std::int64_t sk_items(std::int64_t w) const {
    const std::int64_t begin = sk_begin(w);
    const std::int64_t end = sk_begin(w + 1);
    return end > begin ? (end - 1) / k_tiles - begin / k_tiles + 1 : 0;
  }
  // 0 <= j < sk_items(w). The same item the cursor yields after its
  // dp_items(w) whole units and j stream-K pieces.
  TCGEMM_HOST_DEVICE constexpr StreamKItem sk_item(std::int64_t w, std::int64_t j) const {
    const std::int64_t begin = sk_begin(w);
    const std::int64_t end = sk_begin(w + 1);
    const std::int64_t unit = begin / k_tiles + j;
    const std::int64_t unit_begin = unit * k_tiles;
    StreamKItem item;
    item.unit = dp_units + unit;
    item.k_begin = j == 0 ? static_cast<std::int32_t>(begin - unit_begin) : 0;
    item.k_end = end - unit_begin < k_tiles ? static_cast<std::int32_t>(end - unit_begin) : k_tiles;
    if (item.k_begin > 0) {
      item.peers = StreamKItem::kPartial;
    } else if (item.k_end == k_tiles) {
      item.peers = 0;
    } else {
      item.peers = static_cast<std::int32_t>(sk_worker(unit_begin + k_tiles - 1) - w);
    }
    return item;
  }
};

// Worker w's work items in order: its data-parallel units (w, w + workers,
// ... below dp_units, each whole), then the pieces of its stream-K range,
// one per unit the range touches. The divisions are done once per worker,
// not per item: the TMA producer thread walks them within its 40 registers.
class StreamKCursor {
 public:
  TCGEMM_HOST_DEVICE constexpr StreamKCursor(const StreamKSchedule& schedule, std::int64_t worker)
      : s_(schedule), worker_(worker), dp_unit_(worker) {}

  // The next item into *item, or false when the worker has no more.
  TCGEMM_HOST_DEVICE constexpr bool next(StreamKItem* item) {
    if (dp_unit_ < s_.dp_units) {
      *item = StreamKItem{dp_unit_, 0, s_.k_tiles, 0};
      dp_unit_ += s_.workers;
      return true;
    }
    if (sk_end_ < 0) {  // entering the worker's stream-K range
      const std::int64_t begin = s_.sk_begin(worker_);
      sk_end_ = s_.sk_begin(worker_ + 1);
      sk_unit_ = begin / s_.k_tiles;
      k_begin_ = static_cast<std::int32_t>(begin - sk_unit_ * s_.k_tiles);
    }
    const std::int64_t unit_begin = sk_unit_ * s_.k_tiles;
    if (unit_begin + k_begin_ >= sk_end_) return false;
    const std::int64_t left = sk_end_ - unit_begin;
    item->unit = s_.dp_units + sk_unit_;
    item->k_begin = k_begin_;
    item->k_end = left < s_.k_tiles ? static_cast<std::int32_t>(left) : s_.k_tiles;
    if (k_begin_ > 0) {
      item->peers = StreamKItem::kPartial;
    } else if (item->k_end == s_.k_tiles) {
      item->peers = 0;
    } else {
      item->peers = static_cast<std::int32_t>(s_.sk_worker(unit_begin + s_.k_tiles - 1) - worker_);
    }
    ++sk_unit_;
    k_begin_ = 0;
    return true;
  }

 private:
  const StreamKSchedule& s_;
  std::int64_t worker_;
  std::int64_t dp_unit_;
  std::int64_t sk_end_ = -1;
  std::int64_t sk_unit_ = 0;
  std::int32_t k_begin_ = 0;
};

// Every unit whole, on the fewest of max_workers workers that keep the round
// count (every worker gets the same number of units, or one less).
constexpr StreamKSchedule data_parallel_schedule(std::int64_t units, std::int32_t k_tiles,
                                                 std::int64_t max_workers) {
  const std::int64_t rounds = ceil_div(units, max_workers);
  StreamKSchedule dp;
  dp.units = units;
  dp.workers = ceil_div(units, rounds);
  dp.dp_units = units;
  dp.sk_iters = 0;
  dp.k_tiles = k_tiles;
  return dp;
}

// The busiest worker's load under a stream-K schedule (sk_iters > 0), in
// iterations, as make_stream_k_schedule weighs it: its whole rounds, plus
// overhead_64ths / 64 of them, its share of the split iterations at
// split_cost_5ths / 5 each, and fixup_iters.
constexpr std::int64_t stream_k_load(const StreamKSchedule& sk, std::int64_t fixup_iters,
                                     std::int64_t overhead_64ths, std::int64_t split_cost_5ths) {
  const std::int64_t whole_rounds = sk.dp_units / sk.workers * sk.k_tiles;
  return whole_rounds + whole_rounds * overhead_64ths / 64 +
         ceil_div(sk.sk_iters, sk.workers) * split_cost_5ths / 5 + fixup_iters;
}

// The schedule for `units` units of k_tiles iterations on at most
// max_workers co-resident workers. Splits the last round when that shortens
// the busiest worker's load, counted in iterations: fixup_iters added for
// the partial-sum traffic, overhead_64ths / 64 of the whole rounds for a
// stream-K kernel's bookkeeping, and each split iteration counted as
// split_cost_5ths / 5 of a whole-round one. Otherwise the fewest workers
// that keep the data-parallel round count (every worker gets the same number
// of units, or one less). Stream-K needs every worker's range non-empty (a
// unit's pieces then belong to consecutive workers), so it is used only when
// the split iterations number at least the workers.
// units >= 1, k_tiles >= 1, max_workers >= 1, fixup_iters, overhead_64ths >=
// 0, split_cost_5ths >= 1.
constexpr StreamKSchedule make_stream_k_schedule(std::int64_t units, std::int32_t k_tiles,
                                                 std::int64_t max_workers, std::int64_t fixup_iters,
                                                 std::int64_t overhead_64ths = 0,
                                                 std::int64_t split_cost_5ths = 5) {
  const std::int64_t rounds = ceil_div(units, max_workers);
  const StreamKSchedule dp = data_parallel_schedule(units, k_tiles, max_workers);

  const std::int64_t tail = units % max_workers;
  if (tail == 0) return dp;
  StreamKSchedule sk;
  sk.units = units;
  sk.workers = max_workers;
  sk.dp_units = units - tail;
  sk.sk_iters = tail * k_tiles;
  sk.k_tiles = k_tiles;
  if (sk.sk_iters < sk.workers) return dp;
  const std::int64_t dp_load = rounds * k_tiles;
  return stream_k_load(sk, fixup_iters, overhead_64ths, split_cost_5ths) < dp_load ? sk : dp;
}

}  // namespace tcgemm::sched
