// What a step may trade, on the recompute grid (GPT-3 1.6B and LLaMA-2 3B; 1F1B, Chimera,
// interleaved; PP 4 and 8; m = PP, 2PP, 4PP): prepose-forward never raises a device's peak
// without shortening the step, and no fixed plan runs faster over a slower link.
#include <gtest/gtest.h>

#include "core/passes/PassManager.h"
#include "core/sim/Simulator.h"
#include "tests/core/RecomputeGrid.h"

namespace mario {
namespace {

TEST(Prepose, NeverAddsMemoryWithoutShorteningTheStep) {
    auto grid = test::recomputeGrid(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    ASSERT_TRUE(grid.ok()) << grid.error().message;
    int shortened = 0;
    for (const test::GridPlan& entry : *grid) {
        Plan three = entry.plan, four = entry.plan;
        ASSERT_TRUE(runPasses(three, {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy}).ok()) << entry.name;
        ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok()) << entry.name;
        const auto before = Simulator::run(three), after = Simulator::run(four);
        ASSERT_TRUE(before.ok() && after.ok()) << entry.name;
        EXPECT_LE(after->makespan_ms, before->makespan_ms * (1 + 1e-12)) << entry.name;
        if (after->makespan_ms < before->makespan_ms * (1 - 1e-12)) {
            ++shortened;
            continue;
        }
        for (std::size_t d = 0; d < after->devices.size(); ++d)
            EXPECT_LE(after->devices[d].peak_bytes, before->devices[d].peak_bytes * (1 + 1e-12))
                << entry.name << " device " << d << ": more memory for the same step";
    }
    EXPECT_GT(shortened, 0) << "prepose should still shorten some of the grid";
}

// The execution model is monotone in the link: a fixed plan over a slower link (half the
// bandwidth, twice the latency) never finishes sooner. A faster step over a slower link can only
// come from the passes choosing another plan for it (issue 31 saw Chimera at 5740.2 → 5727.8 ms).
TEST(ExecutionModel, ASlowerLinkNeverShortensAFixedPlan) {
    auto grid = test::recomputeGrid(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    ASSERT_TRUE(grid.ok()) << grid.error().message;
    for (const test::GridPlan& entry : *grid) {
        Plan plan = entry.plan;
        ASSERT_TRUE(runPasses(plan, *parsePassList("all")).ok()) << entry.name;
        const double fast = Simulator::run(plan)->makespan_ms;
        plan.link.bandwidth_gb_per_s /= 2;
        plan.link.latency_ms = 2 * plan.link.latency_ms + 0.01;
        EXPECT_GE(Simulator::run(plan)->makespan_ms, fast * (1 - 1e-12)) << entry.name;
    }
}

}  // namespace
}  // namespace mario
