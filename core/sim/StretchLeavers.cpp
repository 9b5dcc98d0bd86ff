#include "core/sim/StretchLeavers.h"

#include <algorithm>

namespace mario {

void StretchLeavers::Lengths::add(double value) {
    auto at = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first <= value; });
    if (at != counts.end() && at->first == value) ++at->second;
    else counts.insert(at, {value, 1});
}

void StretchLeavers::Packing::clear() {
    packing.clear();
    earlyFull = false;
}

bool StretchLeavers::Packing::take(std::size_t from, std::size_t to, bool early) {
    if (!early) return packing.offer(from, to);
    earlyFull = earlyFull || !packing.offer(from, to);
    return !earlyFull;
}

StretchLeavers::StretchLeavers(const DeviceRecomputes& device)
    : device_(device), all_(device.capacity), byStart_(2), bySize_(device.capacityBySize.size()) {
    for (const auto& capacity : device.capacityBySize) sized_.emplace_back(capacity);
}

void StretchLeavers::start(std::size_t memoryAt) {
    beforeStart_ = memoryAt > 0 ? memoryAt - 1 : 0;
    all_.clear();
    for (auto& packing : sized_) packing.clear();
    leaving_ = 0;
    for (auto& group : byStart_) group = Group{};
    for (auto& group : bySize_) group = Group{};
    byStart_[0].cap = device_.capacity.empty() ? 0 : device_.capacity[beforeStart_];
    byStart_[1].cap = device_.droppable;
}

void StretchLeavers::add(const Recomputation& r, bool early) {
    const std::size_t from = early ? beforeStart_ : r.memoryFrom;
    byStart_[early ? 0 : 1].lengths.add(r.ms);
    leaving_ += all_.take(from, r.memoryTo, early);
    if (sized_.empty()) return;
    Group& group = bySize_[r.size];
    group.lengths.add(r.ms);
    group.cap += sized_[r.size].take(from, r.memoryTo, early);
}

double StretchLeavers::mostTime() const {
    const double byStart = longest(byStart_, leaving_);
    return bySize_.empty() ? byStart : std::min(byStart, longest(bySize_, leaving_));
}

double StretchLeavers::longest(const std::vector<Group>& groups, int total) {
    // Per group: the next distinct length, how many of it are taken, and what its cap leaves.
    struct Cursor {
        std::size_t at = 0;
        int used = 0, left = 0;
    };
    Cursor cursors[kMostSizes];
    const std::size_t n = groups.size();  // at most kMostSizes (DeviceRecomputes)
    for (std::size_t g = 0; g < n; ++g) cursors[g].left = groups[g].cap;
    double sum = 0;
    while (total > 0) {
        int best = -1;
        for (std::size_t g = 0; g < n; ++g) {
            const auto& counts = groups[g].lengths.counts;
            if (cursors[g].left <= 0 || cursors[g].at >= counts.size()) continue;
            if (best < 0 || counts[cursors[g].at].first > groups[best].lengths.counts[cursors[best].at].first)
                best = static_cast<int>(g);
        }
        if (best < 0) break;
        Cursor& c = cursors[best];
        const auto& [length, count] = groups[best].lengths.counts[c.at];
        const int taken = std::min({total, c.left, count - c.used});
        sum += taken * length;
        total -= taken;
        c.left -= taken;
        c.used += taken;
        if (c.used == count) {
            ++c.at;
            c.used = 0;
        }
    }
    return sum;
}

}  // namespace mario
