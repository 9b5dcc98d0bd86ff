// The CUDA backend's wiring between processes (executor/NcclSetup.h), without a GPU: the setup
// the runner hands NcclTransport carries Megatron's rank order, broadcasts over the TCP mesh and,
// above all, a peer-failure hook that reports a rank that died or gave up, which is what makes
// the transport's watchdog end the run instead of waiting inside NCCL forever. And what that
// watchdog decides from what it sees.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/LinkOrder.h"
#include "executor/NcclSetup.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/LocalMesh.h"

namespace {

using mario::exec::NcclRankInputs;
using mario::exec::NcclSetup;
using mario::exec::WatchdogObservation;

struct TwoDevicePlan {
    mario::Plan plan = *mario::test::makeUnitPlan(mario::Scheme::OneFOneB, 2, 2);
    mario::PipelineTopology topology = *mario::PipelineTopology::build(plan);
    mario::exec::LinkOrder links = mario::exec::LinkOrder::build(plan, topology);
    std::map<std::string, std::vector<int>> groups;
};

NcclRankInputs inputsFor(const TwoDevicePlan& p, int rank, int replicas) {
    NcclRankInputs in;
    in.rank = rank;
    in.device = rank / replicas;
    in.replicas = replicas;
    in.localRank = rank;
    in.topology = &p.topology;
    in.links = &p.links;
    in.groups = &p.groups;
    in.messageShape = {1, 16, 32};
    in.timeout_s = 7;
    return in;
}

TEST(NcclSetup, RanksFollowMegatronOrderAcrossReplicas) {
    TwoDevicePlan p;
    p.groups = {{"0:1E", {0, 1}}, {"1:2H", {2, 3}}};
    auto world = mario::test::connectLocalWorld(1);
    ASSERT_TRUE(world[0]);
    const mario::dist::PeerWatch watch(*world[0]);
    // Two replicas over two devices: rank = replica + 2 · device (RankLayout.h).
    const NcclSetup setup = mario::exec::makeNcclSetup(inputsFor(p, 3, 2), *world[0], watch);
    EXPECT_EQ(setup.rank, 3);
    EXPECT_EQ(setup.device, 1);
    EXPECT_EQ(setup.rankOfDevice(0), 1);  // rank 3 is replica 1: its device 0 is rank 1
    EXPECT_EQ(setup.rankOfDevice(1), 3);
    // 1F1B's links 0→1 and 1→0, for replica 0 then replica 1.
    const std::vector<std::pair<int, int>> expected{{0, 2}, {2, 0}, {1, 3}, {3, 1}};
    EXPECT_EQ(setup.linkRanks, expected);
    ASSERT_EQ(setup.reduceGroups.size(), 2u);
    EXPECT_EQ(setup.reduceGroups[1].second, (std::vector<int>{2, 3}));
    EXPECT_EQ(setup.cudaDevice, 3);
    EXPECT_EQ(setup.timeout_s, 7);
    EXPECT_EQ(setup.messageShape, (std::vector<std::int64_t>{1, 16, 32}));
}

TEST(NcclSetup, BroadcastsRankZerosBytesAndReportsADeadPeer) {
    TwoDevicePlan p;
    auto world = mario::test::connectLocalWorld(2);
    ASSERT_TRUE(world[0] && world[1]);
    const mario::dist::PeerWatch watch0(*world[0]), watch1(*world[1]);
    const NcclSetup zero = mario::exec::makeNcclSetup(inputsFor(p, 0, 1), *world[0], watch0);
    const NcclSetup one = mario::exec::makeNcclSetup(inputsFor(p, 1, 1), *world[1], watch1);

    // NCCL's unique ids travel this way: rank 0's bytes on both ranks.
    std::vector<std::byte> id(8);
    std::memcpy(id.data(), "ncclid!", 8);
    std::vector<std::byte> got0, got1;
    std::thread other([&] { got1 = one.broadcast({}); });
    got0 = zero.broadcast(id);
    other.join();
    EXPECT_EQ(got0, id);
    EXPECT_EQ(got1, id);

    // The hook the watchdog polls: quiet while rank 1 lives, its death once it is gone.
    ASSERT_TRUE(zero.peerFailure);
    EXPECT_FALSE(zero.peerFailure());
    world[1].reset();
    std::optional<std::string> seen;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(seen = zero.peerFailure()) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(seen);
    EXPECT_EQ(*seen, "rank 1 closed its connection (did it die?)");
    // And the watchdog aborts on it.
    WatchdogObservation look;
    look.peerFailure = seen;
    EXPECT_EQ(mario::exec::watchdogVerdict(look), seen);
}

TEST(NcclWatchdog, QuietWhileTransfersAreYoungAndNcclIsWell) {
    WatchdogObservation look;
    EXPECT_FALSE(mario::exec::watchdogVerdict(look));
    look.oldestInFlight_s = 29.5;
    look.timeout_s = 30;
    EXPECT_FALSE(mario::exec::watchdogVerdict(look));
}

TEST(NcclWatchdog, ATransferOlderThanTheTimeoutEndsTheRun) {
    WatchdogObservation look;
    look.rank = 2;
    look.timeout_s = 30;
    look.oldestInFlight_s = 30.5;
    look.oldestWhat = "sending the activation for stage 1 micro-batch 0 to device 1";
    EXPECT_EQ(mario::exec::watchdogVerdict(look),
              "rank 2: sending the activation for stage 1 micro-batch 0 to device 1 did not finish within 30 s "
              "(its peer never matched it)");
    look.ncclError = "remote process exited or there was a network error";
    EXPECT_NE(mario::exec::watchdogVerdict(look)->find("did not finish"), std::string::npos);
    look.oldestInFlight_s.reset();
    EXPECT_EQ(mario::exec::watchdogVerdict(look),
              "rank 2: NCCL reported remote process exited or there was a network error");
}

TEST(NcclWatchdog, APeersFailureComesFirstAsTheCause) {
    WatchdogObservation look;
    look.rank = 0;
    look.timeout_s = 30;
    look.oldestInFlight_s = 45;  // the wait the dead peer left behind
    look.ncclError = "unhandled system error";
    look.peerFailure = "rank 3: device 3, instruction 3B1 (program[9]): CUDA out of memory";
    EXPECT_EQ(mario::exec::watchdogVerdict(look), look.peerFailure);
}

// Found on an H200 (issue 33): two ranks on one GPU got only NCCL's "invalid usage". The ranks
// now compare their GPUs over the mesh first, and every rank names the two that share one.
TEST(NcclSetup, TwoRanksOnOneGpuAreNamedBeforeNcclRefusesThem) {
    EXPECT_FALSE(mario::exec::sharedGpuProblem({"node1/0000:00:06.0", "node1/0000:00:07.0", "node2/0000:00:06.0"}));
    const auto shared = mario::exec::sharedGpuProblem({"a/0000:00:06.0", "a/0000:00:07.0", "a/0000:00:06.0"});
    ASSERT_TRUE(shared);
    EXPECT_EQ(shared->rfind("ranks 0 and 2 both run on GPU a/0000:00:06.0, and NCCL needs a GPU of its own", 0), 0u)
        << *shared;

    TwoDevicePlan p;
    auto world = mario::test::connectLocalWorld(2);
    ASSERT_TRUE(world[0] && world[1]);
    std::vector<std::optional<std::string>> verdicts(2), apart(2);
    std::vector<std::thread> ranks;
    for (int r = 0; r < 2; ++r)
        ranks.emplace_back([&, r] {
            const mario::dist::PeerWatch watch(*world[r]);
            const NcclSetup setup = mario::exec::makeNcclSetup(inputsFor(p, r, 1), *world[r], watch);
            verdicts[r] = setup.checkGpus("host/0000:00:06.0");
            apart[r] = setup.checkGpus("host/0000:00:0" + std::to_string(6 + r) + ".0");
        });
    for (auto& t : ranks) t.join();
    for (int r = 0; r < 2; ++r) {
        ASSERT_TRUE(verdicts[r]) << "rank " << r;
        EXPECT_EQ(*verdicts[r], *mario::exec::sharedGpuProblem({"host/0000:00:06.0", "host/0000:00:06.0"}));
        EXPECT_FALSE(apart[r]) << *apart[r];
    }
}

}  // namespace
