// The SEND→RECV pairs of a simulated plan, against a schedule worked by hand: who produced
// each message, who consumed it, and when it was sent, arrived, was received and read.
#include <gtest/gtest.h>

#include "core/sim/MessageGraph.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// 1F1B, 2 devices, 2 micro-batches, F = 1, B = 2, latency 0.5 (as in critical_path_test):
//   device 0: F0 [0,1]  F1 [1,2]  RECV_B0 [2,5]  B0 [5,7]  RECV_B1 [7,8]  B1 [8,10]
//   device 1: RECV_F0 [0,1.5]  F0 [1.5,2.5]  B0 [2.5,4.5]  RECV_F1 [4.5,4.5]  F1 [4.5,5.5]  B1 [5.5,7.5]
class MessageGraphTest : public ::testing::Test {
protected:
    void SetUp() override {
        plan_ = test::unitPlan(Scheme::OneFOneB, 2, 2, 1, {}, LinkSpec{0.5, 0});
        auto sim = Simulator::run(plan_);
        ASSERT_TRUE(sim.ok());
        auto graph = MessageGraph::build(plan_, *sim);
        ASSERT_TRUE(graph.ok()) << graph.error().message;
        graph_ = std::move(graph).value();
    }
    InstructionRef at(int device, const char* action) const {
        const int index = test::indexOf(plan_, device, action);
        EXPECT_GE(index, 0) << action;
        return {device, index};
    }
    const Message& only(const std::vector<const Message*>& messages) const {
        EXPECT_EQ(messages.size(), 1u);
        return *messages.front();
    }

    Plan plan_;
    MessageGraph graph_;
};

TEST_F(MessageGraphTest, PairsEverySendWithItsReceive) {
    // Two activations down, two gradients up.
    EXPECT_EQ(graph_.messages().size(), 4u);
    const Message& f1 = only(graph_.incoming(at(1, "1F1")));
    EXPECT_FALSE(f1.backward);
    EXPECT_EQ(f1.stage, 1);
    EXPECT_EQ(f1.microbatch, 1);
    EXPECT_EQ(f1.producer, at(0, "0F1"));
    EXPECT_EQ(f1.send, at(0, "0SEND_F1"));
    EXPECT_EQ(f1.recv, at(1, "1RECV_F1"));
    EXPECT_EQ(f1.consumer, at(1, "1F1"));
    // Sent at 2, arrived at 2.5; device 1 reached its RECV only at 4.5 and read it then.
    EXPECT_DOUBLE_EQ(f1.sent_ms, 2);
    EXPECT_DOUBLE_EQ(f1.arrived_ms, 2.5);
    EXPECT_DOUBLE_EQ(f1.reached_ms, 4.5);
    EXPECT_DOUBLE_EQ(f1.received_ms, 4.5);
    EXPECT_DOUBLE_EQ(f1.consumed_ms, 4.5);
    EXPECT_DOUBLE_EQ(f1.waitedMs(), 0);
}

TEST_F(MessageGraphTest, GradientsGoBackUp) {
    const Message& b0 = only(graph_.incoming(at(0, "0B0")));
    EXPECT_TRUE(b0.backward);
    EXPECT_EQ(b0.stage, 0);  // the receiving stage
    EXPECT_EQ(b0.producer, at(1, "1B0"));
    EXPECT_EQ(b0.consumer, at(0, "0B0"));
    // Sent at 4.5 when device 1's B0 ended, arrived at 5; device 0 had waited since 2.
    EXPECT_DOUBLE_EQ(b0.sent_ms, 4.5);
    EXPECT_DOUBLE_EQ(b0.arrived_ms, 5);
    EXPECT_DOUBLE_EQ(b0.reached_ms, 2);
    EXPECT_DOUBLE_EQ(b0.consumed_ms, 5);
    EXPECT_DOUBLE_EQ(b0.waitedMs(), 3);
}

TEST_F(MessageGraphTest, LooksUpByEveryEnd) {
    // A compute finds what it reads (incoming) and what it feeds (outgoing); a SEND and a
    // RECV find their own message.
    EXPECT_TRUE(graph_.incoming(at(0, "0F0")).empty());  // the first stage reads no message
    const Message& f0 = only(graph_.outgoing(at(0, "0F0")));
    EXPECT_EQ(&only(graph_.outgoing(at(0, "0SEND_F0"))), &f0);
    EXPECT_EQ(&only(graph_.incoming(at(1, "1RECV_F0"))), &f0);
    EXPECT_EQ(graph_.receivedBy(at(1, "1RECV_F0")), &f0);
    EXPECT_EQ(graph_.receivedBy(at(1, "1F0")), nullptr);  // not a RECV
    EXPECT_DOUBLE_EQ(f0.waitedMs(), 1.5);                 // device 1 waited from 0 to 1.5
    // The last stage's B0 reads nothing from another device and feeds device 0's B0.
    EXPECT_TRUE(graph_.incoming(at(1, "1B0")).empty());
    EXPECT_EQ(only(graph_.outgoing(at(1, "1B0"))).consumer, at(0, "0B0"));
}

TEST_F(MessageGraphTest, RefusesAnotherPlansResult) {
    auto other = Simulator::run(test::unitPlan(Scheme::OneFOneB, 4, 4));
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(MessageGraph::build(plan_, *other).ok());
}

}  // namespace
}  // namespace mario
