// Tile orders: which output tile a CTA (or a persistent CTA's i-th work item)
// computes. Pure integer math, __host__ __device__, unit-tested on the CPU.
//
// Grouped order (the worklog's kernel 6 "schedule for L2", CUTLASS's swizzle):
// a group is `group_m` consecutive tile-rows; groups are walked one after
// another, and inside a group the walk goes down the group's tile-rows, then
// on to the next tile-column. CTAs that run at the same time then share a few
// A row-panels and B column-panels, which hit in L2.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TCGEMM_HOST_DEVICE __host__ __device__
#else
#define TCGEMM_HOST_DEVICE
#endif

namespace tcgemm::sched {

TCGEMM_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

struct TileCoord {
  std::int64_t m = 0;  // tile-row index, 0 <= m < tiles_m
  std::int64_t n = 0;  // tile-column index, 0 <= n < tiles_n
};

// Maps linear work index 0 <= linear < tiles_m * tiles_n to a tile, visiting
// every tile exactly once. group_m >= 1; the last group may be shorter when
// tiles_m is not a multiple of group_m. group_m == 1 is plain row-major over
// (n, m) pairs, i.e. one tile-row at a time.
TCGEMM_HOST_DEVICE constexpr TileCoord grouped_tile(std::int64_t linear, std::int64_t tiles_m,
                                                    std::int64_t tiles_n, std::int64_t group_m) {
  const std::int64_t tiles_per_group = group_m * tiles_n;
  const std::int64_t group = linear / tiles_per_group;
  const std::int64_t first_m = group * group_m;
  const std::int64_t rows_in_group = (tiles_m - first_m) < group_m ? (tiles_m - first_m) : group_m;
  const std::int64_t in_group = linear - group * tiles_per_group;
  return TileCoord{first_m + in_group % rows_in_group, in_group / rows_in_group};
}

// A tile order as a type, so a kernel's scheduler is one template argument:
// Order::tile(i, rows, cols) maps work item i of a rows x cols grid, and
// Order::kMaxItems bounds the grids it can index.
template <int kGroupM>
struct GroupedOrder {
  static constexpr std::int64_t kMaxItems = INT64_MAX;
  TCGEMM_HOST_DEVICE static constexpr TileCoord tile(std::int64_t i, std::int64_t rows,
                                                     std::int64_t cols) {
    return grouped_tile(i, rows, cols, kGroupM);
  }
};

// Clusters of `cluster_m` CTAs stacked along M work on units of cluster_m
// vertically adjacent tiles: unit `unit` (a coordinate on the grid of
// ceil(tiles_m / cluster_m) x tiles_n units) gives the CTA of cluster rank
// `rank` this tile. With tiles_m not a multiple of cluster_m, the last unit's
// upper ranks get tile-rows >= tiles_m, which they compute but never store.
TCGEMM_HOST_DEVICE constexpr TileCoord cluster_member_tile(TileCoord unit, std::int64_t rank,
                                                           std::int64_t cluster_m) {
  return TileCoord{unit.m * cluster_m + rank, unit.n};
}

}  // namespace tcgemm::sched
