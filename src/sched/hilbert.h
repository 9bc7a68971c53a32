// Generalized Hilbert ("gilbert") curve over any W x H rectangle of tiles:
// index -> cell, computed in O(log(max(W, H))) steps with no table, so a
// persistent CTA can map its i-th work item on the fly.
//
// The worklog's kernel 11 orders tiles along a Hilbert curve so that tiles
// running at the same time, and tiles running one after another, share A and
// B panels in L2. A classic Hilbert curve needs a 2^k x 2^k square; the
// generalized curve (J. Cervený's recursive construction, public domain) covers
// any rectangle, visits every cell exactly once and moves to a neighbouring
// cell (diagonal at worst) at every step. The construction splits the
// rectangle along its major axis into two halves when it is long and thin,
// otherwise into three parts (up, across, down); d2xy walks that recursion
// down to the part holding the index, subtracting the areas it skips.
//
// Unit-tested on the CPU against the recursive generator's properties
// (tests/host/test_tile_order.cpp).
#pragma once

#include <cstdint>

#include "sched/tile_order.h"

namespace tcgemm::sched {
namespace detail {

TCGEMM_HOST_DEVICE constexpr std::int32_t sign(std::int32_t v) { return (v > 0) - (v < 0); }
TCGEMM_HOST_DEVICE constexpr std::int32_t abs32(std::int32_t v) { return v < 0 ? -v : v; }
// Division rounding toward minus infinity (the construction halves signed
// extents and must round the same way for both signs): C++20's right shift
// of a negative value is arithmetic.
TCGEMM_HOST_DEVICE constexpr std::int32_t floor_half(std::int32_t v) { return v >> 1; }

}  // namespace detail

// Cell of the curve's index-th step over a width x height grid, as a
// TileCoord {m = row (0..height-1), n = column (0..width-1)}.
// 0 <= index < width * height < 2^31; width, height >= 1. 32-bit arithmetic
// on purpose: a TMA producer thread runs this with 40 registers.
//
// The construction's two axes are always perpendicular and parallel to the
// grid's, so each is one signed extent and a flag says which grid axis the
// major one runs along: per level a few adds and compares on one value per
// axis (the producer of the production kernel finds its first tile on the
// path to its first load).
TCGEMM_HOST_DEVICE constexpr TileCoord hilbert_tile(std::int32_t index, std::int32_t height,
                                                    std::int32_t width) {
  using detail::abs32;
  using detail::floor_half;
  using detail::sign;
  // Current sub-rectangle: origin (x = column, y = row), major extent a and
  // minor extent b (signed, in cells); major_is_y: a runs along the rows.
  std::int32_t x = 0, y = 0;
  bool major_is_y = width < height;
  std::int32_t a = major_is_y ? height : width;
  std::int32_t b = major_is_y ? width : height;
  // Moves the origin by `along_a` cells along the major axis and `along_b`
  // along the minor one.
  const auto move = [&](std::int32_t along_a, std::int32_t along_b) {
    x += major_is_y ? along_b : along_a;
    y += major_is_y ? along_a : along_b;
  };
  for (;;) {
    const std::int32_t w = abs32(a);
    const std::int32_t h = abs32(b);
    const std::int32_t da = sign(a);
    const std::int32_t db = sign(b);
    if (h == 1) {
      move(index * da, 0);
      return TileCoord{y, x};
    }
    if (w == 1) {
      move(0, index * db);
      return TileCoord{y, x};
    }
    std::int32_t a2 = floor_half(a);
    std::int32_t b2 = floor_half(b);
    if (2 * w > 3 * h) {
      // Long and thin: two halves along the major axis (even-length first
      // half where possible, so the curve can turn back).
      if ((a2 & 1) != 0 && w > 2) a2 += da;
      const std::int32_t first = abs32(a2) * h;
      if (index < first) {
        a = a2;
      } else {
        index -= first;
        move(a2, 0);
        a -= a2;
      }
      continue;
    }
    // Up the first half of the minor axis, across the whole major axis, and
    // back down.
    if ((b2 & 1) != 0 && h > 2) b2 += db;
    const std::int32_t up = abs32(b2) * abs32(a2);
    const std::int32_t across = w * abs32(b - b2);
    if (index < up) {
      // The axes trade places.
      const std::int32_t minor = a2;
      a = b2;
      b = minor;
      major_is_y = !major_is_y;
    } else if (index < up + across) {
      index -= up;
      move(0, b2);
      b -= b2;
    } else {
      index -= up + across;
      move(a - da, b2 - db);
      const std::int32_t minor = -(a - a2);
      a = -b2;
      b = minor;
      major_is_y = !major_is_y;
    }
  }
}

// hilbert_tile as a tile-order type (see GroupedOrder in tile_order.h).
struct HilbertOrder {
  static constexpr std::int64_t kMaxItems = INT32_MAX;
  TCGEMM_HOST_DEVICE static constexpr TileCoord tile(std::int64_t i, std::int64_t rows,
                                                     std::int64_t cols) {
    return hilbert_tile(static_cast<std::int32_t>(i), static_cast<std::int32_t>(rows),
                        static_cast<std::int32_t>(cols));
  }
};

}  // namespace tcgemm::sched
