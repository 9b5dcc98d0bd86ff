// TcpMesh::connect's start-up failures (executor/dist/Rendezvous.h): each is one line, the same
// on every rank that took part, and none waits past its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/dist/Socket.h"
#include "executor/dist/TcpMesh.h"

namespace {

using mario::dist::LaunchEnv;
using mario::dist::TcpMesh;
using Clock = std::chrono::steady_clock;

int freePort() {
    auto probe = mario::dist::Socket::listenOn(0);
    EXPECT_TRUE(probe.ok());
    return probe.ok() ? probe->localPort() : 0;
}

LaunchEnv localEnv(int rank, int world, int port) { return LaunchEnv{rank, world, 0, "127.0.0.1", port, port}; }

// Starts one connect per env, each in its own thread, and returns every rank's error ("" if none).
std::vector<std::string> errorsOf(const std::vector<LaunchEnv>& envs, double timeout) {
    std::vector<std::string> errors(envs.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < envs.size(); ++i)
        threads.emplace_back([&, i] {
            auto mesh = TcpMesh::connect(envs[i], timeout);
            if (!mesh.ok()) errors[i] = mesh.error().message;
        });
    for (auto& t : threads) t.join();
    return errors;
}

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(DistRendezvous, WithoutRankZeroAPeerGivesUpAtItsTimeout) {
    const int port = freePort();
    const auto start = Clock::now();
    auto mesh = TcpMesh::connect(localEnv(1, 2, port), 0.3);
    const double took = secondsSince(start);
    ASSERT_FALSE(mesh.ok());
    EXPECT_EQ(mesh.error().message, "rank 1 could not reach the rendezvous at 127.0.0.1:" + std::to_string(port) +
                                        " within 0.3 s: Connection refused");
    EXPECT_GE(took, 0.2);
    EXPECT_LT(took, 2.0);
}

TEST(DistRendezvous, AWorldSizeMismatchIsReportedOnBothSides) {
    const int port = freePort();
    auto errors = errorsOf({localEnv(0, 2, port), localEnv(1, 4, port)}, 5.0);
    EXPECT_EQ(errors[0], "rank 1 says WORLD_SIZE=4 but rank 0 has 2");
    EXPECT_EQ(errors[1], "rank 1 says WORLD_SIZE=4 but rank 0 has 2");
}

TEST(DistRendezvous, ARankRegisteringTwiceFailsEveryone) {
    const int port = freePort();
    auto errors = errorsOf({localEnv(0, 3, port), localEnv(1, 3, port), localEnv(1, 3, port)}, 5.0);
    for (const auto& e : errors) EXPECT_EQ(e, "rank 1 registered twice");
}

TEST(DistRendezvous, RankZeroNamesTheRanksThatNeverCameAndTellsThoseThatDid) {
    const int port = freePort();
    const auto start = Clock::now();
    auto errors = errorsOf({localEnv(0, 4, port), localEnv(2, 4, port)}, 0.5);
    EXPECT_LT(secondsSince(start), 3.0);
    const std::string expected =
        "rank 0 waited 0.5 s at the rendezvous on port " + std::to_string(port) + " but ranks 1, 3 never registered";
    EXPECT_EQ(errors[0], expected);
    EXPECT_EQ(errors[1], expected);
}

TEST(DistRendezvous, ATakenRendezvousPortIsReportedWithTheWayOut) {
    auto squatter = mario::dist::Socket::listenOn(0);
    ASSERT_TRUE(squatter.ok());
    const int port = squatter->localPort();
    auto mesh = TcpMesh::connect(localEnv(0, 2, port), 1.0);
    ASSERT_FALSE(mesh.ok());
    EXPECT_EQ(mesh.error().message, "rank 0 could not listen for the rendezvous on port " + std::to_string(port) +
                                        ": Address already in use (another job on this port? set MARIO_RDZV_PORT)");
}

TEST(DistRendezvous, AStrangerAtTheRendezvousPortIsIgnored) {
    const int port = freePort();
    std::unique_ptr<TcpMesh> zero;
    std::string zeroError;
    std::thread rank0([&] {
        auto mesh = TcpMesh::connect(localEnv(0, 2, port), 5.0);
        if (mesh.ok()) zero = std::move(mesh.value());
        else zeroError = mesh.error().message;
    });
    // A client that connects and hangs up without registering (a port probe), then a real rank.
    const auto deadline = mario::dist::deadlineAfter(5.0);
    auto stranger = mario::dist::Socket::connectTo("127.0.0.1", port, deadline);
    while (!stranger.ok() && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // rank 0 is not listening yet
        stranger = mario::dist::Socket::connectTo("127.0.0.1", port, deadline);
    }
    ASSERT_TRUE(stranger.ok()) << stranger.error().message;
    stranger = mario::Result<mario::dist::Socket>(mario::dist::Socket());  // hang up
    auto one = TcpMesh::connect(localEnv(1, 2, port), 5.0);
    rank0.join();
    ASSERT_TRUE(zero) << zeroError;
    ASSERT_TRUE(one.ok()) << one.error().message;
    (*one)->send(0, mario::dist::MessageKey{1, 0, 0, 0}, std::vector<std::byte>(3, std::byte{7}));
    auto got = zero->receive(1, mario::dist::MessageKey{1, 0, 0, 0}, 5.0);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(got->size(), 3u);
}

}  // namespace
