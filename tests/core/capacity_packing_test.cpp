// CapacityPacking against two independent references on random instances: a plain array of
// loads, checked and filled position by position (what the segment tree must agree with, offer
// by offer), and exhaustive search over every subset of the intervals (the largest set that
// fits, which the earliest-end-first order must reach).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "core/sim/CapacityPacking.h"

namespace mario {
namespace {

using Interval = std::pair<std::size_t, std::size_t>;  // [from, to)

bool fitsAll(const std::vector<Interval>& chosen, const std::vector<int>& capacity) {
    std::vector<int> load(capacity.size(), 0);
    for (const auto& [from, to] : chosen)
        for (std::size_t p = from; p < to; ++p)
            if (++load[p] > capacity[p]) return false;
    return true;
}

std::vector<Interval> randomIntervals(std::mt19937& rng, std::size_t positions, int count) {
    std::vector<Interval> intervals;
    for (int k = 0; k < count; ++k) {
        std::size_t a = rng() % positions, b = rng() % positions;
        if (a > b) std::swap(a, b);
        intervals.push_back({a, b + 1});
    }
    // In order of their end, as the recompute bound offers them.
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& x, const Interval& y) { return x.second < y.second; });
    return intervals;
}

TEST(CapacityPacking, AgreesWithAPlainArrayOfLoadsOfferByOffer) {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t positions = 1 + rng() % 70;  // powers of two and not
        std::vector<int> capacity(positions);
        for (int& c : capacity) c = static_cast<int>(rng() % 4);
        CapacityPacking packing(capacity);
        for (int round = 0; round < 2; ++round) {  // again after clear()
            std::vector<int> load(positions, 0);
            for (const auto& [from, to] : randomIntervals(rng, positions, 40)) {
                bool fits = true;
                for (std::size_t p = from; p < to; ++p) fits = fits && load[p] < capacity[p];
                if (fits)
                    for (std::size_t p = from; p < to; ++p) ++load[p];
                ASSERT_EQ(packing.offer(from, to), fits) << "trial " << trial << " [" << from << ", " << to << ")";
            }
            packing.clear();
        }
    }
}

TEST(CapacityPacking, TakesAsManyIntervalsAsTheBestSubsetInOrderOfTheirEnd) {
    std::mt19937 rng(5);
    int binding = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t positions = 4 + rng() % 12;
        std::vector<int> capacity(positions);
        for (int& c : capacity) c = static_cast<int>(rng() % 3);
        const auto intervals = randomIntervals(rng, positions, 10);
        CapacityPacking packing(capacity);
        int taken = 0;
        for (const auto& [from, to] : intervals) taken += packing.offer(from, to);
        int best = 0;
        for (unsigned mask = 0; mask < (1u << intervals.size()); ++mask) {
            std::vector<Interval> chosen;
            for (std::size_t k = 0; k < intervals.size(); ++k)
                if (mask & (1u << k)) chosen.push_back(intervals[k]);
            if (static_cast<int>(chosen.size()) > best && fitsAll(chosen, capacity))
                best = static_cast<int>(chosen.size());
        }
        EXPECT_EQ(taken, best) << "trial " << trial;
        binding += best < static_cast<int>(intervals.size());
    }
    EXPECT_GT(binding, 150) << "the capacities should bind in most trials";
}

TEST(CapacityPacking, EmptyIntervalsAlwaysFitAndNothingFitsAtZeroCapacity) {
    CapacityPacking packing({0, 2, 1});
    EXPECT_TRUE(packing.offer(1, 1));
    EXPECT_FALSE(packing.offer(0, 1));
    EXPECT_TRUE(packing.offer(1, 3));
    EXPECT_FALSE(packing.offer(2, 3));
    EXPECT_TRUE(packing.offer(1, 2));
    EXPECT_FALSE(packing.offer(1, 2));
    packing.clear();
    EXPECT_TRUE(packing.offer(2, 3));
}

}  // namespace
}  // namespace mario
