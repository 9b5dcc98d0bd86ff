// The per-device bubble breakdown against schedules worked by hand, and on random plans
// against the simulator's own totals (busy, idle, hidden recomputation).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/passes/PassManager.h"
#include "core/sim/BubbleBreakdown.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/core/RandomPlans.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using test::simulate;

std::vector<DeviceBubbles> breakdown(const Plan& plan) {
    auto bubbles = bubbleBreakdown(plan, simulate(plan));
    EXPECT_TRUE(bubbles.ok()) << (bubbles.ok() ? "" : bubbles.error().message);
    return bubbles.ok() ? std::move(bubbles).value() : std::vector<DeviceBubbles>{};
}

TEST(BubbleBreakdown, Figure2OneFOneBByHand) {
    // 1F1B 4×4, F = 1, B = 2 (worked out in critical_path_test): device d starts at d, and
    // the last backward ends at 21, 19, 17, 15 on devices 0..3; each computes 4·1 + 4·2 = 12.
    const auto bubbles = breakdown(test::unitPlan(Scheme::OneFOneB, 4, 4));
    ASSERT_EQ(bubbles.size(), 4u);
    const double before[] = {0, 1, 2, 3}, after[] = {0, 2, 4, 6};
    for (int d = 0; d < 4; ++d) {
        SCOPED_TRACE(d);
        EXPECT_EQ(bubbles[d].device, d);
        EXPECT_DOUBLE_EQ(bubbles[d].compute_ms, 12);
        EXPECT_DOUBLE_EQ(bubbles[d].recompute_ms, 0);
        EXPECT_DOUBLE_EQ(bubbles[d].idle_before_ms, before[d]);
        EXPECT_DOUBLE_EQ(bubbles[d].idle_after_ms, after[d]);
        // 21 − 12 − before − after: 9, 6, 3, 0.
        EXPECT_DOUBLE_EQ(bubbles[d].idle_interior_ms, 9 - 3 * d);
    }
}

// Two devices, one micro-batch, F = 1, B = 2, R = `recompute`, device 0 recomputing its
// forward right before it asks for the gradient.
Plan recomputeBeforeTheWait(double recompute) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1, 1, test::UnitStage{.recompute = recompute});
    auto& program = plan.devices[0].program;
    const int recv = test::indexOf(plan, 0, "0RECV_B0");
    EXPECT_GE(recv, 0);
    program.insert(program.begin() + recv, Instruction{Op::Recompute, 0, 0});
    return plan;
}

TEST(BubbleBreakdown, RecomputeInTheWaitIsHidden) {
    // Device 1: F [1,2], B [2,4], its gradient reaches device 0 at 4. Device 0: F [0,1],
    // R [1,2], waits until 4, B [4,6]. Without R it would have waited from 1: R is hidden.
    const auto bubbles = breakdown(recomputeBeforeTheWait(1));
    ASSERT_EQ(bubbles.size(), 2u);
    EXPECT_DOUBLE_EQ(bubbles[0].compute_ms, 3);
    EXPECT_DOUBLE_EQ(bubbles[0].recompute_ms, 1);
    EXPECT_DOUBLE_EQ(bubbles[0].recompute_hidden_ms, 1);
    EXPECT_DOUBLE_EQ(bubbles[0].recomputeExposedMs(), 0);
    EXPECT_DOUBLE_EQ(bubbles[0].idle_before_ms, 0);
    EXPECT_DOUBLE_EQ(bubbles[0].idle_interior_ms, 2);
    EXPECT_DOUBLE_EQ(bubbles[0].idle_after_ms, 0);
    EXPECT_DOUBLE_EQ(bubbles[1].idle_before_ms, 1);
    EXPECT_DOUBLE_EQ(bubbles[1].idle_interior_ms, 0);
    EXPECT_DOUBLE_EQ(bubbles[1].idle_after_ms, 2);
}

TEST(BubbleBreakdown, LongRecomputeIsPartlyExposed) {
    // R = 4: device 0 recomputes over [1,5]; the gradient arrived at 4, so 3 of the 4 would
    // have been waiting anyway and 1 lengthens the step (B [5,7], makespan 7).
    const auto bubbles = breakdown(recomputeBeforeTheWait(4));
    ASSERT_EQ(bubbles.size(), 2u);
    EXPECT_DOUBLE_EQ(bubbles[0].recompute_ms, 4);
    EXPECT_DOUBLE_EQ(bubbles[0].recompute_hidden_ms, 3);
    EXPECT_DOUBLE_EQ(bubbles[0].recomputeExposedMs(), 1);
    EXPECT_DOUBLE_EQ(bubbles[0].idleMs(), 0);
    EXPECT_DOUBLE_EQ(bubbles[1].idle_before_ms, 1);
    EXPECT_DOUBLE_EQ(bubbles[1].idle_after_ms, 3);
}

TEST(BubbleBreakdown, EachRecomputeCarriesItsHiddenPart) {
    // Two Rs of 2 before the wait on device 0: the run covers [1,5], the gradient arrived at 4,
    // so the run hides 3 from its start: the first R [1,3] all of its 2, the second [3,5] 1 of 2
    // (what the Gantt shades green and amber: views/RecomputeCover.h).
    Plan plan = recomputeBeforeTheWait(2);
    auto& program = plan.devices[0].program;
    const int first = test::indexOf(plan, 0, "0R0");
    ASSERT_GE(first, 0);
    program.insert(program.begin() + first + 1, Instruction{Op::Recompute, 0, 0});
    const SimResult sim = simulate(plan);
    const auto& parts = sim.devices[0].recompute_hidden;
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].index, static_cast<std::size_t>(first));
    EXPECT_EQ(parts[1].index, static_cast<std::size_t>(first + 1));
    EXPECT_DOUBLE_EQ(parts[0].hidden_ms, 2);
    EXPECT_DOUBLE_EQ(parts[1].hidden_ms, 1);
    EXPECT_DOUBLE_EQ(sim.devices[0].recompute_hidden_ms, 3);
    EXPECT_TRUE(sim.devices[1].recompute_hidden.empty());  // device 1 recomputes nothing
}

TEST(BubbleBreakdown, RefusesADeadlock) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1);
    auto& program = plan.devices[0].program;
    const int recv = test::indexOf(plan, 0, "0RECV_B0");
    std::rotate(program.begin(), program.begin() + recv, program.begin() + recv + 1);
    EXPECT_FALSE(bubbleBreakdown(plan, simulate(plan)).ok());
}

TEST(BubbleBreakdown, AddsUpToTheSimulatorsTotals) {
    std::mt19937 rng(6);
    for (int trial = 0; trial < 100; ++trial) {
        Plan plan = test::randomPlan(rng);
        // Half the plans after the passes, so recomputation (hidden or not) occurs.
        if (trial % 2) {
            auto passes = parsePassList("all,hide");
            ASSERT_TRUE(passes.ok());
            ASSERT_TRUE(runPasses(plan, *passes).ok());
        }
        const SimResult sim = simulate(plan);
        auto bubbles = bubbleBreakdown(plan, sim);
        ASSERT_TRUE(bubbles.ok()) << bubbles.error().message;
        const double eps = 1e-9 * std::max(1.0, sim.makespan_ms);
        double hidden = 0, recompute = 0;
        for (std::size_t d = 0; d < bubbles->size(); ++d) {
            const DeviceBubbles& b = (*bubbles)[d];
            EXPECT_NEAR(b.busyMs(), sim.devices[d].busy_ms, eps) << "trial " << trial;
            EXPECT_NEAR(b.idleMs(), sim.devices[d].idle_ms, eps) << "trial " << trial;
            EXPECT_GE(b.recompute_hidden_ms, 0);
            EXPECT_LE(b.recompute_hidden_ms, b.recompute_ms + eps);
            hidden += b.recompute_hidden_ms;
            recompute += b.recompute_ms;
        }
        // Each R's hidden part, taken apart by the simulator, adds up to its device's.
        for (const DeviceStats& device : sim.devices) {
            double parts = 0;
            for (const RecomputeHidden& r : device.recompute_hidden) parts += r.hidden_ms;
            EXPECT_NEAR(parts, device.recompute_hidden_ms, eps) << "trial " << trial;
        }
        EXPECT_NEAR(recompute, sim.recompute_ms, eps) << "trial " << trial;
        EXPECT_NEAR(hidden, sim.recompute_hidden_ms, eps) << "trial " << trial;
    }
}

}  // namespace
}  // namespace mario
