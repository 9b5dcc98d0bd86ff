// The order NCCL receives must follow: every cross-device message in its sender's program order.
#include <gtest/gtest.h>

#include "core/schedule/PipelineTopology.h"
#include "executor/LinkBook.h"
#include "executor/LinkOrder.h"
#include "tests/common/UnitPlans.h"

namespace {

using mario::Op;
using mario::Scheme;
using mario::exec::LinkBook;
using mario::exec::LinkMessage;
using mario::exec::LinkOrder;

// A generated unit plan; `swapSends` makes device 0 send mb 1 before mb 0 (GPipe 2 × 2: both
// SEND_Fs stand after both forwards, so swapping their micro-batches keeps the plan valid).
mario::Plan unitPlan(Scheme scheme, int devices, int microbatches, bool swapSends = false) {
    auto plan = mario::test::makeUnitPlan(scheme, devices, microbatches);
    EXPECT_TRUE(plan.ok());
    if (swapSends) {
        auto& program = plan->devices[0].program;
        std::vector<std::size_t> sends;
        for (std::size_t i = 0; i < program.size(); ++i)
            if (program[i].op == Op::SendForward) sends.push_back(i);
        EXPECT_EQ(sends.size(), 2u);
        std::swap(program[sends[0]].microbatch, program[sends[1]].microbatch);
    }
    return std::move(plan).value();
}

mario::PipelineTopology topologyOf(const mario::Plan& plan) {
    auto topology = mario::PipelineTopology::build(plan);
    EXPECT_TRUE(topology.ok());
    return std::move(topology).value();
}

LinkOrder orderOf(const mario::Plan& plan) { return LinkOrder::build(plan, topologyOf(plan)); }

TEST(LinkOrder, OneFOneBCarriesActivationsDownAndGradientsUpInMicroBatchOrder) {
    const auto order = orderOf(unitPlan(Scheme::OneFOneB, 2, 3));
    using Link = std::pair<int, int>;
    EXPECT_EQ(order.links(), (std::vector<Link>{{0, 1}, {1, 0}}));
    // Hand-worked: device 0 sends F of stage 0 for mb 0, 1, 2 to stage 1; device 1 sends the
    // gradients of stage 1 back to stage 0 in the same micro-batch order.
    EXPECT_EQ(order.messages(0, 1), (std::vector<LinkMessage>{{true, 1, 0}, {true, 1, 1}, {true, 1, 2}}));
    EXPECT_EQ(order.messages(1, 0), (std::vector<LinkMessage>{{false, 0, 0}, {false, 0, 1}, {false, 0, 2}}));
    EXPECT_EQ(order.position(0, 1, {true, 1, 2}), 2u);
    EXPECT_FALSE(order.position(0, 1, {false, 0, 0}).has_value()) << "gradients never go down";
    EXPECT_TRUE(order.messages(1, 1).empty());
}

TEST(LinkOrder, FollowsTheSenderWhenItSendsOutOfMicroBatchOrder) {
    const auto order = orderOf(unitPlan(Scheme::GPipe, 2, 2, true));
    EXPECT_EQ(order.position(0, 1, {true, 1, 1}), 0u);
    EXPECT_EQ(order.position(0, 1, {true, 1, 0}), 1u);
}

TEST(LinkOrder, ChimeraLinksCarryBothChainsInTheSendersOrder) {
    const auto plan = unitPlan(Scheme::Chimera, 4, 4);
    const auto topology = topologyOf(plan);
    const auto order = orderOf(plan);
    // Independently: walk device 1's program and list what it sends to device 2.
    std::vector<LinkMessage> expected;
    for (const auto& in : plan.devices[1].program) {
        if (in.op == Op::SendForward && topology.deviceOf(topology.nextStage(in.stage)) == 2)
            expected.push_back({true, topology.nextStage(in.stage), in.microbatch});
        if (in.op == Op::SendBackward && topology.previousStage(in.stage) >= 0 &&
            topology.deviceOf(topology.previousStage(in.stage)) == 2)
            expected.push_back({false, topology.previousStage(in.stage), in.microbatch});
    }
    EXPECT_EQ(order.messages(1, 2), expected);
    // Both chains use the link: down-chain activations and up-chain gradients.
    bool forward = false, backward = false;
    for (const auto& m : expected) (m.forward ? forward : backward) = true;
    EXPECT_TRUE(forward && backward);
    // Only neighbours talk.
    for (auto [from, to] : order.links()) EXPECT_EQ(std::abs(from - to), 1);
}

// The receiving side of the NCCL transport, without a GPU: device 0 sends mb 1 before mb 0.
TEST(LinkBook, PostsReceivesInTheSendersOrderAndStartsOverEveryIteration) {
    const auto order = orderOf(unitPlan(Scheme::GPipe, 2, 2, true));
    LinkBook receiver(order, 1);
    const LinkMessage mb0{true, 1, 0}, mb1{true, 1, 1};
    for (int iteration = 0; iteration < 2; ++iteration) {
        // Device 1 wants mb 0 first: mb 1, sent first, must be posted before it.
        EXPECT_EQ(receiver.receivesToPost(0, mb0), (std::vector<LinkMessage>{mb1, mb0})) << "iteration " << iteration;
        receiver.taken(mb0);
        EXPECT_TRUE(receiver.receivesToPost(0, mb1).empty()) << "posted already, it only waits";
        receiver.taken(mb1);
        EXPECT_THROW(receiver.receivesToPost(0, mb0), std::runtime_error) << "a second RECV of the same message";
        EXPECT_NO_THROW(receiver.beginIteration());
    }
    EXPECT_THROW(receiver.receivesToPost(0, LinkMessage{true, 1, 5}), std::runtime_error);
    // A message posted but never taken is reported when the next iteration starts.
    (void)receiver.receivesToPost(0, mb1);
    EXPECT_THROW(receiver.beginIteration(), std::runtime_error);
}

TEST(LinkBook, ARepeatedSendIsSkippedUntilTheNextIteration) {
    const auto order = orderOf(unitPlan(Scheme::OneFOneB, 2, 2));
    LinkBook sender(order, 0);
    EXPECT_TRUE(sender.firstSend(1, {true, 1, 0}));
    EXPECT_FALSE(sender.firstSend(1, {true, 1, 0}));
    EXPECT_TRUE(sender.firstSend(1, {true, 1, 1}));
    sender.beginIteration();
    EXPECT_TRUE(sender.firstSend(1, {true, 1, 0})) << "every iteration sends its messages again";
}

}  // namespace
