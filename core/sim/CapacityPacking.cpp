#include "core/sim/CapacityPacking.h"

#include <algorithm>
#include <limits>

namespace mario {
namespace {

// Padding beyond the last position never binds.
constexpr int kNeverFull = std::numeric_limits<int>::min() / 2;

}  // namespace

CapacityPacking::CapacityPacking(const std::vector<int>& capacity) {
    while (leaves_ < capacity.size()) leaves_ *= 2;
    empty_.assign(2 * leaves_, kNeverFull);
    for (std::size_t p = 0; p < capacity.size(); ++p) empty_[leaves_ + p] = -capacity[p];
    for (std::size_t node = leaves_ - 1; node >= 1; --node)
        empty_[node] = std::max(empty_[2 * node], empty_[2 * node + 1]);
    highest_.assign(empty_.size(), 0);
    added_.assign(empty_.size(), 0);
    stamp_.assign(empty_.size(), 0);  // every node stale: empty
}

void CapacityPacking::clear() {
    // O(1): nodes written before this epoch read as empty (the bound clears once per stretch
    // start, thousands of times on a long device).
    if (++epoch_ == 0) {
        std::fill(stamp_.begin(), stamp_.end(), 0u);
        epoch_ = 1;
    }
}

void CapacityPacking::touch(std::size_t node) {
    if (stamp_[node] == epoch_) return;
    stamp_[node] = epoch_;
    highest_[node] = empty_[node];
    added_[node] = 0;
}

bool CapacityPacking::offer(std::size_t from, std::size_t to) {
    to = std::min(to, leaves_);
    if (from >= to) return true;
    if (full(1, 0, leaves_, from, to, 0)) return false;
    addOne(1, 0, leaves_, from, to);
    return true;
}

bool CapacityPacking::full(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to,
                           int above) const {
    // Nothing below this node is full: done, however much of it the interval covers (most
    // offers that fail, fail here or one level down).
    const bool fresh = stamp_[node] == epoch_;
    if ((fresh ? highest_[node] : empty_[node]) + above < 0) return false;
    if (from <= lo && hi <= to) return true;
    const std::size_t mid = (lo + hi) / 2;
    above += fresh ? added_[node] : 0;
    return (from < mid && full(2 * node, lo, mid, from, to, above)) ||
           (to > mid && full(2 * node + 1, mid, hi, from, to, above));
}

void CapacityPacking::addOne(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to) {
    touch(node);
    if (from <= lo && hi <= to) {
        ++highest_[node];
        ++added_[node];
        return;
    }
    const std::size_t mid = (lo + hi) / 2;
    if (from < mid) addOne(2 * node, lo, mid, from, to);
    if (to > mid) addOne(2 * node + 1, mid, hi, from, to);
    touch(2 * node);
    touch(2 * node + 1);
    highest_[node] = std::max(highest_[2 * node], highest_[2 * node + 1]) + added_[node];
}

}  // namespace mario
