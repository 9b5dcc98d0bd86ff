// RankLayout (core/model/RankLayout.h): Megatron-LM's rank order, the launch scripts' and the
// executor's order, and which links it keeps inside a node (the cost model's NVLink or InfiniBand).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "core/model/RankLayout.h"

namespace {

using mario::nodeLocality;
using mario::placeOf;
using mario::rankOf;
using mario::RankPlace;

TEST(RankLayout, EveryRankOfTp2Dp3Pp4RoundTripsToADistinctPlace) {
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

TEST(RankLayout, HandComputedPlaces) {
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

TEST(RankLayout, ZeroDegreesAreRejected) {
    EXPECT_THROW(placeOf(0, 0, 1), std::invalid_argument);
    EXPECT_THROW(rankOf(RankPlace{}, 1, 0), std::invalid_argument);
}

TEST(RankLayout, OneNodeKeepsEveryLinkInside) {
    // tp 2 × pp 4 = 8 GPUs; tp 1 × dp 2 × pp 4 = 8: one 8-GPU node each.
    EXPECT_TRUE(nodeLocality(4, 1, 2, 8).pipeline_in_node);
    EXPECT_TRUE(nodeLocality(4, 2, 1, 8).pipeline_in_node);
    EXPECT_TRUE(nodeLocality(4, 2, 1, 8).data_parallel_in_node);
}

TEST(RankLayout, PipelineNeighboursCrossNodesBeforeReplicasDo) {
    // pp 8, dp 2 on 8-GPU nodes: device d runs ranks 2d and 2d + 1, so devices 0–3 fill node 0
    // and 4–7 node 1. The hop 3 → 4 (ranks 6 → 8) crosses; each device's two replicas share a
    // node. (The order tp, pp, dp would have kept the pipeline inside and split the replicas.)
    const auto locality = nodeLocality(8, 2, 1, 8);
    EXPECT_FALSE(locality.pipeline_in_node);
    EXPECT_TRUE(locality.data_parallel_in_node);
    // 16 pipeline devices alone need two nodes: device 7 → 8 is rank 7 → 8.
    EXPECT_FALSE(nodeLocality(16, 1, 1, 8).pipeline_in_node);
    EXPECT_TRUE(nodeLocality(16, 1, 1, 8).data_parallel_in_node);
    // tp 8 fills a node per replica: every replica and every hop is on another node.
    EXPECT_FALSE(nodeLocality(2, 2, 8, 8).pipeline_in_node);
    EXPECT_FALSE(nodeLocality(2, 2, 8, 8).data_parallel_in_node);
}

TEST(RankLayout, ReplicaGroupsThatStraddleANodeAreNotInside) {
    // dp 3 on 4-GPU nodes: device 0 runs ranks 0–2 (node 0), device 1 ranks 3–5, and rank 3 is
    // on node 0 while 4 and 5 are on node 1. Replica 1's hop is rank 1 → 4: across.
    const auto locality = nodeLocality(2, 3, 1, 4);
    EXPECT_FALSE(locality.data_parallel_in_node);
    EXPECT_FALSE(locality.pipeline_in_node);
    // dp 2 on 4-GPU nodes with tp 2: each device's 4 ranks are exactly one node.
    EXPECT_TRUE(nodeLocality(3, 2, 2, 4).data_parallel_in_node);
    EXPECT_FALSE(nodeLocality(3, 2, 2, 4).pipeline_in_node);
}

TEST(RankLayout, DegreesBelowOneJudgeNothing) {
    // The config reader reports these; the locality must not divide by them.
    EXPECT_TRUE(nodeLocality(4, 0, 1, 8).pipeline_in_node);
    EXPECT_TRUE(nodeLocality(4, 1, 0, 8).data_parallel_in_node);
    EXPECT_TRUE(nodeLocality(4, 1, 1, 0).pipeline_in_node);
}

}  // namespace
