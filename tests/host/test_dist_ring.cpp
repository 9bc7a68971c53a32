// The ring schedules of the tensor-parallel GEMMs (src/dist/ring.h), run as
// a simulation on the host: every rank's transfers as the schedule posts
// them, checked for what each rank ends with.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "dist/ring.h"

namespace {

using namespace tcgemm::dist;

TEST(DistRing, ModuloAndNeighboursWrapBothWays) {
  EXPECT_EQ(ring_mod(-1, 4), 3);
  EXPECT_EQ(ring_mod(-9, 4), 3);
  EXPECT_EQ(ring_mod(9, 4), 1);
  EXPECT_EQ(ring_next(3, 4), 0);
  EXPECT_EQ(ring_prev(0, 4), 3);
  EXPECT_EQ(ring_next(0, 1), 0);
  EXPECT_EQ(ring_prev(0, 1), 0);
}

TEST(DistRing, AllGatherMultipliesEveryShardOnceStartingWithItsOwn) {
  for (int p = 1; p <= 8; ++p) {
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(gather_shard_at(r, p, 0), r);
      std::set<int> seen;
      for (int s = 0; s < p; ++s) seen.insert(gather_shard_at(r, p, s));
      EXPECT_EQ(static_cast<int>(seen.size()), p) << "p=" << p << " rank " << r;
    }
  }
}

// Each step's receive is the shard the previous rank forwards in the same
// step, and the shard forwarded is one the rank already has.
TEST(DistRing, AllGatherSimulationLeavesEveryShardOnEveryRank) {
  for (int p = 1; p <= 8; ++p) {
    // have[r][shard]: rank r holds shard (its own from the start).
    std::vector<std::vector<bool>> have(p, std::vector<bool>(p, false));
    for (int r = 0; r < p; ++r) have[r][r] = true;
    for (int r = 0; r < p; ++r) ASSERT_TRUE(have[r][gather_shard_at(r, p, 0)]);
    for (int s = 0; s + 1 < p; ++s) {
      std::vector<std::vector<bool>> next = have;
      for (int r = 0; r < p; ++r) {
        const int sent = gather_shard_at(r, p, s);
        ASSERT_TRUE(have[r][sent]) << "p=" << p << " step " << s << " rank " << r;
        const int to = ring_next(r, p);
        EXPECT_EQ(gather_shard_arriving(to, p, s), sent) << "p=" << p << " step " << s;
        EXPECT_FALSE(have[to][sent]) << "a shard arrives twice";
        next[to][sent] = true;
      }
      have = next;
      // What step s + 1 multiplies has arrived by then.
      for (int r = 0; r < p; ++r) EXPECT_TRUE(have[r][gather_shard_at(r, p, s + 1)]);
    }
    for (int r = 0; r < p; ++r) {
      for (int shard = 0; shard < p; ++shard) EXPECT_TRUE(have[r][shard]);
    }
  }
}

// Every rank's partial for block b is a distinct power of two, so a sum
// that misses or repeats a rank's partial shows in its bits.
TEST(DistRing, ReduceScatterSimulationEndsWithEachBlocksSumOnItsRank) {
  for (int p = 1; p <= 8; ++p) {
    const auto partial = [&](int rank, int block) {
      return (std::uint64_t{1} << rank) * static_cast<std::uint64_t>(block + 1);
    };
    std::uint64_t expected_sum_of_ranks = (std::uint64_t{1} << p) - 1;
    std::vector<std::uint64_t> in_flight(p, 0);  // what rank r received last step
    std::vector<std::uint64_t> result(p, 0);
    for (int s = 0; s < p; ++s) {
      std::vector<std::uint64_t> sums(p);
      for (int r = 0; r < p; ++r) {
        const int block = scatter_block_at(r, p, s);
        if (s > 0) {
          // The sum received is of the same block.
          EXPECT_EQ(scatter_block_at(ring_prev(r, p), p, s - 1), block) << "p=" << p;
        }
        sums[r] = partial(r, block) + (s > 0 ? in_flight[r] : 0);
      }
      if (s + 1 < p) {
        for (int r = 0; r < p; ++r) in_flight[ring_next(r, p)] = sums[r];
      } else {
        for (int r = 0; r < p; ++r) {
          EXPECT_EQ(scatter_block_at(r, p, s), r) << "the last block is the rank's own";
          result[r] = sums[r];
        }
      }
    }
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(result[r], expected_sum_of_ranks * static_cast<std::uint64_t>(r + 1))
          << "p=" << p << " rank " << r;
    }
  }
}

TEST(DistRing, ReduceScatterSlotsAlternate) {
  EXPECT_EQ(scatter_slot(0), 0);
  EXPECT_EQ(scatter_slot(1), 1);
  EXPECT_EQ(scatter_slot(2), 0);
}

TEST(DistRing, RowBlockOffsetFollowsTheStorageOrder) {
  EXPECT_EQ(row_block_offset(/*row_major=*/true, 100, 8), 800);
  EXPECT_EQ(row_block_offset(/*row_major=*/false, 100, 8), 8);
}

TEST(DistRing, TensorParallelShapesShardTheRightDimensions) {
  constexpr RankShape ag = column_parallel(16384, 28672, 8192, 4);
  EXPECT_TRUE(ag.divides);
  EXPECT_EQ(ag.m, 4096);
  EXPECT_EQ(ag.n, 7168);
  EXPECT_EQ(ag.k, 8192);
  constexpr RankShape rs = row_parallel(16384, 8192, 28672, 8);
  EXPECT_TRUE(rs.divides);
  EXPECT_EQ(rs.m, 16384);
  EXPECT_EQ(rs.n, 8192);
  EXPECT_EQ(rs.k, 3584);
  EXPECT_FALSE(column_parallel(100, 64, 64, 8).divides);
  EXPECT_FALSE(row_parallel(64, 64, 100, 8).divides);
  EXPECT_FALSE(row_parallel(100, 64, 64, 8).divides);  // C's rows scatter too
}

}  // namespace
