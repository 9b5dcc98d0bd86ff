// TcpMesh (executor/dist/TcpMesh.h): four ranks as four threads of this process on 127.0.0.1 --
// the same sockets, rendezvous and reader threads as four processes on four nodes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/dist/Socket.h"
#include "executor/dist/TcpMesh.h"

namespace {

using mario::dist::LaunchEnv;
using mario::dist::MessageKey;
using mario::dist::TcpMesh;
using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;
using Meshes = std::vector<std::unique_ptr<TcpMesh>>;

// A port nobody listens on right now: bind port 0, read what the kernel chose, close.
int freePort() {
    auto probe = mario::dist::Socket::listenOn(0);
    EXPECT_TRUE(probe.ok());
    return probe.ok() ? probe->localPort() : 0;
}

LaunchEnv localEnv(int rank, int world, int port) { return LaunchEnv{rank, world, rank, "127.0.0.1", port, port}; }

// Connects `world` ranks, one thread each, as separate processes would.
Meshes connectWorld(int world) {
    const int port = freePort();
    Meshes meshes(static_cast<std::size_t>(world));
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
        threads.emplace_back([&, r] {
            auto mesh = TcpMesh::connect(localEnv(r, world, port), 5.0);
            if (mesh.ok()) meshes[static_cast<std::size_t>(r)] = std::move(mesh.value());
            else ADD_FAILURE() << mesh.error().message;
        });
    for (auto& t : threads) t.join();
    return meshes;
}

bool allConnected(const Meshes& meshes) {
    for (const auto& m : meshes)
        if (!m) return false;
    return true;
}

// Runs `body` on every rank at once, as the ranks' main threads would.
void onEveryRank(Meshes& meshes, const std::function<void(TcpMesh&)>& body) {
    std::vector<std::thread> threads;
    for (auto& mesh : meshes) threads.emplace_back([&] { body(*mesh); });
    for (auto& t : threads) t.join();
}

Bytes text(const std::string& s) {
    Bytes out(s.size());
    std::memcpy(out.data(), s.data(), s.size());
    return out;
}
std::string text(const Bytes& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(DistTcpMesh, EveryPairExchangesDistinctKeysInBothDirections) {
    Meshes world = connectWorld(4);
    ASSERT_TRUE(allConnected(world));
    onEveryRank(world, [](TcpMesh& mesh) {
        const int me = mesh.rank();
        EXPECT_EQ(mesh.worldSize(), 4);
        for (int peer = 0; peer < 4; ++peer) {  // self included: straight to the local mailbox
            mesh.send(peer, MessageKey{1, me, peer, 0}, text(std::to_string(me) + "->" + std::to_string(peer)));
            mesh.send(peer, MessageKey{2, me, peer, 7}, text("second " + std::to_string(me)));
        }
        for (int peer = 0; peer < 4; ++peer) {
            // Taken in the opposite order from sending: keys, not arrival order, decide.
            auto second = mesh.receive(peer, MessageKey{2, peer, me, 7}, 5.0);
            ASSERT_TRUE(second.ok()) << second.error().message;
            EXPECT_EQ(text(*second), "second " + std::to_string(peer));
            auto first = mesh.receive(peer, MessageKey{1, peer, me, 0}, 5.0);
            ASSERT_TRUE(first.ok()) << first.error().message;
            EXPECT_EQ(text(*first), std::to_string(peer) + "->" + std::to_string(me));
        }
    });
}

TEST(DistTcpMesh, OrderWithinAKeyIsKeptAcrossThreadsAndInterleavedKeys) {
    Meshes world = connectWorld(4);
    ASSERT_TRUE(allConnected(world));
    constexpr int kCount = 200, kThreads = 4;
    std::vector<std::thread> senders;
    // Several threads of rank 1 send to rank 2 at once: frames must not interleave.
    for (int t = 0; t < kThreads; ++t)
        senders.emplace_back([&, t] {
            for (int i = 0; i < kCount; ++i) {
                world[1]->send(2, MessageKey{3, t, 0, 0}, text(std::to_string(i)));
                if (i % 10 == 0) world[1]->send(2, MessageKey{4, t, i, 0}, Bytes(1000, std::byte{0x5A}));
            }
        });
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kCount; ++i) {
            auto got = world[2]->receive(1, MessageKey{3, t, 0, 0}, 5.0);
            ASSERT_TRUE(got.ok()) << got.error().message;
            ASSERT_EQ(text(*got), std::to_string(i)) << "thread " << t;
        }
    for (auto& s : senders) s.join();
    auto extra = world[2]->receive(1, MessageKey{4, 3, 190, 0}, 5.0);
    ASSERT_TRUE(extra.ok()) << extra.error().message;
    EXPECT_EQ(extra->size(), 1000u);
}

TEST(DistTcpMesh, EightMegabytePayloadsArriveIntactBothWaysAtOnce) {
    Meshes world = connectWorld(4);
    ASSERT_TRUE(allConnected(world));
    auto pattern = [](int seed) {
        Bytes b(8u << 20);
        std::uint32_t x = static_cast<std::uint32_t>(seed) * 2654435761u + 1;
        for (auto& byte : b) {
            x = x * 1664525u + 1013904223u;
            byte = static_cast<std::byte>(x >> 24);
        }
        return b;
    };
    const Bytes from0 = pattern(0), from3 = pattern(3);
    std::thread a([&] { world[0]->send(3, MessageKey{5, 0, 0, 0}, from0); });
    std::thread b([&] { world[3]->send(0, MessageKey{5, 3, 0, 0}, from3); });
    auto at3 = world[3]->receive(0, MessageKey{5, 0, 0, 0}, 5.0);
    auto at0 = world[0]->receive(3, MessageKey{5, 3, 0, 0}, 5.0);
    a.join();
    b.join();
    ASSERT_TRUE(at3.ok()) << at3.error().message;
    ASSERT_TRUE(at0.ok()) << at0.error().message;
    EXPECT_TRUE(*at3 == from0);
    EXPECT_TRUE(*at0 == from3);
}

TEST(DistTcpMesh, BroadcastGatherAndBarrierRepeatedly) {
    Meshes world = connectWorld(4);
    ASSERT_TRUE(allConnected(world));
    std::atomic<int> arrived[3] = {0, 0, 0};
    onEveryRank(world, [&](TcpMesh& mesh) {
        const int me = mesh.rank();
        for (int round = 0; round < 3; ++round) {
            auto shared = mesh.broadcast(me == 0 ? text("plan " + std::to_string(round)) : Bytes{}, 5.0);
            ASSERT_TRUE(shared.ok()) << shared.error().message;
            EXPECT_EQ(text(*shared), "plan " + std::to_string(round));

            const int root = (round + 2) % 4;
            auto all = mesh.gather(text("r" + std::to_string(me)), root, 5.0);
            ASSERT_TRUE(all.ok()) << all.error().message;
            if (me == root) {
                ASSERT_EQ(all->size(), 4u);
                for (int r = 0; r < 4; ++r)
                    EXPECT_EQ(text((*all)[static_cast<std::size_t>(r)]), "r" + std::to_string(r));
            } else {
                EXPECT_TRUE(all->empty());
            }

            // Nobody leaves a barrier before everyone has entered it.
            ++arrived[round];
            auto passed = mesh.barrier(5.0);
            ASSERT_TRUE(passed.ok()) << passed.error().message;
            EXPECT_EQ(arrived[round].load(), 4);
        }
    });
}

TEST(DistTcpMesh, AWorldOfOneNeedsNoNetwork) {
    // Port 1 is never bound by a test: a world of one must not even try.
    auto mesh = TcpMesh::connect(LaunchEnv{0, 1, 0, "", 0, 1}, 0.1);
    ASSERT_TRUE(mesh.ok()) << mesh.error().message;
    TcpMesh& self = **mesh;
    self.send(0, MessageKey{1, 2, 3, 4}, text("me"));
    auto got = self.receive(0, MessageKey{1, 2, 3, 4}, 1.0);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(text(*got), "me");
    EXPECT_TRUE(self.barrier(1.0).ok());
    auto all = self.gather(text("x"), 0, 1.0);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 1u);
}

TEST(DistTcpMesh, ANeverSentKeyTimesOutNamingKeyRankAndTimeout) {
    Meshes world = connectWorld(2);
    ASSERT_TRUE(allConnected(world));
    const auto start = Clock::now();
    auto got = world[0]->receive(1, MessageKey{9, 8, 7, 6}, 0.3);
    const double took = secondsSince(start);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().message, "no message <9/8/7/6> from rank 1 within 0.3 s");
    EXPECT_GE(took, 0.29);
    EXPECT_LT(took, 2.0);
}

TEST(DistTcpMesh, APeerThatGoesAwayFailsAWaitingReceiveAtOnce) {
    Meshes world = connectWorld(3);
    ASSERT_TRUE(allConnected(world));
    world[1]->send(0, MessageKey{6, 0, 0, 0}, text("last words"));

    std::latch waiting(1);
    std::string error = "(still waiting)";
    double took = 0;
    std::thread waiter([&] {
        waiting.count_down();
        const auto start = Clock::now();
        auto got = world[0]->receive(1, MessageKey{5, 0, 0, 0}, 30.0);
        took = secondsSince(start);
        error = got.ok() ? "(received)" : got.error().message;
    });
    waiting.wait();
    world[1].reset();  // as if rank 1 crashed: its connections end
    waiter.join();

    EXPECT_EQ(error, "rank 1 closed its connection before sending <5/0/0/0> (did it die?)");
    EXPECT_LT(took, 2.0);
    // What it sent before it went is still delivered, and the other peers are unaffected.
    auto last = world[0]->receive(1, MessageKey{6, 0, 0, 0}, 1.0);
    ASSERT_TRUE(last.ok()) << last.error().message;
    EXPECT_EQ(text(*last), "last words");
    world[2]->send(0, MessageKey{7, 0, 0, 0}, text("still here"));
    auto alive = world[0]->receive(2, MessageKey{7, 0, 0, 0}, 5.0);
    ASSERT_TRUE(alive.ok()) << alive.error().message;
    // A collective that needs the dead rank fails at once too, rather than at its timeout.
    const auto start = Clock::now();
    auto passed = world[0]->barrier(30.0);
    EXPECT_LT(secondsSince(start), 2.0);
    ASSERT_FALSE(passed.ok());
    EXPECT_NE(passed.error().message.find("rank 1 closed its connection"), std::string::npos) << passed.error().message;
}

TEST(DistTcpMesh, AbortWakesEveryWaiterWithItsReason) {
    Meshes world = connectWorld(2);
    ASSERT_TRUE(allConnected(world));
    std::latch waiting(2);
    std::vector<std::string> errors(2);
    std::vector<std::thread> waiters;
    for (int i = 0; i < 2; ++i)
        waiters.emplace_back([&, i] {
            waiting.count_down();
            auto got = world[0]->receive(1, MessageKey{1, i, 0, 0}, 30.0);
            errors[static_cast<std::size_t>(i)] = got.ok() ? "" : got.error().message;
        });
    waiting.wait();
    const auto start = Clock::now();
    world[0]->abort("device 0 failed: out of memory");
    world[0]->abort("a later echo");  // the first reason sticks
    for (auto& w : waiters) w.join();
    EXPECT_LT(secondsSince(start), 2.0);
    EXPECT_EQ(errors[0], "device 0 failed: out of memory");
    EXPECT_EQ(errors[1], "device 0 failed: out of memory");
    // Later waits fail the same way, even for a message that is already there.
    world[1]->send(0, MessageKey{2, 0, 0, 0}, text("late"));
    auto late = world[0]->receive(1, MessageKey{2, 0, 0, 0}, 1.0);
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.error().message, "device 0 failed: out of memory");
}

TEST(DistTcpMesh, MisuseIsReported) {
    Meshes world = connectWorld(2);
    ASSERT_TRUE(allConnected(world));
    EXPECT_THROW(world[0]->send(2, MessageKey{1, 0, 0, 0}, {}), std::invalid_argument);
    EXPECT_THROW(world[0]->send(1, MessageKey{-1, 0, 0, 0}, {}), std::invalid_argument);
    auto got = world[0]->receive(5, MessageKey{1, 0, 0, 0}, 0.1);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().message, "rank 0 cannot receive from rank 5, outside WORLD_SIZE=2");
}

}  // namespace
