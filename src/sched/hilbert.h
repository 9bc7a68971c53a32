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
// extents and must round the same way for both signs).
TCGEMM_HOST_DEVICE constexpr std::int32_t floor_half(std::int32_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

}  // namespace detail

// Cell of the curve's index-th step over a width x height grid, as a
// TileCoord {m = row (0..height-1), n = column (0..width-1)}.
// 0 <= index < width * height < 2^31; width, height >= 1. 32-bit arithmetic
// on purpose: a TMA producer thread runs this with 40 registers.
TCGEMM_HOST_DEVICE constexpr TileCoord hilbert_tile(std::int32_t index, std::int32_t height,
                                                    std::int32_t width) {
  using detail::abs32;
  using detail::floor_half;
  using detail::sign;
  // Current sub-rectangle: origin (x, y), major axis (ax, ay), minor (bx, by).
  std::int32_t x = 0, y = 0;
  std::int32_t ax = width >= height ? width : 0;
  std::int32_t ay = width >= height ? 0 : height;
  std::int32_t bx = width >= height ? 0 : width;
  std::int32_t by = width >= height ? height : 0;
  for (;;) {
    const std::int32_t w = abs32(ax + ay);
    const std::int32_t h = abs32(bx + by);
    const std::int32_t dax = sign(ax), day = sign(ay);
    const std::int32_t dbx = sign(bx), dby = sign(by);
    if (h == 1) return TileCoord{y + index * day, x + index * dax};
    if (w == 1) return TileCoord{y + index * dby, x + index * dbx};
    std::int32_t ax2 = floor_half(ax), ay2 = floor_half(ay);
    std::int32_t bx2 = floor_half(bx), by2 = floor_half(by);
    if (2 * w > 3 * h) {
      // Long and thin: two halves along the major axis (even-length first
      // half where possible, so the curve can turn back).
      if ((abs32(ax2 + ay2) % 2) != 0 && w > 2) {
        ax2 += dax;
        ay2 += day;
      }
      const std::int32_t first = abs32(ax2 + ay2) * h;
      if (index < first) {
        ax = ax2;
        ay = ay2;
      } else {
        index -= first;
        x += ax2;
        y += ay2;
        ax -= ax2;
        ay -= ay2;
      }
      continue;
    }
    // Up the first half of the minor axis, across the whole major axis, and
    // back down.
    if ((abs32(bx2 + by2) % 2) != 0 && h > 2) {
      bx2 += dbx;
      by2 += dby;
    }
    const std::int32_t up = abs32(bx2 + by2) * abs32(ax2 + ay2);
    const std::int32_t across = w * abs32(bx - bx2 + by - by2);
    if (index < up) {
      const std::int32_t nax = bx2, nay = by2, nbx = ax2, nby = ay2;
      ax = nax;
      ay = nay;
      bx = nbx;
      by = nby;
    } else if (index < up + across) {
      index -= up;
      x += bx2;
      y += by2;
      bx -= bx2;
      by -= by2;
    } else {
      index -= up + across;
      const std::int32_t nx = x + (ax - dax) + (bx2 - dbx);
      const std::int32_t ny = y + (ay - day) + (by2 - dby);
      const std::int32_t nax = -bx2, nay = -by2, nbx = -(ax - ax2), nby = -(ay - ay2);
      x = nx;
      y = ny;
      ax = nax;
      ay = nay;
      bx = nbx;
      by = nby;
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
