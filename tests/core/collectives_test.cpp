// NCCL's choice of algorithm and protocol for a collective (core/cost/Collectives.h), against
// NCCL's tuning model worked by hand from the constants docs/cost-model.md#communication lists
// (NVIDIA/nccl src/graph/tuning.cc): each candidate's time is written out below as a closed form,
// latency in µs (a base plus a hop latency per step or tree level) plus bytes over the
// algorithm's bandwidth, and the collective must run the fastest.
#include <gtest/gtest.h>

#include "core/cost/Collectives.h"
#include "tests/core/CostTestConfigs.h"

namespace mario {
namespace {

using Algorithm = CollectiveChoice::Algorithm;
using Protocol = CollectiveChoice::Protocol;

// NCCL's constants as docs/cost-model.md lists them, µs: base latency, NVLink ring step, NVLink
// chain link (tree), network ring step, network tree level.
constexpr double kBaseSimple = 8.4, kBaseLl128 = 14.0;
constexpr double kNvlinkRingSimple = 3.4, kNvlinkRingLl128 = 1.9, kNvlinkTreeSimple = 4.0, kNvlinkTreeLl128 = 1.25;
constexpr double kNetRingSimple = 14.0, kNetRingLl128 = 4.0, kNetTreeSimple = 14.0, kNetTreeLl128 = 8.5;

TEST(Collectives, BusBandwidthInAndAcrossNodes) {
    HardwareConfig hw = testing::tinyGpt().hardware;  // 100 GB/s NVLink, 10 GB/s network
    hw.nvlink_efficiency = 0.8;
    hw.network_efficiency = 0.9;
    Collectives nccl(hw);
    EXPECT_DOUBLE_EQ(nccl.busBytesPerMs(true, 1), 100e9 * 0.8 / 1e3);
    EXPECT_DOUBLE_EQ(nccl.busBytesPerMs(false, 1), 10e9 * 0.9 / 1e3);
    EXPECT_DOUBLE_EQ(nccl.busBytesPerMs(false, 4), 4 * 10e9 * 0.9 / 1e3);  // one ring per member's port
    EXPECT_DOUBLE_EQ(nccl.busBytesPerMs(false, 16), 100e9 * 0.8 / 1e3);    // never above NVLink
    EXPECT_EQ(nccl.reduceScatterMs(1e8, {1, 1, 9e6}), 0);                  // one rank: nothing to do
    EXPECT_EQ(nccl.allReduceMs(0, {8, 1, 9e6}), 0);
}

// A 96 MB all-reduce over 16 nodes of 8 GPUs (128 ranks) at a bus bandwidth of 180 GB/s
// (1.8e8 bytes/ms): the ring takes 2·127 steps, 2·15 of them across nodes; the tree a chain of
// 7 links in each node and log2(16) = 4 levels across, up and down.
TEST(Collectives, AllReduceRunsWhatNcclsModelSaysIsFastest) {
    const CollectiveGroup group{128, 16, 1.8e8};
    const double bytes = 96e6, bus = 1.8e8;
    // Ring, Simple: the latency 1.4× ("plateau", every one of 64 channels × 128 ranks has ≥ 64 B).
    const double ringSimple = 1.4 * (kBaseSimple + 224 * kNvlinkRingSimple + 30 * kNetRingSimple) * 1e-3 +
                              2.0 * 127 / 128 * bytes / bus;
    // Ring, LL128: 0.92 of the bus bandwidth, no plateau.
    const double ringLl128 =
        (kBaseLl128 + 224 * kNvlinkRingLl128 + 30 * kNetRingLl128) * 1e-3 + 2.0 * 127 / 128 * bytes / (0.92 * bus);
    // Tree: half of 0.92 of the bus bandwidth, times the medium-size correction at
    // log2(96e6 / 64) = 20.5 → index 20: 0.8 for Simple, 0.9 for LL128 (and 120/128 across nodes).
    const double treeSimple =
        (kBaseSimple + 2 * (7 * kNvlinkTreeSimple + 4 * kNetTreeSimple)) * 1e-3 + bytes / (bus * 0.92 * 0.5 * 0.8);
    const double treeLl128 = (kBaseLl128 + 2 * (7 * kNvlinkTreeLl128 + 4 * kNetTreeLl128)) * 1e-3 +
                             bytes / (bus * 0.92 * (120.0 / 128) * 0.5 * 0.9);
    EXPECT_NEAR(Collectives::ringMs(true, bytes, group, Protocol::Simple), ringSimple, 1e-9);
    EXPECT_NEAR(Collectives::ringMs(true, bytes, group, Protocol::LL128), ringLl128, 1e-9);
    EXPECT_NEAR(Collectives::treeAllReduceMs(bytes, group, Protocol::Simple), treeSimple, 1e-9);
    EXPECT_NEAR(Collectives::treeAllReduceMs(bytes, group, Protocol::LL128), treeLl128, 1e-9);
    // By hand: ring 2.724 / 1.710 ms, tree 1.626 / 1.474 ms: the tree with LL128 is fastest.
    EXPECT_NEAR(treeLl128, 1.4736, 1e-3);
    const CollectiveChoice choice = Collectives(HardwareConfig{}).allReduce(bytes, group);
    EXPECT_EQ(choice.algorithm, Algorithm::Tree);
    EXPECT_EQ(choice.protocol, Protocol::LL128);
    EXPECT_NEAR(choice.ms, treeLl128, 1e-9);
}

// Trees win where the ring's latency, which grows with the ranks, outweighs their lower
// bandwidth: small messages across many nodes. Inside a node, or for large messages, the ring.
TEST(Collectives, SmallAcrossManyNodesPickTreeLargeInsideANodePickRing) {
    const Collectives nccl{HardwareConfig{}};
    // 1 MiB over 64 nodes × 8 (512 ranks): the ring's 1022 steps cost milliseconds of latency
    // (LL128: 14 + 896·1.9 + 126·4 = 2220 µs); the tree's 2·(7 links + 6 levels) cost 133.5 µs
    // with LL128 (+ 1 MiB at 0.6 of its bandwidth: index log2(16384) = 14).
    const double mib = 1 << 20;
    const CollectiveChoice small = nccl.allReduce(mib, {512, 64, 1.8e8});
    EXPECT_EQ(small.algorithm, Algorithm::Tree);
    EXPECT_NEAR(small.ms,
                (kBaseLl128 + 2 * (7 * kNvlinkTreeLl128 + 6 * kNetTreeLl128)) * 1e-3 +
                    mib / (1.8e8 * 0.92 * (120.0 / 128) * 0.5 * 0.6),
                1e-9);
    // 96 MB inside one node of 8 at 231 GB/s: the ring with Simple, 14 NVLink steps.
    const CollectiveChoice large = nccl.allReduce(96e6, {8, 1, 2.31e8});
    EXPECT_EQ(large.algorithm, Algorithm::Ring);
    EXPECT_EQ(large.protocol, Protocol::Simple);
    EXPECT_NEAR(large.ms, (kBaseSimple + 14 * kNvlinkRingSimple) * 1e-3 + 2.0 * 7 / 8 * 96e6 / 2.31e8, 1e-9);
    // Inside a node the ring wins from a megabyte up: its bandwidth is the higher. Below, NCCL's
    // model prefers the chain with LL128 (7 links of 1.25 µs each way against 14 ring steps of
    // 1.9 µs); at 100 kB 14 + 14·1.25 = 31.5 µs + 1e5 B at 0.92·7/9·0.5·0.6 (index 10) of the bus
    // bandwidth, against the LL128 ring's 40.6 µs + 2·7/8·1e5 B at 0.92 of it.
    for (double bytes : {1e6, 1e7, 1e8, 1e9})
        EXPECT_EQ(nccl.allReduce(bytes, {8, 1, 2.31e8}).algorithm, Algorithm::Ring) << bytes;
    const CollectiveChoice chain = nccl.allReduce(1e5, {8, 1, 2.31e8});
    EXPECT_EQ(chain.algorithm, Algorithm::Tree);
    EXPECT_NEAR(chain.ms, (kBaseLl128 + 2 * 7 * kNvlinkTreeLl128) * 1e-3 + 1e5 / (2.31e8 * 0.92 * 7 / 9 * 0.5 * 0.6),
                1e-9);
    EXPECT_LT(chain.ms, (kBaseLl128 + 14 * kNvlinkRingLl128) * 1e-3 + 2.0 * 7 / 8 * 1e5 / (0.92 * 2.31e8));
    // 4 GB across 16 nodes: bandwidth decides, and the ring's is the higher (tree 0.46 of the bus
    // bandwidth against 127/254 of it; no correction beyond index 22).
    const CollectiveChoice huge = nccl.allReduce(4e9, {128, 16, 1.8e8});
    EXPECT_EQ(huge.algorithm, Algorithm::Ring);
    EXPECT_EQ(huge.protocol, Protocol::Simple);
    EXPECT_NEAR(huge.ms,
                1.4 * (kBaseSimple + 224 * kNvlinkRingSimple + 30 * kNetRingSimple) * 1e-3 +
                    2.0 * 127 / 128 * 4e9 / 1.8e8,
                1e-9);
}

// NCCL runs trees for all-reduce only: a reduce-scatter or all-gather is a ring whatever its size,
// r − 1 steps, (r − 1)/r of the bytes.
TEST(Collectives, ReduceScatterAndAllGatherStayRings) {
    const Collectives nccl{HardwareConfig{}};
    const double mib = 1 << 20;
    const CollectiveChoice small = nccl.reduceScatter(mib, {512, 64, 1.8e8});
    EXPECT_EQ(small.algorithm, Algorithm::Ring);
    EXPECT_EQ(small.protocol, Protocol::LL128);  // 1117 µs of latency against Simple's 2414
    EXPECT_NEAR(small.ms,
                (kBaseLl128 + 448 * kNvlinkRingLl128 + 63 * kNetRingLl128) * 1e-3 + 511.0 / 512 * mib / (0.92 * 1.8e8),
                1e-9);
    // One rank per node (a data-parallel group of tp-8 GPUs): every step crosses the network,
    // at the tree's network latency ("latencies are fully exposed"). A 96 MB bucket over 48
    // nodes at 45 GB/s: Simple 666.4 µs + 2.089 ms, LL128 413.5 µs + 2.271 ms.
    const double bucket = 96e6;
    const CollectiveChoice spread = nccl.allGather(bucket, {48, 48, 4.5e7});
    EXPECT_EQ(spread.algorithm, Algorithm::Ring);
    EXPECT_EQ(spread.protocol, Protocol::LL128);
    EXPECT_NEAR(spread.ms, (kBaseLl128 + 47 * kNetTreeLl128) * 1e-3 + 47.0 / 48 * bucket / (0.92 * 4.5e7), 1e-9);
    EXPECT_NEAR(Collectives::ringMs(false, bucket, {48, 48, 4.5e7}, Protocol::Simple),
                (kBaseSimple + 47 * kNetTreeSimple) * 1e-3 + 47.0 / 48 * bucket / 4.5e7, 1e-9);
}

}  // namespace
}  // namespace mario
