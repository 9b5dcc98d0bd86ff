// RankLayout (executor/dist/RankLayout.h): Megatron-LM's rank order, the launch scripts' order.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "executor/dist/RankLayout.h"

namespace {

using mario::dist::placeOf;
using mario::dist::rankOf;
using mario::dist::RankPlace;

TEST(DistRankLayout, EveryRankOfTp2Dp3Pp4RoundTripsToADistinctPlace) {
    const int tp = 2, dp = 3, pp = 4;
    std::set<std::tuple<int, int, int>> seen;
    for (int rank = 0; rank < tp * dp * pp; ++rank) {
        const RankPlace place = placeOf(rank, tp, dp);
        EXPECT_GE(place.device, 0);
        EXPECT_LT(place.device, pp);
        EXPECT_GE(place.replica, 0);
        EXPECT_LT(place.replica, dp);
        EXPECT_GE(place.tp_rank, 0);
        EXPECT_LT(place.tp_rank, tp);
        EXPECT_EQ(rankOf(place, tp, dp), rank);
        seen.insert({place.device, place.replica, place.tp_rank});
    }
    EXPECT_EQ(seen.size(), 24u);
}

TEST(DistRankLayout, HandComputedPlaces) {
    // rank = tp_rank + tp * (replica + dp * device), tp = 2, dp = 3.
    EXPECT_EQ(placeOf(7, 2, 3), (RankPlace{1, 0, 1}));
    EXPECT_EQ(placeOf(0, 2, 3), (RankPlace{0, 0, 0}));
    EXPECT_EQ(placeOf(5, 2, 3), (RankPlace{0, 2, 1}));
    EXPECT_EQ(placeOf(23, 2, 3), (RankPlace{3, 2, 1}));
    EXPECT_EQ(rankOf(RankPlace{2, 1, 0}, 2, 3), 14);
    // Tensor-parallel peers are neighbours, pipeline neighbours are tp * dp apart.
    EXPECT_EQ(rankOf(RankPlace{1, 0, 1}, 2, 3) - rankOf(RankPlace{1, 0, 0}, 2, 3), 1);
    EXPECT_EQ(rankOf(RankPlace{2, 0, 0}, 2, 3) - rankOf(RankPlace{1, 0, 0}, 2, 3), 6);
    // Pure pipeline parallelism: the rank is the device.
    EXPECT_EQ(placeOf(3, 1, 1), (RankPlace{3, 0, 0}));
}

TEST(DistRankLayout, ZeroDegreesAreRejected) {
    EXPECT_THROW(placeOf(0, 0, 1), std::invalid_argument);
    EXPECT_THROW(rankOf(RankPlace{}, 1, 0), std::invalid_argument);
}

}  // namespace
