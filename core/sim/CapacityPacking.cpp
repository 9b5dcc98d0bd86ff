#include "core/sim/CapacityPacking.h"

#include <algorithm>
#include <limits>

namespace mario {
namespace {

// Padding beyond the last position never binds.
constexpr int kNeverFull = std::numeric_limits<int>::min() / 2;

}  // namespace

CapacityPacking::CapacityPacking(const std::vector<int>& capacity) {
    while (leaves_ < capacity.size()) {
        leaves_ *= 2;
        ++height_;
    }
    empty_.assign(2 * leaves_, kNeverFull);
    for (std::size_t p = 0; p < capacity.size(); ++p) empty_[leaves_ + p] = -capacity[p];
    for (std::size_t node = leaves_ - 1; node >= 1; --node)
        empty_[node] = std::max(empty_[2 * node], empty_[2 * node + 1]);
    nodes_.resize(empty_.size());
    for (std::size_t node = 0; node < nodes_.size(); ++node) nodes_[node].highest = empty_[node];
    written_.assign(empty_.size(), 0);
}

void CapacityPacking::clear() {
    for (std::size_t node : writtenNodes_) {
        nodes_[node] = {empty_[node], 0};
        written_[node] = 0;
    }
    writtenNodes_.clear();
}

void CapacityPacking::write(std::size_t node) {
    if (written_[node]) return;
    written_[node] = 1;
    writtenNodes_.push_back(node);
}

void CapacityPacking::add(std::size_t node, int value) {
    write(node);
    nodes_[node].highest += value;
    if (node < leaves_) nodes_[node].added += value;
}

void CapacityPacking::pullUp(std::size_t first, std::size_t last) {
    auto recompute = [this](std::size_t node) {
        write(node);
        nodes_[node].highest =
            std::max(nodes_[2 * node].highest, nodes_[2 * node + 1].highest) + nodes_[node].added;
    };
    std::size_t l = first >> 1, r = last >> 1;
    for (; l != r; l >>= 1, r >>= 1) {
        recompute(l);
        recompute(r);
    }
    for (; l >= 1; l >>= 1) recompute(l);  // the common path to the root
}

bool CapacityPacking::offer(std::size_t from, std::size_t to) {
    to = std::min(to, leaves_);
    if (from >= to) return true;
    const std::size_t first = from + leaves_, last = to - 1 + leaves_;
    // The nodes that tile [from, to), as any bottom-up segment tree reads them. A node's value
    // lacks what was added to its ancestors, and the ancestors of the nodes read on the left
    // are those of `first` (each read node's parent reaches past the interval's start), on the
    // right those of `last`: climbing, each side adds its path's additions to what it read.
    int left = kNeverFull, right = kNeverFull;
    std::size_t l = first, r = last + 1;
    for (int level = 1; level <= height_; ++level, l >>= 1, r >>= 1) {
        if (l < r) {
            if (l & 1) left = std::max(left, nodes_[l++].highest);
            if (r & 1) right = std::max(right, nodes_[--r].highest);
        }
        left += nodes_[first >> level].added;
        right += nodes_[last >> level].added;
    }
    if (l < r) left = std::max(left, nodes_[l].highest);  // the root (l == 1, r == 2)
    if (std::max(left, right) >= 0) return false;
    for (l = first, r = last + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1) add(l++, 1);
        if (r & 1) add(--r, 1);
    }
    pullUp(first, last);
    return true;
}

}  // namespace mario
