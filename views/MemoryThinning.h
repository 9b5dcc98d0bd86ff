#pragma once
// Thinning of a memory step curve for drawing (heaptrack's rule): the visible range is cut
// into buckets of about a pixel and each bucket keeps its maximum, so a peak narrower than a
// pixel never disappears, while a million-point curve costs a few points per pixel.
#include <span>
#include <vector>

#include "core/sim/SimResult.h"

namespace mario::views {

// `points` is a step curve sorted by time (each value holds until the next point). Returns
// at most 2 points per bucket over [lower, upper], plus the last point before `lower` and the
// first after `upper` so the line runs through the edges. Each bucket becomes its maximum,
// held from the bucket's first point, then its last value from the bucket's end: the curve
// drawn is an upper envelope that is exact to within one bucket. Curves already small enough
// (≤ 2 points per bucket) are returned unchanged.
std::vector<MemoryPoint> thinKeepingMax(std::span<const MemoryPoint> points, double lower, double upper, int buckets);

}  // namespace mario::views
