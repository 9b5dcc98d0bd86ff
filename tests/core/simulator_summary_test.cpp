// The summary Simulator::run reports (critical chain, pipeline bound, FLOPs) is made by its timing
// loop, which runs the devices interleaved and stops a deadlocked device early (issue 45). Each
// test here computes the same numbers the way sim/LowerBound.cpp and sim/StepFlops.cpp do on
// walks of their own, device after device over whole programs, and asks for the same answer:
// the bounds to the last bit, the FLOPs (summed per device in the loop) within 1e-12.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/sim/LowerBound.h"
#include "core/sim/StepFlops.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// FLOPs that are no round numbers, different on every stage, so that sums in another order
// could differ in their last bits.
void giveFlops(Plan& plan) {
    for (std::size_t s = 0; s < plan.stages.size(); ++s) plan.stages[s].cost.forward_flops = 1.37e12 * (s + 1) + 0.3;
}

// The (stage, micro-batch) tables of the Rs and Is, numbered as the plan numbers them.
struct Marks {
    int microbatches = 1;
    std::vector<std::uint8_t> checkpointed, split;
    std::vector<int> identity;
};

Marks marksOf(const Plan& plan) {
    Marks marks;
    for (const auto& device : plan.devices)
        for (const Instruction& ins : device.program) marks.microbatches = std::max(marks.microbatches, ins.microbatch + 1);
    const std::size_t cells = plan.stages.size() * static_cast<std::size_t>(marks.microbatches);
    marks.checkpointed.assign(cells, 0);
    marks.split.assign(cells, 0);
    for (const auto& device : plan.devices)
        for (const Instruction& ins : device.program) {
            const std::size_t key = static_cast<std::size_t>(ins.stage) * marks.microbatches + ins.microbatch;
            if (ins.op == Op::Recompute) marks.checkpointed[key] = 1;
            if (ins.op == Op::BackwardInput) marks.split[key] = 1;
        }
    for (int m = 0; m < marks.microbatches; ++m) marks.identity.push_back(m);
    return marks;
}

// The summary of `plan` against the walks of LowerBound.cpp and StepFlops.cpp.
void expectSummaryOfWalks(const Plan& plan) {
    auto result = Simulator::run(plan);
    ASSERT_TRUE(result.ok()) << result.error().message;
    auto topology = PipelineTopology::build(plan);
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    const Marks marks = marksOf(plan);
    const double chain =
        criticalChain(plan, *topology, marks.checkpointed, marks.split, marks.microbatches, marks.identity);
    EXPECT_EQ(result->critical_chain_ms, chain);
    const double lower = std::max(result->busiest_device_ms, chain);
    EXPECT_EQ(result->lower_bound_ms, lower);
    EXPECT_EQ(result->tight_lower_bound_ms, std::max(lower, pipelineBound(plan, *topology)));
    const StepFlops walked = stepFlops(plan, result->deadlocked ? 0 : result->makespan_ms);
    ASSERT_GT(walked.model_flops, 0);
    EXPECT_NEAR(result->flops.model_flops, walked.model_flops, 1e-12 * walked.model_flops);
    EXPECT_NEAR(result->flops.hardware_flops, walked.hardware_flops, 1e-12 * walked.hardware_flops);
}

TEST(SimulatorSummary, OneFOneBWithRecomputationMatchesTheWalks) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
    giveFlops(plan);
    test::recomputeBeforeEachBackward(plan, 0);
    expectSummaryOfWalks(plan);
}

TEST(SimulatorSummary, ZeroBubbleSplitBackwardMatchesTheWalks) {
    Plan plan = test::unitPlan(Scheme::ZbH1, 4, 8);
    giveFlops(plan);
    expectSummaryOfWalks(plan);
}

TEST(SimulatorSummary, ChimerasTwoChainsMatchTheWalks) {
    Plan plan = test::unitPlan(Scheme::Chimera, 4, 8);
    giveFlops(plan);
    expectSummaryOfWalks(plan);
}

// A deadlocked device stops early; the summary still counts every instruction of the plan.
TEST(SimulatorSummary, ADeadlockedPlanCountsTheInstructionsNoDeviceReached) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
    giveFlops(plan);
    test::recomputeBeforeEachBackward(plan, 0);
    auto& program = plan.devices[0].program;
    const auto receive = std::find_if(program.begin(), program.end(),
                                      [](const Instruction& ins) { return ins.op == Op::RecvBackward; });
    ASSERT_NE(receive, program.end());
    std::rotate(program.begin(), receive, receive + 1);  // waits for a gradient before any forward
    auto result = Simulator::run(plan);
    ASSERT_TRUE(result.ok());
    ASSERT_TRUE(result->deadlocked);
    expectSummaryOfWalks(plan);
}

// Micro-batches whose forwards lie on both of Chimera's chains (no scheduler makes them; the
// simulator takes any plan): each takes the chain of its last forward in device order, as a walk
// of the programs one device after another finds it, however the loop interleaves the devices.
// The second chain's forwards are slower, so that which chain a micro-batch takes moves its
// chain's length.
TEST(SimulatorSummary, MicrobatchesOnTwoChainsTakeTheChainOfTheLastDevice) {
    Plan plan = test::unitPlan(Scheme::Chimera, 4, 8);
    giveFlops(plan);
    auto topology = PipelineTopology::build(plan);
    ASSERT_TRUE(topology.ok());
    for (std::size_t s = 0; s < plan.stages.size(); ++s)
        if (topology->chainOf(static_cast<int>(s)) == 1) plan.stages[s].cost.forward_ms = 3;
    std::vector<int> onChain[2];  // the micro-batches of each chain, in order
    for (const auto& device : plan.devices)
        for (const Instruction& ins : device.program)
            if (ins.op == Op::Forward) onChain[topology->chainOf(ins.stage)].push_back(ins.microbatch);
    for (auto& list : onChain) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    ASSERT_EQ(onChain[0].size(), onChain[1].size());
    ASSERT_FALSE(onChain[0].empty());
    // Messages are per (stage, micro-batch) and the chains have stages of their own, so a
    // renamed micro-batch's messages meet no other's.
    for (auto& device : plan.devices)
        for (Instruction& ins : device.program) {
            if (!hasMicrobatch(ins.op)) continue;
            const auto at = std::find(onChain[1].begin(), onChain[1].end(), ins.microbatch);
            if (at != onChain[1].end()) ins.microbatch = onChain[0][static_cast<std::size_t>(at - onChain[1].begin())];
        }
    expectSummaryOfWalks(plan);
}

}  // namespace
}  // namespace mario
