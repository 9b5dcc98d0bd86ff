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
// per device). It is walked bottom-up, without recursion: the bound offers about 8 million
// intervals on GPT-3 13B Chimera 32 × 2048, and the recursive walk that visited both children
// of every node the interval split was two thirds of the bound there (issue 45).
#include <cstddef>
#include <vector>

namespace mario {

class CapacityPacking {
public:
    explicit CapacityPacking(const std::vector<int>& capacity);

    // Takes [from, to) when every position in it has room left, and says whether it did. An
    // empty interval always fits.
    bool offer(std::size_t from, std::size_t to);
    // Empties every position again, in time proportional to the nodes written since the last
    // clear (the bound clears once per stretch start, thousands of times on a long device, and
    // each stretch writes a few hundred nodes of a tree of tens of thousands).
    void clear();

private:
    struct Node {
        int highest = 0;  // the largest load − capacity below the node, its own additions counted
        int added = 0;    // what was added to the whole node (inner nodes; its children lack it)
    };
    void add(std::size_t node, int value);
    // Recomputes the paths from the leaves `first` and `last` up to the root after additions
    // below them (each node once where the paths meet).
    void pullUp(std::size_t first, std::size_t last);
    void write(std::size_t node);

    std::size_t leaves_ = 1;
    int height_ = 0;
    std::vector<Node> nodes_;
    std::vector<int> empty_;             // per node: `highest` with nothing packed
    std::vector<unsigned char> written_;  // per node: changed since the last clear
    std::vector<std::size_t> writtenNodes_;
};

}  // namespace mario
