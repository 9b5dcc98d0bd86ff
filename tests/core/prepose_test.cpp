// Prepose-forward trades memory for time: a forward run early holds its input longer. On the
// recompute grid (GPT-3 1.6B and LLaMA-2 3B; 1F1B, Chimera, interleaved; PP 4 and 8; m = PP,
// 2PP, 4PP) it never raises a device's peak without shortening the step.
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

}  // namespace
}  // namespace mario
