// PeerWatch (executor/dist/PeerWatch.h): the liveness signal NCCL's watchdog polls. A rank whose
// process ends (its mesh goes away, as at exit) or that gives up (reportFailure) must show up in
// every other rank's watch; a healthy world and a disarmed watch must not.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "executor/dist/PeerWatch.h"
#include "tests/executor/LocalMesh.h"

namespace {

using mario::dist::PeerWatch;

// Polls as the watchdog does until `watch` reports, or gives up after `bound` (a bound on a hang,
// not a speed requirement: the report is expected within one socket close).
std::optional<std::string> firstReport(const PeerWatch& watch, std::chrono::seconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
        if (auto failure = watch.failure()) return failure;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}

TEST(DistPeerWatch, AHealthyWorldReportsNothing) {
    auto world = mario::test::connectLocalWorld(3);
    ASSERT_TRUE(world[0] && world[1] && world[2]);
    const PeerWatch watch(*world[0]);
    EXPECT_FALSE(watch.failure());
    EXPECT_FALSE(watch.hook()());
}

TEST(DistPeerWatch, ARankThatDiesIsReportedByEveryOther) {
    auto world = mario::test::connectLocalWorld(3);
    ASSERT_TRUE(world[0] && world[1] && world[2]);
    const PeerWatch zero(*world[0]), one(*world[1]);
    const auto hook = zero.hook();  // what NcclSetup::peerFailure holds
    world[2].reset();               // rank 2's process ends: its sockets close
    const auto seenByZero = firstReport(zero, std::chrono::seconds(10));
    const auto seenByOne = firstReport(one, std::chrono::seconds(10));
    ASSERT_TRUE(seenByZero);
    ASSERT_TRUE(seenByOne);
    EXPECT_EQ(*seenByZero, "rank 2 closed its connection (did it die?)");
    EXPECT_EQ(*seenByOne, *seenByZero);
    EXPECT_EQ(hook(), seenByZero);
}

TEST(DistPeerWatch, ARankThatGivesUpIsReportedWithItsOwnReason) {
    auto world = mario::test::connectLocalWorld(3);
    ASSERT_TRUE(world[0] && world[1] && world[2]);
    const PeerWatch zero(*world[0]);
    world[1]->reportFailure("rank 1: device 1, instruction 1F0 (program[0]): CUDA out of memory");
    const auto seen = firstReport(zero, std::chrono::seconds(10));
    ASSERT_TRUE(seen);
    EXPECT_EQ(*seen, "rank 1: device 1, instruction 1F0 (program[0]): CUDA out of memory");
}

TEST(DistPeerWatch, ADisarmedWatchIgnoresPeersThatLeave) {
    auto world = mario::test::connectLocalWorld(2);
    ASSERT_TRUE(world[0] && world[1]);
    PeerWatch watch(*world[0]);
    const auto hook = watch.hook();
    watch.disarm();  // the run's transfers are over; peers now exit because they are done
    world[1].reset();
    // The close itself is visible to the mesh, which is how the check knows it has happened.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!world[0]->failure() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(world[0]->failure());
    EXPECT_FALSE(watch.failure());
    EXPECT_FALSE(hook());
}

}  // namespace
