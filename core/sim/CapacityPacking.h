#pragma once
// Intervals packed under per-position capacities: an interval [from, to) goes in when every
// position in it still holds fewer intervals than its capacity. The recompute bound counts with
// it how many recomputations the memory budget lets leave a stretch of a device's program
// (core/sim/RecomputeBound.cpp): each position is a point of the program, its capacity the
// activation sets that fit above the memory there, each interval where one leaver holds its
// forward's activations. Offered in order of where they end, the intervals it takes are as
// many as any set that fits (an exchange argument, docs/hide-recompute.md).
//
// A segment tree over load − capacity with range additions: O(log n) per offer, where a scan
// of the interval cost O(length) (LLaMA-3 70B 32 × 128 offers a quarter of a million intervals
// per device).
#include <cstddef>
#include <vector>

namespace mario {

class CapacityPacking {
public:
    explicit CapacityPacking(const std::vector<int>& capacity);

    // Takes [from, to) when every position in it has room left, and says whether it did. An
    // empty interval always fits.
    bool offer(std::size_t from, std::size_t to);
    // Empties every position again, in O(1).
    void clear();

private:
    // Whether a position of [from, to) within the node covering [lo, hi) is full; `above` is
    // what the node's ancestors added to all of it.
    bool full(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to, int above) const;
    void addOne(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to);
    // Makes a node written before the last clear() read as empty.
    void touch(std::size_t node);

    std::size_t leaves_ = 1;
    // Per node: the largest load − capacity below it, counting the node's own additions, and
    // those additions; `empty_` is the first with nothing packed. A node counts only when its
    // stamp is the current epoch, else it reads as empty.
    std::vector<int> highest_, added_, empty_;
    std::vector<unsigned> stamp_;
    unsigned epoch_ = 1;
};

}  // namespace mario
