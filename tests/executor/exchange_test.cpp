// The in-process exchange (executor/Exchange.h): a message wakes only its receiver, a failure
// wakes every waiter, REDUCE_GRAD's collect wakes once the last replica contributes. One shared
// condition variable woke every waiting thread on each message, so a 4,096-device plan spent its
// time in wake-ups and its receives timed out ("its sender never sent it", issue 39).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "executor/Exchange.h"

namespace {

using mario::exec::Direction;
using mario::exec::Exchange;

// Until `count` receives wait (the threads start in any order); never a timed assertion.
void awaitReceivers(const Exchange& exchange, std::size_t count) {
    while (exchange.waitingReceives() < count) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(Exchange, AMessageWakesOnlyItsReceiver) {
    constexpr int kReceivers = 64;
    Exchange exchange(600);
    std::vector<std::thread> threads;
    std::atomic<int> received{0};
    for (int stage = 0; stage < kReceivers; ++stage)
        threads.emplace_back([&, stage] {
            const torch::Tensor t = exchange.take(0, Direction::Forward, stage, 0, "receiver " + std::to_string(stage));
            if (t.item<double>() == stage) ++received;
        });
    awaitReceivers(exchange, kReceivers);
    for (int stage = 0; stage < kReceivers; ++stage)
        exchange.post(0, Direction::Forward, stage, 0, torch::full({1}, double(stage), torch::kFloat64));
    for (auto& t : threads) t.join();
    EXPECT_EQ(received.load(), kReceivers);
    // One wake-up each, and room for spurious ones. Every message woke every waiting receiver
    // before: 64 + 63 + ... + 1 = 2080 when they wait between the posts.
    EXPECT_LE(exchange.wakeups(), 2u * kReceivers);
}

TEST(Exchange, AFailureWakesEveryWaiterAndEveryGroup) {
    Exchange exchange(600);
    std::atomic<int> aborted{0};
    std::vector<std::thread> threads;
    for (int stage = 0; stage < 8; ++stage)
        threads.emplace_back([&, stage] {
            try {
                exchange.take(0, Direction::Backward, stage, 3, "waiter " + std::to_string(stage));
            } catch (const mario::exec::RunAborted&) {
                ++aborted;
            }
        });
    threads.emplace_back([&] {
        try {
            exchange.collect("blocks 0-1", 2);  // nobody contributes
        } catch (const mario::exec::RunAborted&) {
            ++aborted;
        }
    });
    awaitReceivers(exchange, 8);
    exchange.fail("device 3 failed");
    for (auto& t : threads) t.join();
    EXPECT_EQ(aborted.load(), 9);
    EXPECT_EQ(exchange.failure(), "device 3 failed");
}

TEST(Exchange, CollectWaitsForTheLastContribution) {
    Exchange exchange(600);
    std::atomic<int> collected{0};
    std::vector<std::thread> threads;
    for (int replica = 0; replica < 3; ++replica)
        threads.emplace_back([&] {
            exchange.contribute("head", 3, {});
            exchange.collect("head", 3);
            ++collected;
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(collected.load(), 3);
}

TEST(Exchange, ATimeoutListsSixteenOfTheBlockedAndCountsTheRest) {
    // A 4,096-device run's timeout listed every blocked device: one line of 112 kB.
    Exchange exchange(0.5);
    std::vector<std::string> messages(40);
    std::vector<std::thread> threads;
    for (int stage = 0; stage < 40; ++stage)
        threads.emplace_back([&, stage] {
            try {
                exchange.take(0, Direction::Forward, stage, 0, "waiter " + std::to_string(stage));
            } catch (const std::runtime_error& e) {
                messages[stage] = e.what();
            }
        });
    for (auto& t : threads) t.join();
    for (const std::string& message : messages) {
        ASSERT_NE(message.find("its sender never sent it"), std::string::npos) << message;
        std::size_t names = 0;
        for (auto at = message.find("waiter "); at != std::string::npos; at = message.find("waiter ", at + 1)) ++names;
        EXPECT_LE(names, 16u) << message;
        if (names == 16) {
            EXPECT_NE(message.find(" more"), std::string::npos) << message;
        }
    }
}

TEST(Exchange, AMessagePostedBeforeItsReceiveWaitsInItsMailbox) {
    Exchange exchange(600);
    exchange.post(1, Direction::Backward, 2, 7, torch::full({1}, 42.0, torch::kFloat64));
    EXPECT_EQ(exchange.take(1, Direction::Backward, 2, 7, "late").item<double>(), 42.0);
    EXPECT_EQ(exchange.wakeups(), 0u);  // it never waited
}

}  // namespace
