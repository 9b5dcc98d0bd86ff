// The Mario paper's Figure 2, end to end: a 4-stage 1F1B pipeline, 4 micro-batches,
// F = 1, B = 2, R = 1, free links. Expected makespans from the paper (§3.1, docs/execution-model.md):
// 21 base, 28 checkpointed, 25 + overlap, 23 + redundancy, 22 + prepose; peak activations
// 4/3/2/1 micro-batches on devices 0..3 before and one micro-batch on every device after.
#include <gtest/gtest.h>

#include <cmath>

#include "core/passes/PassManager.h"
#include "core/passes/Passes.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

Plan figure2Plan() { return test::unitPlan(Scheme::OneFOneB, 4, 4); }

double makespanAfter(const std::vector<PassId>& passes) {
    Plan plan = figure2Plan();
    auto run = runPasses(plan, passes);
    EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
    EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
    auto sim = Simulator::run(plan);
    EXPECT_TRUE(sim.ok());
    return sim->makespan_ms;
}

// Full activations held at the peak: the dynamic peak counted in whole activation sets
// (checkpoints are 1% of an activation set here, so they never add up to another one).
std::vector<int> peakActivationSets(const Plan& plan) {
    auto sim = Simulator::run(plan);
    EXPECT_TRUE(sim.ok());
    std::vector<int> sets;
    for (const auto& device : sim->devices)
        sets.push_back(static_cast<int>(std::floor(device.peak_dynamic_bytes / 1000.0)));
    return sets;
}

TEST(Figure2, BaseOneFOneBTakes21) { EXPECT_DOUBLE_EQ(makespanAfter({}), 21.0); }

TEST(Figure2, CheckpointingTakes28) { EXPECT_DOUBLE_EQ(makespanAfter({PassId::Checkpoint}), 28.0); }

TEST(Figure2, OverlapRecomputeTakes25) { EXPECT_DOUBLE_EQ(makespanAfter({PassId::Checkpoint, PassId::Overlap}), 25.0); }

TEST(Figure2, RemoveRedundancyTakes23) {
    EXPECT_DOUBLE_EQ(makespanAfter({PassId::Checkpoint, PassId::Overlap, PassId::Redundancy}), 23.0);
}

TEST(Figure2, PreposeForwardTakes22) {
    EXPECT_DOUBLE_EQ(makespanAfter({PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose}), 22.0);
}

TEST(Figure2, PeakActivationsBalanceFromFourThreeTwoOneToOne) {
    Plan plan = figure2Plan();
    EXPECT_EQ(peakActivationSets(plan), (std::vector<int>{4, 3, 2, 1}));
    auto run = runPasses(plan, *parsePassList("all"));
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(peakActivationSets(plan), (std::vector<int>{1, 1, 1, 1}));
}

TEST(Figure2, RedundancyRemovesExactlyTheLastStagesRecomputes) {
    // On the last stage every R follows its own F directly: all four are redundant, and no other.
    Plan plan = figure2Plan();
    ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint, PassId::Overlap}).ok());
    auto run = runPasses(plan, {PassId::Redundancy});
    ASSERT_TRUE(run.ok());
    ASSERT_EQ(run->steps.size(), 1u);
    ASSERT_EQ(run->steps[0].changes.size(), 4u);
    for (const auto& change : run->steps[0].changes) {
        EXPECT_EQ(change.kind, ChangeKind::Removed);
        EXPECT_EQ(change.device, 3);
        EXPECT_EQ(change.instruction.op, Op::Recompute);
    }
}

TEST(Figure2, PreposeMovesForwardsIntoTheWarmupBubbles) {
    // Hand-worked: device 1 runs F3 and device 2 runs F2 inside the bubble before B0.
    Plan plan = figure2Plan();
    ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy}).ok());
    auto report = preposeForward(plan);
    ASSERT_TRUE(report.ok());
    std::vector<std::pair<int, std::string>> moved;
    for (const auto& change : report->changes) moved.push_back({change.device, toActionString(change.instruction)});
    EXPECT_EQ(moved, (std::vector<std::pair<int, std::string>>{{1, "1F3"}, {2, "2F2"}}));
}

}  // namespace
}  // namespace mario

namespace mario {
namespace {

TEST(Figure2, PreposeRespectsTheMemoryLimit) {
    // Before prepose (checkpoints 10 bytes, activations 1000): device 1 peaks at 1020 and
    // device 2 at 1010. Preposing device 1's F3 would hold one more checkpoint (1030), device
    // 2's F2 likewise (1020). With a 1025-byte limit only device 2 may move; with 1015 neither.
    Plan plan = figure2Plan();
    plan.info.memory_limit_bytes = 1025;
    auto run = runPasses(plan, *parsePassList("all"));
    ASSERT_TRUE(run.ok());
    std::vector<std::string> preposed;
    for (const auto& step : run->steps)
        if (step.pass == PassId::Prepose)
            for (const auto& change : step.changes) preposed.push_back(toActionString(change.instruction));
    EXPECT_EQ(preposed, std::vector<std::string>{"2F2"});
    auto sim = Simulator::run(plan);
    EXPECT_DOUBLE_EQ(sim->devices[1].peak_bytes, 1020);
    EXPECT_DOUBLE_EQ(sim->devices[2].peak_bytes, 1020);

    Plan tight = figure2Plan();
    tight.info.memory_limit_bytes = 1015;
    ASSERT_TRUE(runPasses(tight, *parsePassList("all")).ok());
    EXPECT_DOUBLE_EQ(Simulator::run(tight)->makespan_ms, 23.0);
}

}  // namespace
}  // namespace mario
