// The stream-K schedule (src/sched/stream_k.h): every iteration of every
// unit done exactly once, and the fixup protocol's assumptions (one partial
// per worker, written before the worker waits on anyone; a head's peers are
// exactly the workers holding the rest of its unit) proven on many grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "sched/stream_k.h"

namespace {

using tcgemm::sched::make_stream_k_schedule;
using tcgemm::sched::StreamKItem;
using tcgemm::sched::StreamKSchedule;

struct Case {
  std::int64_t units;
  std::int32_t k_tiles;
  std::int64_t max_workers;
  std::int64_t fixup_iters;
};

// Worker w's items as the kernel's producer walks them.
std::vector<StreamKItem> cursor_items(const StreamKSchedule& s, std::int64_t w) {
  std::vector<StreamKItem> items;
  tcgemm::sched::StreamKCursor cursor(s, w);
  for (StreamKItem it; cursor.next(&it);) items.push_back(it);
  return items;
}

// Worker w's whole (data-parallel) units.
std::int64_t dp_items(const StreamKSchedule& s, std::int64_t w) {
  std::int64_t n = 0;
  for (std::int64_t u = w; u < s.dp_units; u += s.workers) ++n;
  return n;
}

// The same items found the slow way, independently of the cursor's
// arithmetic: the worker's stream-K iterations one at a time, grouped by
// unit, and a head's peers counted as the other workers whose ranges touch
// its unit.
std::vector<StreamKItem> reference_items(const StreamKSchedule& s, std::int64_t w) {
  std::vector<StreamKItem> items;
  for (std::int64_t u = w; u < s.dp_units; u += s.workers) items.push_back({u, 0, s.k_tiles, 0});
  const std::int64_t k = s.k_tiles;
  for (std::int64_t i = s.sk_begin(w); i < s.sk_begin(w + 1); ++i) {
    const std::int64_t unit = s.dp_units + i / k;
    const auto kt = static_cast<std::int32_t>(i % k);
    if (items.empty() || items.back().unit != unit || items.back().k_end != kt) {
      items.push_back({unit, kt, kt, 0});
    }
    ++items.back().k_end;
  }
  for (StreamKItem& it : items) {
    if (it.unit < s.dp_units) continue;
    if (it.k_begin > 0) {
      it.peers = StreamKItem::kPartial;
      continue;
    }
    const std::int64_t first = (it.unit - s.dp_units) * k;
    for (std::int64_t other = 0; other < s.workers; ++other) {
      if (other != w && s.sk_begin(other) < first + k && s.sk_begin(other + 1) > first &&
          s.sk_begin(other) < s.sk_begin(other + 1)) {
        ++it.peers;
      }
    }
  }
  return items;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (std::int64_t units : {1, 2, 5, 63, 64, 65, 66, 67, 131, 132, 133, 198, 256, 1024, 1031}) {
    for (std::int32_t k_tiles : {1, 2, 3, 7, 32, 64, 128, 200}) {
      for (std::int64_t workers : {1, 2, 3, 64, 66, 132}) {
        for (std::int64_t fixup : {0, 4}) out.push_back({units, k_tiles, workers, fixup});
      }
    }
  }
  return out;
}

TEST(StreamK, CoversEveryIterationOnceWithAValidFixupProtocol) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(::testing::Message()
                 << "units " << c.units << " k_tiles " << c.k_tiles << " max_workers "
                 << c.max_workers << " fixup " << c.fixup_iters);
    const StreamKSchedule s =
        make_stream_k_schedule(c.units, c.k_tiles, c.max_workers, c.fixup_iters);
    ASSERT_GE(s.workers, 1);
    ASSERT_LE(s.workers, c.max_workers);
    // covered[unit][k]: how many items hold that k-tile.
    std::vector<std::vector<int>> covered(c.units, std::vector<int>(c.k_tiles, 0));
    // For each split unit: its head's worker and peer count, and the workers
    // holding partial pieces of it.
    std::map<std::int64_t, std::pair<std::int64_t, std::int32_t>> heads;
    std::map<std::int64_t, std::vector<std::int64_t>> partials;
    for (std::int64_t w = 0; w < s.workers; ++w) {
      int partial_count = 0;
      const std::vector<StreamKItem> items = cursor_items(s, w);
      for (std::size_t i = 0; i < items.size(); ++i) {
        const StreamKItem it = items[i];
        ASSERT_GE(it.unit, 0);
        ASSERT_LT(it.unit, c.units);
        ASSERT_GE(it.k_begin, 0);
        ASSERT_LT(it.k_begin, it.k_end);
        ASSERT_LE(it.k_end, c.k_tiles);
        for (std::int32_t k = it.k_begin; k < it.k_end; ++k) ++covered[it.unit][k];
        if (it.peers == StreamKItem::kPartial) {
          // The partial is the worker's first piece past its whole units, so
          // the worker writes it before it can wait on any other worker.
          EXPECT_EQ(static_cast<std::int64_t>(i), dp_items(s, w));
          ++partial_count;
          partials[it.unit].push_back(w);
        } else if (it.peers > 0) {
          EXPECT_EQ(it.k_begin, 0);
          EXPECT_LT(it.k_end, c.k_tiles);
          heads[it.unit] = {w, it.peers};
        } else {
          EXPECT_EQ(it.peers, 0);
          EXPECT_EQ(it.k_begin, 0);
          EXPECT_EQ(it.k_end, c.k_tiles);
        }
      }
      EXPECT_LE(partial_count, 1) << "worker " << w;
    }
    for (std::int64_t u = 0; u < c.units; ++u) {
      for (std::int32_t k = 0; k < c.k_tiles; ++k) {
        ASSERT_EQ(covered[u][k], 1) << "unit " << u << " k-tile " << k;
      }
    }
    // Every split unit has one head, whose peers are exactly the following
    // workers, each holding a partial of it.
    for (const auto& [unit, workers] : partials) {
      ASSERT_TRUE(heads.count(unit)) << "unit " << unit << " has partials and no head";
      const auto [head, peers] = heads.at(unit);
      ASSERT_EQ(static_cast<std::int64_t>(workers.size()), peers);
      for (std::int32_t p = 0; p < peers; ++p) EXPECT_EQ(workers[p], head + 1 + p);
    }
    for (const auto& [unit, head] : heads) EXPECT_TRUE(partials.count(unit)) << "unit " << unit;
  }
}

// The cursor the producer walks yields exactly what a brute-force walk of
// the worker's iterations finds.
TEST(StreamK, CursorMatchesABruteForceWalk) {
  for (const Case& c : cases()) {
    const StreamKSchedule s =
        make_stream_k_schedule(c.units, c.k_tiles, c.max_workers, c.fixup_iters);
    for (std::int64_t w = 0; w < s.workers; ++w) {
      const std::vector<StreamKItem> got = cursor_items(s, w);
      const std::vector<StreamKItem> want = reference_items(s, w);
      ASSERT_EQ(got.size(), want.size())
          << "units " << c.units << " k_tiles " << c.k_tiles << " worker " << w;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].unit, want[i].unit);
        EXPECT_EQ(got[i].k_begin, want[i].k_begin);
        EXPECT_EQ(got[i].k_end, want[i].k_end);
        EXPECT_EQ(got[i].peers, want[i].peers);
      }
    }
  }
}

// The random access the production kernel's threads use (dp_items,
// sk_items, sk_item) finds the cursor's items.
TEST(StreamK, RandomAccessMatchesTheCursor) {
  for (const Case& c : cases()) {
    const StreamKSchedule s =
        make_stream_k_schedule(c.units, c.k_tiles, c.max_workers, c.fixup_iters);
    for (std::int64_t w = 0; w < s.workers; ++w) {
      const std::vector<StreamKItem> want = cursor_items(s, w);
      const std::int64_t dp = s.dp_items(w);
      ASSERT_EQ(dp, dp_items(s, w)) << "units " << c.units << " worker " << w;
      ASSERT_EQ(static_cast<std::int64_t>(want.size()), dp + s.sk_items(w))
          << "units " << c.units << " k_tiles " << c.k_tiles << " worker " << w;
      for (std::int64_t j = 0; j < s.sk_items(w); ++j) {
        const StreamKItem got = s.sk_item(w, j);
        const StreamKItem& expected = want[static_cast<std::size_t>(dp + j)];
        EXPECT_EQ(got.unit, expected.unit);
        EXPECT_EQ(got.k_begin, expected.k_begin);
        EXPECT_EQ(got.k_end, expected.k_end);
        EXPECT_EQ(got.peers, expected.peers);
      }
    }
  }
}

// The busiest worker never has more iterations (plus the fixup estimate, for
// a worker in the split round) than a data-parallel grid's.
TEST(StreamK, NeverLoadsAWorkerMoreThanDataParallel) {
  for (const Case& c : cases()) {
    const StreamKSchedule s =
        make_stream_k_schedule(c.units, c.k_tiles, c.max_workers, c.fixup_iters);
    const std::int64_t dp_load =
        tcgemm::sched::ceil_div(c.units, c.max_workers) * std::int64_t{c.k_tiles};
    for (std::int64_t w = 0; w < s.workers; ++w) {
      std::int64_t load = 0;
      for (const StreamKItem& it : cursor_items(s, w)) load += it.k_end - it.k_begin;
      if (s.sk_iters > 0) load += c.fixup_iters;
      EXPECT_LE(load, dp_load) << "units " << c.units << " k_tiles " << c.k_tiles << " workers "
                               << c.max_workers << " worker " << w;
    }
  }
}

// The headline problem: 4096^3 in 128 x 256 tile pairs is 256 pairs of 64
// k-tiles on 66 clusters: 3 whole rounds (198 pairs), then 58 pairs split
// into 3712 iterations, 56 or 57 per cluster, instead of a fourth round of 64.
TEST(StreamK, SplitsTheLastRoundOfThe4096Problem) {
  const StreamKSchedule s = make_stream_k_schedule(256, 64, 66, 4);
  EXPECT_EQ(s.workers, 66);
  EXPECT_EQ(s.dp_units, 198);
  EXPECT_EQ(s.sk_iters, 58 * 64);
  for (std::int64_t w = 0; w < s.workers; ++w) {
    const std::int64_t range = s.sk_begin(w + 1) - s.sk_begin(w);
    EXPECT_TRUE(range == 56 || range == 57) << "worker " << w << ": " << range;
  }
}

// A full last round (or too few iterations to split) stays data-parallel, on
// the fewest workers that keep the round count.
TEST(StreamK, KeepsWholeRoundsDataParallel) {
  const StreamKSchedule full = make_stream_k_schedule(264, 64, 66, 4);
  EXPECT_EQ(full.sk_iters, 0);
  EXPECT_EQ(full.dp_units, 264);
  EXPECT_EQ(full.workers, 66);
  // 64 pairs on 66 clusters: one round either way.
  const StreamKSchedule small = make_stream_k_schedule(64, 32, 66, 4);
  EXPECT_EQ(small.sk_iters, 0);
  EXPECT_EQ(small.workers, 64);
  // With the costs measured on the H200 (16 k-tiles of fixup, 1/64 on the
  // whole rounds, split k-tiles at 6/5; kernels/hopper/tma_store_kernel.cuh),
  // in 128 x 256 tile pairs on 66 clusters: the problems where splitting lost
  // stay data-parallel (4096^3, 4096 x 14336 x 4096, 4096 x 4096 x 14336,
  // 1024 x 8192 x 28672, 512 x 14336 x 4096), those where it won split
  // (8192^3, 16 x 4096 x 14336, 512 x 28672 x 8192, 16384 x 4096 x 14336).
  auto splits = [](std::int64_t units, std::int32_t k_tiles) {
    return make_stream_k_schedule(units, k_tiles, 66, 16, 1, 6).sk_iters > 0;
  };
  EXPECT_FALSE(splits(256, 64));
  EXPECT_FALSE(splits(896, 64));
  EXPECT_FALSE(splits(256, 224));
  EXPECT_FALSE(splits(128, 448));
  EXPECT_FALSE(splits(112, 64));
  EXPECT_TRUE(splits(1024, 128));
  EXPECT_TRUE(splits(16, 224));
  EXPECT_TRUE(splits(224, 128));
  EXPECT_TRUE(splits(1024, 224));
  EXPECT_EQ(make_stream_k_schedule(1024, 128, 66, 16, 1, 6).dp_units, 15 * 66);
  // 2 k-tiles: a split tail cannot beat one more round once fixup is counted.
  const StreamKSchedule short_k = make_stream_k_schedule(100, 2, 66, 4);
  EXPECT_EQ(short_k.sk_iters, 0);
  EXPECT_EQ(short_k.workers, 50);
}

}  // namespace
