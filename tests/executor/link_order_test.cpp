// The order NCCL receives must follow: every cross-device message in its sender's program order.
#include <gtest/gtest.h>

#include "LinkOrder.h"
#include "UnitPlans.h"
#include "schedule/PipelineTopology.h"

namespace {

using mario::Op;
using mario::Scheme;
using mario::exec::LinkMessage;
using mario::exec::LinkOrder;

TEST(LinkOrder, OneFOneBCarriesActivationsDownAndGradientsUpInMicroBatchOrder) {
    auto plan = mario::test::makeUnitPlan(Scheme::OneFOneB, 2, 3);
    ASSERT_TRUE(plan.ok());
    auto topology = mario::PipelineTopology::build(*plan);
    ASSERT_TRUE(topology.ok());
    const auto order = LinkOrder::build(*plan, *topology);
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
    auto plan = mario::test::makeUnitPlan(Scheme::GPipe, 2, 2);
    ASSERT_TRUE(plan.ok());
    // Device 0 sends mb 1 before mb 0: swap its two SEND_Fs (each after both forwards is valid).
    auto& program = plan->devices[0].program;
    std::vector<std::size_t> sends;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i].op == Op::SendForward) sends.push_back(i);
    ASSERT_EQ(sends.size(), 2u);
    std::swap(program[sends[0]].microbatch, program[sends[1]].microbatch);
    auto topology = mario::PipelineTopology::build(*plan);
    ASSERT_TRUE(topology.ok());
    const auto order = LinkOrder::build(*plan, *topology);
    EXPECT_EQ(order.position(0, 1, {true, 1, 1}), 0u);
    EXPECT_EQ(order.position(0, 1, {true, 1, 0}), 1u);
}

TEST(LinkOrder, ChimeraLinksCarryBothChainsInTheSendersOrder) {
    auto plan = mario::test::makeUnitPlan(Scheme::Chimera, 4, 4);
    ASSERT_TRUE(plan.ok());
    auto topology = mario::PipelineTopology::build(*plan);
    ASSERT_TRUE(topology.ok());
    const auto order = LinkOrder::build(*plan, *topology);
    // Independently: walk device 1's program and list what it sends to device 2.
    std::vector<LinkMessage> expected;
    for (const auto& in : plan->devices[1].program) {
        if (in.op == Op::SendForward && topology->deviceOf(topology->nextStage(in.stage)) == 2)
            expected.push_back({true, topology->nextStage(in.stage), in.microbatch});
        if (in.op == Op::SendBackward && topology->previousStage(in.stage) >= 0 &&
            topology->deviceOf(topology->previousStage(in.stage)) == 2)
            expected.push_back({false, topology->previousStage(in.stage), in.microbatch});
    }
    EXPECT_EQ(order.messages(1, 2), expected);
    // Both chains use the link: down-chain activations and up-chain gradients.
    bool forward = false, backward = false;
    for (const auto& m : expected) (m.forward ? forward : backward) = true;
    EXPECT_TRUE(forward && backward);
    // Only neighbours talk.
    for (auto [from, to] : order.links()) EXPECT_EQ(std::abs(from - to), 1);
}

}  // namespace
