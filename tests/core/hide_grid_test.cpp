// Hide-recompute on issue 11's public grid (tests/core/RecomputeGrid.h, the configurations
// tests/bench/recompute_grid.py reports).
//
// The reference is the recompute bound (core/sim/RecomputeBound.h), computed independently of
// hide: a proof that no placement or drop of the Rs within hide's budget runs faster. Where
// hide's step equals it, hide is optimal in its search space; the assertions say how close it
// must stay, so a weaker hide (or a bound that lost its memory coupling, which only moves it
// down) fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/passes/PassManager.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/RecomputeGrid.h"

namespace mario {
namespace {

TEST(HideGrid, StaysValidWithinBudgetAndCloseToTheRecomputeBound) {
    const auto built = test::recomputeGrid(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    ASSERT_TRUE(built.ok()) << built.error().message;
    const auto& grid = *built;
    ASSERT_EQ(grid.size(), 36u);
    std::vector<double> gaps;
    int atBound = 0, withinOnePercent = 0;
    for (const test::GridPlan& entry : grid) {
        Plan four = entry.plan;
        ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok()) << entry.name;
        const auto fourSim = Simulator::run(four, SimOptions::timelineOnly());
        ASSERT_TRUE(fourSim.ok());
        auto budget = hideBudget(four, false);
        ASSERT_TRUE(budget.ok()) << entry.name;

        Plan hidden = four;
        PassManagerOptions options;
        options.bound_hide = true;
        auto run = runPasses(hidden, {PassId::Hide}, options);
        ASSERT_TRUE(run.ok()) << entry.name << ": " << run.error().message;
        ASSERT_TRUE(run->hide_bound.has_value()) << entry.name;
        ASSERT_TRUE(Validator::validate(hidden).ok()) << entry.name;
        const auto sim = Simulator::run(hidden, SimOptions::timelineOnly());
        ASSERT_TRUE(sim.ok());
        ASSERT_FALSE(sim->deadlocked) << entry.name;

        EXPECT_LE(sim->makespan_ms, fourSim->makespan_ms + 1e-9) << entry.name << ": slower than the four passes";
        for (std::size_t d = 0; d < sim->devices.size(); ++d)
            EXPECT_LE(sim->devices[d].peak_bytes, (*budget)[d] * (1 + 1e-12)) << entry.name << " device " << d;
        const double bound = run->hide_bound->bound_ms;
        EXPECT_LE(bound, sim->makespan_ms * (1 + 1e-9)) << entry.name << ": the bound is above a reachable step";
        const double gap = sim->makespan_ms / bound - 1;
        gaps.push_back(gap);
        atBound += gap <= 1e-3;
        withinOnePercent += gap <= 0.01;
    }
    std::sort(gaps.begin(), gaps.end());
    const double median = (gaps[gaps.size() / 2 - 1] + gaps[gaps.size() / 2]) / 2;
    std::printf("[ hide grid ] within 0.1%% of the recompute bound on %d of %zu, within 1%% on %d; median gap %.2f%%, "
                "worst %.2f%%\n",
                atBound, gaps.size(), withinOnePercent, 100 * median, 100 * gaps.back());
    // Issue 11's targets, against what any placement of the Rs within the budget can reach.
    EXPECT_LE(median, 0.02);
    EXPECT_LE(gaps.back(), 0.06);
    EXPECT_GE(atBound, 18) << "hide should be provably optimal on at least half of the grid";
    // Moves first alone came within 1% on 31 (LLaMA-2 3B 1F1B 4×8 and 4×16 were 3.4% and 3.0%
    // above); trying drops first as well brings them in, and the third start (as many drops as
    // fit, then moves) LLaMA-2 3B Chimera 4×16 (4103.7 → 4064.2 ms).
    EXPECT_GE(withinOnePercent, 34);
}

// LLaMA-2 3B zbv 4 × 8 (recompute_grid.py --schemes zero-bubble): hide's drops by delay took
// the long windows of stage 2 on device 2 and left room for 7 drops where 9 fit (2074.5 ms);
// dropping in order of where the windows end, then moving, reaches 2001.2 ms.
TEST(HideGrid, DropsAsManyAsFitOnZbv) {
    const PresetLibrary presets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    const nlohmann::json json = {
        {"format", "mario-config"},
        {"version", 1},
        {"model", "llama2-3b"},
        {"hardware", "a100-40g"},
        {"devices", 4},
        {"parallel",
         {{"scheme", "zbv"}, {"pp", 4}, {"dp", 1}, {"tp", 1}, {"micro_batch_size", 1}, {"global_batch_size", 8}}}};
    auto config = readConfig(json, presets);
    ASSERT_TRUE(config.ok()) << config.error().message;
    auto plan = buildPlan(*config);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    ASSERT_TRUE(runPasses(*plan, *parsePassList("all")).ok());
    auto budget = hideBudget(*plan, false);
    ASSERT_TRUE(budget.ok());
    Plan hidden = *plan;
    PassManagerOptions options;
    options.bound_hide = true;
    auto run = runPasses(hidden, {PassId::Hide}, options);
    ASSERT_TRUE(run.ok() && run->hide_bound.has_value());
    ASSERT_TRUE(Validator::validate(hidden).ok());
    const auto sim = Simulator::run(hidden, SimOptions::timelineOnly());
    ASSERT_TRUE(sim.ok());
    // Against the recompute bound, computed apart from hide's placement: drops by delay alone
    // stayed 7.4% above it (2074.5 against 1932.2 ms); dropping as many as fit comes within 4%.
    EXPECT_LE(sim->makespan_ms, run->hide_bound->bound_ms * 1.04);
    EXPECT_LE(run->hide_bound->bound_ms, sim->makespan_ms * (1 + 1e-9));
    for (std::size_t d = 0; d < sim->devices.size(); ++d)
        EXPECT_LE(sim->devices[d].peak_bytes, (*budget)[d] * (1 + 1e-12)) << "device " << d;
}

}  // namespace
}  // namespace mario
