// What `mario export --csv` writes for PyTorch and torchtitan beyond the CSV itself: the
// torchtitan settings (against torchtitan 0.3's rules, worked by hand here; the PyTorch-peer
// suite checks them against torchtitan's own code) and the order exported without
// recomputation (against a count of the micro-batches each device holds at once).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/io/PipeliningCsv.h"
#include "core/io/TorchtitanSettings.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/RecomputeFreeOrder.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// Stage s holds layers[s] consecutive layers, after those of stages 0..s-1.
void giveLayers(Plan& plan, const std::vector<int>& layers) {
    for (StageSpec& stage : plan.stages) {
        int begin = 0;
        for (int s = 0; s < stage.index; ++s) begin += layers[static_cast<std::size_t>(s)];
        stage.layers = std::pair{begin, begin + layers[static_cast<std::size_t>(stage.index)]};
    }
}

TorchtitanSettings settingsOf(const Plan& plan) {
    auto settings = torchtitanSettings(plan);
    EXPECT_TRUE(settings.ok()) << (settings.ok() ? "" : settings.error().message);
    return settings.ok() ? *settings : TorchtitanSettings{};
}

TEST(TorchtitanSettings, SingleStageSchemesBuildOneStagePerRank) {
    for (auto [scheme, name] : {std::pair{Scheme::GPipe, "GPipe"},
                                {Scheme::OneFOneB, "1F1B"},
                                {Scheme::ZbH1, "1F1B"},
                                {Scheme::ZbH2, "1F1B"}}) {
        Plan plan = test::unitPlan(scheme, 4, 8);
        plan.info.micro_batch_size = 2;
        const auto settings = settingsOf(plan);
        EXPECT_EQ(settings.schedule, name);
        EXPECT_EQ(settings.stages_per_rank, 1);
        EXPECT_EQ(settings.pipeline_degree, 4);
        EXPECT_EQ(settings.local_batch_size, 16);  // 8 micro-batches of 2
        EXPECT_EQ(settings.layers_per_stage, 0);   // torchtitan's default count is right
    }
}

TEST(TorchtitanSettings, VShapesAndLoopsByPlacement) {
    EXPECT_EQ(settingsOf(test::unitPlan(Scheme::Zbv, 4, 8)).schedule, "ZBVZeroBubble");
    EXPECT_EQ(settingsOf(test::unitPlan(Scheme::DualPipeV, 4, 8)).schedule, "DualPipeV");
    EXPECT_EQ(settingsOf(test::unitPlan(Scheme::Interleaved, 4, 8, 2)).schedule, "Interleaved1F1B");
    EXPECT_EQ(settingsOf(test::unitPlan(Scheme::LoopedBfs, 4, 8, 2)).schedule, "LoopedBFS");
    EXPECT_EQ(settingsOf(test::unitPlan(Scheme::InterleavedZb, 4, 8, 2)).schedule, "InterleavedZeroBubble");
    // An imported V is named by its placement, not by its scheme.
    Plan imported = test::unitPlan(Scheme::Zbv, 2, 4);
    imported.info.scheme = "imported";
    EXPECT_EQ(settingsOf(imported).schedule, "ZBVZeroBubble");
}

TEST(TorchtitanSettings, LayerSplitMatchedByTheEndWeights) {
    // 16 layers over 8 stages, 2 each. torchtitan's default weights (1, 1) deal 18 effective
    // layers as 3,3,2,...,2 and take one off each end: 2,3,2,2,2,2,2,1. Weights (0, 0) deal 2 each.
    Plan plan = test::unitPlan(Scheme::Interleaved, 4, 8, 2);
    giveLayers(plan, std::vector<int>(8, 2));
    const auto settings = settingsOf(plan);
    EXPECT_EQ(settings.first_stage_less_layers, 0);
    EXPECT_EQ(settings.last_stage_less_layers, 0);
    EXPECT_TRUE(settings.notes.empty());
    // 1,2,2,2,2,2,2,1 (14 layers) is the default split (16 effective, 2 each, one off each end).
    Plan ends = test::unitPlan(Scheme::Interleaved, 4, 8, 2);
    giveLayers(ends, {1, 2, 2, 2, 2, 2, 2, 1});
    const auto defaults = settingsOf(ends);
    EXPECT_EQ(defaults.first_stage_less_layers, 1);
    EXPECT_EQ(defaults.last_stage_less_layers, 1);
    const auto lines = defaults.overrides("s.csv");
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                            [](const std::string& l) { return l.find("less_layers") != std::string::npos; }),
              0);
}

TEST(TorchtitanSettings, MoreThanTwoStagesPerRankNeedLayersPerStage) {
    // v = 4 on 2 ranks: 8 stages, torchtitan's multi-stage default would build 4. With 16
    // layers, 2 per stage, weights (0, 0): ceil(16 / k) = 8 first holds at k = 2.
    Plan plan = test::unitPlan(Scheme::Interleaved, 2, 8, 4);
    giveLayers(plan, std::vector<int>(8, 2));
    const auto settings = settingsOf(plan);
    EXPECT_EQ(settings.stages_per_rank, 4);
    EXPECT_EQ(settings.layers_per_stage, 2);
    // Without layer ranges the count cannot be derived: refused, not guessed.
    EXPECT_FALSE(torchtitanSettings(test::unitPlan(Scheme::Interleaved, 2, 8, 4)).ok());
}

TEST(TorchtitanSettings, UnevenSplitStillRunsWithANote) {
    // 3,1,1,3 matches no end weights: the default (1, 1) deals 10 effective layers as
    // 3,3,2,2 -> 2,3,2,1; the note gives both.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
    giveLayers(plan, {3, 1, 1, 3});
    const auto settings = settingsOf(plan);
    ASSERT_EQ(settings.notes.size(), 1u);
    EXPECT_NE(settings.notes[0].find("2,3,2,1"), std::string::npos) << settings.notes[0];
    EXPECT_NE(settings.notes[0].find("3,1,1,3"), std::string::npos) << settings.notes[0];
}

TEST(TorchtitanSettings, RefusesWhatTorchtitanCannotPlace) {
    EXPECT_FALSE(torchtitanSettings(test::unitPlan(Scheme::OneFOneB, 1, 4)).ok());  // no pipeline
    Plan swapped = test::unitPlan(Scheme::OneFOneB, 4, 8);
    std::swap(swapped.stages[1].device, swapped.stages[2].device);
    auto refused = torchtitanSettings(swapped);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("neither in a loop"), std::string::npos);
}

TEST(TorchtitanSettings, FileEndsWithTheOverridesAndTheCsvPath) {
    const auto settings = settingsOf(test::unitPlan(Scheme::OneFOneB, 2, 4));
    const std::string file = torchtitanArgsFile(settings, "out/s.csv");
    EXPECT_NE(file.find("\n--parallelism.pipeline_parallel_schedule_csv=out/s.csv\n"), std::string::npos);
    EXPECT_EQ(torchtitanArgsPath("out/s.csv"), "out/s.torchtitan.args");
}

TEST(TorchtitanSettings, TurnsCudaGraphsOffAsTorchtitanRequiresWithPipelining) {
    // torchtitan 0.3's trainer config refuses pipeline_parallel_degree > 1 unless
    // training.disable_cuda_graphs is set (its default is off), so every file must set it.
    for (const Plan& plan : {test::unitPlan(Scheme::OneFOneB, 2, 4), test::unitPlan(Scheme::Zbv, 4, 8),
                             test::unitPlan(Scheme::Interleaved, 4, 8, 2)}) {
        const auto lines = settingsOf(plan).overrides("s.csv");
        EXPECT_EQ(std::count(lines.begin(), lines.end(), "--training.disable_cuda_graphs"), 1);
    }
}

// Per device, the most micro-batches whose forward ran and whose backward (B or I) has not.
int mostInFlight(const Plan& plan) {
    int most = 0;
    for (const auto& device : plan.devices) {
        std::set<std::pair<int, int>> open;
        for (const Instruction& ins : device.program) {
            if (ins.op == Op::Forward) open.insert({ins.stage, ins.microbatch});
            if (isBackwardStart(ins.op)) open.erase({ins.stage, ins.microbatch});
            most = std::max(most, static_cast<int>(open.size()));
        }
    }
    return most;
}

TEST(RecomputeFreeOrder, LeavesPreposeOutSoOneFOneBHoldsAsManyAsItsDevices) {
    ScheduleInput input;
    input.source = test::unitPlan(Scheme::OneFOneB, 4, 8);
    input.passes = {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose};
    auto prepared = prepareSchedule(input, {.simulate = false});
    ASSERT_TRUE(prepared.ok());
    // Prepose has moved forwards: without R this order would hold more than 1F1B's 4.
    ASSERT_GT(mostInFlight(withoutRecompute(prepared->plan)), 4);
    auto order = recomputeFreeOrder(input, *prepared);
    ASSERT_TRUE(order.ok()) << order.error().message;
    EXPECT_EQ(recomputeCount(order->plan), 0);
    EXPECT_EQ(mostInFlight(order->plan), 4);
    ASSERT_EQ(order->left_out, std::vector<PassId>{PassId::Prepose});
    EXPECT_GT(order->peak_with_bytes, order->peak_exported_bytes);
    EXPECT_NE(order->summary().find("prepose left out"), std::string::npos) << order->summary();
}

TEST(RecomputeFreeOrder, RefusesASavedPreposedOrderWithItsPeak) {
    ScheduleInput input;
    input.source = test::unitPlan(Scheme::OneFOneB, 4, 8);
    input.passes = {PassId::Checkpoint, PassId::Prepose};
    auto prepared = prepareSchedule(input, {.simulate = false});
    ASSERT_TRUE(prepared.ok());
    // As a plan file opens: the saved order is the source, no passes to run again.
    ScheduleInput saved;
    saved.source = prepared->plan;
    saved.source.info.passes_applied = {"checkpoint", "prepose"};
    auto again = prepareSchedule(saved, {.simulate = false});
    ASSERT_TRUE(again.ok());
    auto refused = recomputeFreeOrder(saved, *again);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("micro-batches would hold up to"), std::string::npos)
        << refused.error().message;
}

TEST(RecomputeFreeOrder, WithoutPreposeOnlyTheRsGo) {
    ScheduleInput input;
    input.source = test::unitPlan(Scheme::ZbH1, 4, 8);
    input.passes = {PassId::Checkpoint, PassId::Overlap};
    auto prepared = prepareSchedule(input, {.simulate = false});
    ASSERT_TRUE(prepared.ok());
    auto order = recomputeFreeOrder(input, *prepared);
    ASSERT_TRUE(order.ok());
    EXPECT_TRUE(order->left_out.empty());
    EXPECT_EQ(order->dropped, recomputeCount(prepared->plan));
    EXPECT_EQ(order->plan.instructionCount(), prepared->plan.instructionCount() - order->dropped);
}

}  // namespace
}  // namespace mario
