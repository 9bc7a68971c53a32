// Tile orders (src/sched/tile_order.h): pure integer math shared by host and
// device code, so its guarantees are proven here on the CPU.
#include "sched/hilbert.h"
#include "sched/tile_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

using tcgemm::sched::ceil_div;
using tcgemm::sched::grouped_tile;
using tcgemm::sched::TileCoord;

struct GridCase {
  std::int64_t tiles_m;
  std::int64_t tiles_n;
  std::int64_t group_m;
};

// Shapes that stress the edges: exact multiples of group_m, a short last
// group, group_m = 1, group_m larger than the grid, single rows and columns,
// and a grid the size of a 4096^2 GEMM in 128x256 tiles on 132 SMs.
std::vector<GridCase> grid_cases() {
  std::vector<GridCase> cases;
  for (std::int64_t tiles_m : {1, 2, 3, 7, 8, 16, 17, 32, 33}) {
    for (std::int64_t tiles_n : {1, 2, 5, 8, 13, 16}) {
      for (std::int64_t group_m : {1, 2, 3, 4, 8, 16, 64}) {
        cases.push_back({tiles_m, tiles_n, group_m});
      }
    }
  }
  cases.push_back({32, 16, 8});
  cases.push_back({64, 32, 16});
  cases.push_back({129, 67, 8});
  return cases;
}

TEST(CeilDiv, RoundsUpAndIsExactOnMultiples) {
  EXPECT_EQ(ceil_div(0, 128), 0);
  EXPECT_EQ(ceil_div(1, 128), 1);
  EXPECT_EQ(ceil_div(127, 128), 1);
  EXPECT_EQ(ceil_div(128, 128), 1);
  EXPECT_EQ(ceil_div(129, 128), 2);
  EXPECT_EQ(ceil_div(4096, 128), 32);
  EXPECT_EQ(ceil_div(4097, 256), 17);
  EXPECT_EQ(ceil_div(7, 1), 7);
}

TEST(CeilDiv, Handles64BitSizes) {
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_EQ(ceil_div(big, 128), big / 128);
  EXPECT_EQ(ceil_div(big + 1, 128), big / 128 + 1);
}

TEST(CeilDiv, IsUsableInConstantExpressions) {
  static_assert(ceil_div(4095, 64) == 64);
  static_assert(grouped_tile(0, 4, 4, 2).m == 0 && grouped_tile(0, 4, 4, 2).n == 0);
  SUCCEED();
}

TEST(GroupedTile, VisitsEveryTileOnce) {
  for (const GridCase& g : grid_cases()) {
    SCOPED_TRACE(::testing::Message() << "tiles_m=" << g.tiles_m << " tiles_n=" << g.tiles_n
                                    << " group_m=" << g.group_m);
    std::vector<int> visits(static_cast<std::size_t>(g.tiles_m * g.tiles_n), 0);
    for (std::int64_t linear = 0; linear < g.tiles_m * g.tiles_n; ++linear) {
      const TileCoord t = grouped_tile(linear, g.tiles_m, g.tiles_n, g.group_m);
      ASSERT_GE(t.m, 0) << "linear=" << linear;
      ASSERT_LT(t.m, g.tiles_m) << "linear=" << linear;
      ASSERT_GE(t.n, 0) << "linear=" << linear;
      ASSERT_LT(t.n, g.tiles_n) << "linear=" << linear;
      ++visits[static_cast<std::size_t>(t.m * g.tiles_n + t.n)];
    }
    for (std::size_t i = 0; i < visits.size(); ++i) {
      ASSERT_EQ(visits[i], 1) << "tile (" << static_cast<std::int64_t>(i) / g.tiles_n << ", "
                              << static_cast<std::int64_t>(i) % g.tiles_n << ")";
    }
  }
}

TEST(GroupedTile, ConsecutiveIndicesInAGroupStayWithinGroupMTileRows) {
  for (const GridCase& g : grid_cases()) {
    SCOPED_TRACE(::testing::Message() << "tiles_m=" << g.tiles_m << " tiles_n=" << g.tiles_n
                                    << " group_m=" << g.group_m);
    const std::int64_t per_group = g.group_m * g.tiles_n;
    for (std::int64_t linear = 0; linear < g.tiles_m * g.tiles_n; ++linear) {
      const std::int64_t group = linear / per_group;
      const TileCoord t = grouped_tile(linear, g.tiles_m, g.tiles_n, g.group_m);
      // Work item `linear` belongs to group `group`, whose tile-rows are
      // [group * group_m, group * group_m + group_m).
      ASSERT_GE(t.m, group * g.group_m) << "linear=" << linear;
      ASSERT_LT(t.m, (group + 1) * g.group_m) << "linear=" << linear;
    }
  }
}

TEST(GroupedTile, WalksDownTheGroupBeforeMovingToTheNextColumn) {
  // 8 x 4 tiles in groups of 4 rows: the first 4 indices are column 0 of rows
  // 0..3, the next 4 are column 1 of the same rows.
  for (std::int64_t linear = 0; linear < 16; ++linear) {
    const TileCoord t = grouped_tile(linear, 8, 4, 4);
    EXPECT_EQ(t.m, linear % 4) << "linear=" << linear;
    EXPECT_EQ(t.n, linear / 4) << "linear=" << linear;
  }
  // Second group starts at tile-row 4.
  EXPECT_EQ(grouped_tile(16, 8, 4, 4).m, 4);
  EXPECT_EQ(grouped_tile(16, 8, 4, 4).n, 0);
}

TEST(GroupedTile, ShortLastGroupStaysInsideTheGrid) {
  // tiles_m = 5 with group_m = 4: the last group holds one tile-row, and its
  // work items walk along that row.
  const std::int64_t tiles_m = 5, tiles_n = 3, group_m = 4;
  for (std::int64_t n = 0; n < tiles_n; ++n) {
    const TileCoord t = grouped_tile(group_m * tiles_n + n, tiles_m, tiles_n, group_m);
    EXPECT_EQ(t.m, 4);
    EXPECT_EQ(t.n, n);
  }
}

TEST(GroupedTile, GroupOfOneIsRowMajorOverTiles) {
  const std::int64_t tiles_m = 6, tiles_n = 7;
  for (std::int64_t linear = 0; linear < tiles_m * tiles_n; ++linear) {
    const TileCoord t = grouped_tile(linear, tiles_m, tiles_n, 1);
    EXPECT_EQ(t.m, linear / tiles_n) << "linear=" << linear;
    EXPECT_EQ(t.n, linear % tiles_n) << "linear=" << linear;
  }
}

TEST(GroupedTile, GroupLargerThanGridIsColumnMajorOverTiles) {
  const std::int64_t tiles_m = 5, tiles_n = 4;
  for (std::int64_t linear = 0; linear < tiles_m * tiles_n; ++linear) {
    const TileCoord t = grouped_tile(linear, tiles_m, tiles_n, 64);
    EXPECT_EQ(t.m, linear % tiles_m) << "linear=" << linear;
    EXPECT_EQ(t.n, linear / tiles_m) << "linear=" << linear;
  }
}

}  // namespace

// ---- Hilbert order and the clustered persistent schedule ---------------------

namespace {

using tcgemm::sched::cluster_member_tile;
using tcgemm::sched::hilbert_tile;

TEST(HilbertTile, VisitsEveryCellOnceOnAnyRectangle) {
  for (std::int32_t height = 1; height <= 40; ++height) {
    for (std::int32_t width = 1; width <= 40; ++width) {
      std::vector<int> seen(static_cast<std::size_t>(height * width), 0);
      for (std::int32_t i = 0; i < height * width; ++i) {
        const TileCoord t = hilbert_tile(i, height, width);
        ASSERT_GE(t.m, 0);
        ASSERT_LT(t.m, height);
        ASSERT_GE(t.n, 0);
        ASSERT_LT(t.n, width);
        ++seen[static_cast<std::size_t>(t.m * width + t.n)];
      }
      for (int count : seen) ASSERT_EQ(count, 1) << height << " x " << width;
    }
  }
}

TEST(HilbertTile, EveryStepMovesToANeighbouringCell) {
  for (std::int32_t height : {1, 2, 3, 5, 8, 16, 17, 32, 64, 100}) {
    for (std::int32_t width : {1, 2, 7, 8, 16, 31, 32, 33, 64}) {
      TileCoord previous = hilbert_tile(0, height, width);
      for (std::int32_t i = 1; i < height * width; ++i) {
        const TileCoord t = hilbert_tile(i, height, width);
        EXPECT_LE(std::max(std::abs(t.m - previous.m), std::abs(t.n - previous.n)), 1)
            << height << " x " << width << " step " << i;
        previous = t;
      }
    }
  }
}

// The generalized Hilbert curve as its recursive construction generates it,
// cell after cell (J. Cervený's gilbert2d, written from its description):
// an independent reference for hilbert_tile's index -> cell walk.
void gilbert(std::int32_t x, std::int32_t y, std::int32_t ax, std::int32_t ay, std::int32_t bx,
             std::int32_t by, std::vector<TileCoord>& out) {
  const auto sgn = [](std::int32_t v) { return (v > 0) - (v < 0); };
  // Floor division by 2 for either sign.
  const auto half = [](std::int32_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  const std::int32_t w = std::abs(ax + ay);
  const std::int32_t h = std::abs(bx + by);
  const std::int32_t dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
  if (h == 1 || w == 1) {
    const std::int32_t steps = h == 1 ? w : h;
    const std::int32_t dx = h == 1 ? dax : dbx;
    const std::int32_t dy = h == 1 ? day : dby;
    for (std::int32_t i = 0; i < steps; ++i) out.push_back(TileCoord{y + i * dy, x + i * dx});
    return;
  }
  std::int32_t ax2 = half(ax), ay2 = half(ay), bx2 = half(bx), by2 = half(by);
  if (2 * w > 3 * h) {
    if (std::abs(ax2 + ay2) % 2 != 0 && w > 2) {
      ax2 += dax;
      ay2 += day;
    }
    gilbert(x, y, ax2, ay2, bx, by, out);
    gilbert(x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by, out);
    return;
  }
  if (std::abs(bx2 + by2) % 2 != 0 && h > 2) {
    bx2 += dbx;
    by2 += dby;
  }
  gilbert(x, y, bx2, by2, ax2, ay2, out);
  gilbert(x + bx2, y + by2, ax, ay, bx - bx2, by - by2, out);
  gilbert(x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2),
          -(ay - ay2), out);
}

TEST(HilbertTile, IsTheRecursiveConstructionsOrder) {
  for (std::int32_t height = 1; height <= 48; ++height) {
    for (std::int32_t width = 1; width <= 48; ++width) {
      std::vector<TileCoord> cells;
      if (width >= height) {
        gilbert(0, 0, width, 0, 0, height, cells);
      } else {
        gilbert(0, 0, 0, height, width, 0, cells);
      }
      ASSERT_EQ(cells.size(), static_cast<std::size_t>(height * width));
      for (std::int32_t i = 0; i < height * width; ++i) {
        const TileCoord t = hilbert_tile(i, height, width);
        ASSERT_EQ(t.m, cells[static_cast<std::size_t>(i)].m)
            << height << " x " << width << " step " << i;
        ASSERT_EQ(t.n, cells[static_cast<std::size_t>(i)].n)
            << height << " x " << width << " step " << i;
      }
    }
  }
}

TEST(HilbertTile, IsThePlainHilbertCurveOnAPowerOfTwoSquare) {
  // Start in a corner, end in the adjacent corner along the first axis.
  const TileCoord first = hilbert_tile(0, 16, 16);
  const TileCoord last = hilbert_tile(16 * 16 - 1, 16, 16);
  EXPECT_EQ(first.m, 0);
  EXPECT_EQ(first.n, 0);
  EXPECT_EQ(last.m, 0);
  EXPECT_EQ(last.n, 15);
}

// The schedule of ladder steps 8-11: clusters of 2 CTAs along M, unit u
// handled by cluster u mod clusters, unit -> pair of tiles. Every tile of
// the grid must be computed exactly once whatever the cluster count.
TEST(ClusteredSchedule, EveryTileIsComputedOnceForAnyClusterCount) {
  constexpr std::int64_t kClusterM = 2;
  for (std::int64_t tiles_m : {1, 2, 3, 7, 16, 33}) {
    for (std::int64_t tiles_n : {1, 4, 9, 16}) {
      const std::int64_t units_m = ceil_div(tiles_m, kClusterM);
      const std::int64_t units = units_m * tiles_n;
      for (std::int64_t clusters : {1, 3, 64, 66, 1000}) {
        std::vector<int> computed(static_cast<std::size_t>(units_m * kClusterM * tiles_n), 0);
        for (std::int64_t cluster = 0; cluster < clusters; ++cluster) {
          for (std::int64_t u = cluster; u < units; u += clusters) {
            const TileCoord unit = hilbert_tile(static_cast<std::int32_t>(u),
                                                static_cast<std::int32_t>(units_m),
                                                static_cast<std::int32_t>(tiles_n));
            for (std::int64_t rank = 0; rank < kClusterM; ++rank) {
              const TileCoord t = cluster_member_tile(unit, rank, kClusterM);
              ++computed[static_cast<std::size_t>(t.m * tiles_n + t.n)];
            }
          }
        }
        for (std::int64_t m = 0; m < units_m * kClusterM; ++m) {
          for (std::int64_t n = 0; n < tiles_n; ++n) {
            // Real tiles exactly once; the phantom row past an odd tiles_m
            // (computed, never stored) also exactly once.
            EXPECT_EQ(computed[static_cast<std::size_t>(m * tiles_n + n)], 1)
                << tiles_m << " x " << tiles_n << " clusters " << clusters << " tile " << m
                << "," << n;
          }
        }
      }
    }
  }
}

}  // namespace
