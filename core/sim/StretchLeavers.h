#pragma once
// The recomputations that may leave one stretch i…j of a device's program, and the most time
// they can take out of it (step 3 of the recompute bound, docs/hide-recompute.md). Rs are
// added in order of their backwards. An early one (its forward before i) leaves by running
// before i or by being dropped, and either way holds its forward's activations from just
// before i to its backward; a later one leaves only when dropped, holding them from its
// forward. Those intervals are packed under the device's per-point capacities
// (CapacityPacking.h): once with every R at the device's smallest size, and where the Rs come
// in several sizes once per size with that size alone. The time that leaves is at most the
// longest leavers under either set of caps, so the smaller of the two holds.
#include <cstddef>
#include <utility>
#include <vector>

#include "core/sim/CapacityPacking.h"
#include "core/sim/DeviceRecomputes.h"

namespace mario {

class StretchLeavers {
public:
    // `device` must outlive this.
    explicit StretchLeavers(const DeviceRecomputes& device);

    // A new stretch, starting at the instruction at `memoryAt` in the memory program.
    void start(std::size_t memoryAt);
    void add(const Recomputation& r, bool early);
    // The most time the Rs added since start() can take out of the stretch.
    double mostTime() const;

private:
    // Lengths of a group of Rs as counts of a few distinct values, longest first: a device's Rs
    // take one length per stage it holds, so adding and summing cost that few, not a heap's
    // log k (the bound adds ~10⁸ lengths on LLaMA-3 70B 32 × 128).
    struct Lengths {
        std::vector<std::pair<double, int>> counts;
        void add(double value);
    };
    struct Group {
        Lengths lengths;
        int cap = 0;  // at most this many of the group leave
    };
    // Longest first across the groups, each within its cap, at most `total` in all: optimal
    // under those caps (one partition of the leavers).
    static double longest(const std::vector<Group>& groups, int total);

    // One set of caps and the leavers packed under it in this stretch.
    struct Packing {
        CapacityPacking packing;
        // Early Rs' intervals all start just before the stretch and end later and later: once
        // one does not fit, none after it does (a packing only fills).
        bool earlyFull = false;
        explicit Packing(const std::vector<int>& capacity) : packing(capacity) {}
        void clear();
        // Whether an R holding [from, to) fits, packing it if so.
        bool take(std::size_t from, std::size_t to, bool early);
    };

    const DeviceRecomputes& device_;
    Packing all_;                  // every R at the smallest size
    std::vector<Packing> sized_;   // per size, that size alone
    std::size_t beforeStart_ = 0;  // the memory program's point just before the stretch
    int leaving_ = 0;
    std::vector<Group> byStart_;  // early Rs (cap: the room before the stretch), later ones (cap: droppable)
    std::vector<Group> bySize_;   // per size (cap: what its own packing took)
};

}  // namespace mario
