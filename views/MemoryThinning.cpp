#include "views/MemoryThinning.h"

#include <algorithm>
#include <cmath>

namespace mario::views {

std::vector<MemoryPoint> thinKeepingMax(std::span<const MemoryPoint> points, double lower, double upper, int buckets) {
    buckets = std::max(buckets, 1);
    auto byTime = [](const MemoryPoint& p, double t) { return p.time_ms < t; };
    const auto first = std::lower_bound(points.begin(), points.end(), lower, byTime);
    const auto last = std::upper_bound(points.begin(), points.end(), upper,
                                       [](double t, const MemoryPoint& p) { return t < p.time_ms; });
    if (last - first <= 2 * static_cast<std::ptrdiff_t>(buckets) || !(upper > lower))
        return {points.begin(), points.end()};

    std::vector<MemoryPoint> out;
    out.reserve(2 * static_cast<std::size_t>(buckets) + 2);
    if (first != points.begin()) out.push_back(*std::prev(first));
    const double width = (upper - lower) / buckets;
    auto it = first;
    while (it != last) {
        const int bucket = std::min(buckets - 1, static_cast<int>(std::floor((it->time_ms - lower) / width)));
        const double bucketEnd = lower + (bucket + 1) * width;
        const double startTime = it->time_ms;
        double maximum = it->bytes;
        double lastValue = it->bytes;
        // The first point is always taken, so rounding in the bucket index cannot stall.
        for (++it; it != last && (it->time_ms < bucketEnd || bucket == buckets - 1); ++it) {
            maximum = std::max(maximum, it->bytes);
            lastValue = it->bytes;
        }
        out.push_back({startTime, maximum});
        // The value the bucket ends on carries on until the next bucket's first point; the
        // maximum is held to the bucket's end so even a zero-width spike gets a pixel.
        if (lastValue != maximum) out.push_back({std::min(bucketEnd, upper), lastValue});
    }
    if (last != points.end()) out.push_back(*last);
    return out;
}

}  // namespace mario::views
