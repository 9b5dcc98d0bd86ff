#include "views/MemoryEnvelope.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace mario::views {

std::vector<MemoryPoint> upperEnvelope(const std::vector<std::vector<MemoryPoint>>& curves) {
    struct Change {
        double time;
        int device;
        double bytes;
    };
    std::vector<Change> changes;
    for (int d = 0; d < static_cast<int>(curves.size()); ++d)
        for (const MemoryPoint& p : curves[d]) changes.push_back({p.time_ms, d, p.bytes});
    std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.time < b.time; });
    // A max-heap of (level, device) with stale entries dropped lazily when they reach the top.
    std::vector<double> level(curves.size(), 0);
    std::priority_queue<std::pair<double, int>> highest;
    std::vector<MemoryPoint> out;
    for (std::size_t i = 0; i < changes.size();) {
        const double time = changes[i].time;
        for (; i < changes.size() && changes[i].time == time; ++i) {
            level[changes[i].device] = changes[i].bytes;
            highest.push({changes[i].bytes, changes[i].device});
        }
        while (!highest.empty() && level[highest.top().second] != highest.top().first) highest.pop();
        const double top = highest.empty() ? 0 : highest.top().first;
        if (out.empty() || out.back().bytes != top) out.push_back({time, top});
    }
    // The last time of any curve ends the envelope too (the charts draw to the step's end).
    if (!changes.empty() && out.back().time_ms < changes.back().time)
        out.push_back({changes.back().time, out.back().bytes});
    return out;
}

std::vector<int> fullestDevices(const std::vector<std::vector<MemoryPoint>>& curves, int count) {
    std::vector<std::pair<double, int>> peaks;
    for (int d = 0; d < static_cast<int>(curves.size()); ++d) {
        double peak = 0;
        for (const MemoryPoint& p : curves[d]) peak = std::max(peak, p.bytes);
        peaks.push_back({-peak, d});  // highest first, then the lower device
    }
    const std::size_t kept = std::min<std::size_t>(std::max(count, 0), peaks.size());
    std::partial_sort(peaks.begin(), peaks.begin() + static_cast<std::ptrdiff_t>(kept), peaks.end());
    std::vector<int> devices;
    for (std::size_t i = 0; i < kept; ++i) devices.push_back(peaks[i].second);
    std::sort(devices.begin(), devices.end());
    return devices;
}

}  // namespace mario::views
