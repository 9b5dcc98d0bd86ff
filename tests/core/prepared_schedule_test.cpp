// The session layer's one path (file → validate → passes → hand edits → simulation), against
// the paper's Figure 2 (base 21, checkpointing 28, all four passes 22: the paper's own numbers)
// and against the same steps composed by hand from the passes and the simulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/session/HandEdits.h"
#include "core/session/PassTrace.h"
#include "core/session/PlanEdit.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/session/ScheduleFingerprint.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/common/ScratchDir.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using test::indexOf;

ScheduleInput figure2(std::vector<PassId> passes) {
    return {std::nullopt, test::unitPlan(Scheme::OneFOneB, 4, 4), std::move(passes), {}};
}

std::vector<std::vector<Instruction>> programs(const Plan& plan) {
    std::vector<std::vector<Instruction>> out;
    for (const auto& device : plan.devices) out.push_back(device.program);
    return out;
}

TEST(PreparedSchedule, Figure2TakesThePapersTimesWithTheBaseBeside) {
    PrepareOptions options;
    options.simulate_base = true;
    auto none = prepareSchedule(figure2({}), options);
    auto checkpoint = prepareSchedule(figure2({PassId::Checkpoint}), options);
    auto all = prepareSchedule(figure2(paperPasses()), options);
    ASSERT_TRUE(none && checkpoint && all);
    EXPECT_DOUBLE_EQ(none->result.makespan_ms, 21);
    EXPECT_DOUBLE_EQ(checkpoint->result.makespan_ms, 28);
    EXPECT_DOUBLE_EQ(all->result.makespan_ms, 22);
    EXPECT_DOUBLE_EQ(all->base.makespan_ms, 21);
    EXPECT_FALSE(all->steps.empty());
}

// Issue 30: a cancelled window job ran its passes to the end of the step (seconds on a big
// one). With PrepareOptions::cancel set, prepose runs no trial and nothing is simulated; the
// plan that comes back is still a valid one (the passes stop only at safe points).
TEST(PreparedSchedule, ACancelReachesThePassesInsideTheStep) {
    const ScheduleInput input = figure2(paperPasses());
    auto whole = prepareSchedule(input);
    ASSERT_TRUE(whole);
    auto preposeTrials = [](const PreparedSchedule& prepared) {
        int trials = 0;
        for (const auto& step : prepared.steps)
            if (step.pass == PassId::Prepose) trials += step.simulations;
        return trials;
    };
    ASSERT_GT(preposeTrials(*whole), 0);
    EXPECT_GT(whole->result.makespan_ms, 0);

    const std::atomic<bool> cancelled{true};
    auto cut = prepareSchedule(input, {.cancel = &cancelled});
    ASSERT_TRUE(cut) << cut.error().message;
    EXPECT_EQ(preposeTrials(*cut), 0);
    EXPECT_TRUE(cut->result.devices.empty());  // not simulated
    EXPECT_TRUE(Simulator::run(cut->plan));    // still a plan that runs
}

TEST(PreparedSchedule, AHandEditIsTheMoveADropMeans) {
    ScheduleInput input = figure2({});
    auto shown = prepareSchedule(input);
    ASSERT_TRUE(shown);
    // Drop device 1's F3 where its B0 starts: it goes before B0 and the receive B0 waits on
    // (what prepose-forward does by itself), with its own receive and send along.
    const int f3 = indexOf(shown->plan, 1, "1F3");
    const double b0Start = shown->result.devices[1].timings[indexOf(shown->plan, 1, "1B0")].start;
    auto edit = editForDrop(shown->plan, shown->result, 1, f3, b0Start);
    ASSERT_TRUE(edit) << edit.error().message;
    ASSERT_TRUE(edit->has_value());
    EXPECT_EQ(toActionString((*edit)->moved), "1F3");
    ASSERT_TRUE((*edit)->before.has_value());
    EXPECT_EQ(toActionString(*(*edit)->before), "1RECV_B0");
    input.edits.push_back(**edit);
    auto edited = prepareSchedule(input);
    ASSERT_TRUE(edited);
    EXPECT_TRUE(edited->skipped_edits.empty());

    auto byHand = moveInstruction(shown->plan, {1, f3, indexOf(shown->plan, 1, "1RECV_B0")});
    ASSERT_TRUE(byHand) << byHand.error().message;
    EXPECT_EQ(programs(edited->plan), programs(byHand->plan));
    EXPECT_DOUBLE_EQ(edited->result.makespan_ms, Simulator::run(byHand->plan)->makespan_ms);
    // The edit survives a pass toggle: named by instruction, it applies to the checkpointed plan.
    input.passes = {PassId::Checkpoint};
    auto toggled = prepareSchedule(input);
    ASSERT_TRUE(toggled);
    EXPECT_TRUE(toggled->skipped_edits.empty());
    const auto& program = toggled->plan.devices[1].program;
    EXPECT_LT(indexOf(toggled->plan, 1, "1F3"), indexOf(toggled->plan, 1, "1B0"));
    EXPECT_EQ(program.size(), prepareSchedule(figure2({PassId::Checkpoint}))->plan.devices[1].program.size());
}

TEST(PreparedSchedule, EditsThatNoLongerApplyAreSetAsideNotHalfApplied) {
    ScheduleInput input = figure2({});
    input.edits.push_back({9, {Op::Forward, 0, 0}, std::nullopt});                     // no device 9
    input.edits.push_back({1, {Op::Recompute, 1, 3}, std::nullopt});                   // no R without checkpointing
    input.edits.push_back({0, {Op::Backward, 0, 1}, Instruction{Op::Forward, 0, 0}});  // B1 before F0: refused
    auto prepared = prepareSchedule(input);
    ASSERT_TRUE(prepared);
    EXPECT_EQ(prepared->skipped_edits.size(), 3u);
    EXPECT_EQ(programs(prepared->plan), programs(test::unitPlan(Scheme::OneFOneB, 4, 4)));
}

TEST(PreparedSchedule, ADropWhereTheBoxStandsIsNoEditAndARefusalSaysWhy) {
    auto prepared = prepareSchedule(figure2({}));
    ASSERT_TRUE(prepared);
    const int f1 = indexOf(prepared->plan, 0, "0F1");
    const double start = prepared->result.devices[0].timings[f1].start;
    auto same = editForDrop(prepared->plan, prepared->result, 0, f1, start);
    ASSERT_TRUE(same) << same.error().message;
    EXPECT_FALSE(same->has_value());
    auto refused = editForDrop(prepared->plan, prepared->result, 0, indexOf(prepared->plan, 0, "0B3"), 0);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("refused"), std::string::npos) << refused.error().message;
}

TEST(PreparedSchedule, OpenRefusesWhatTheValidatorRefusesAndTellsDeadlockApart) {
    const PresetLibrary none{std::string{}};
    Plan deadlocked = test::unitPlan(Scheme::OneFOneB, 2, 1);
    auto& program = deadlocked.devices[0].program;
    const int recv = indexOf(deadlocked, 0, "0RECV_B0");
    std::rotate(program.begin(), program.begin() + recv, program.begin() + recv + 1);  // wait for B0 first
    const test::ScratchDir dir("prepared_schedule");
    const std::string deadlockPath = dir.file("deadlock.mario.json");
    std::ofstream(deadlockPath) << writePlan(deadlocked).dump();
    const OpenedSchedule opened = openSchedule(deadlockPath, none);
    EXPECT_EQ(opened.problem, OpenProblem::Deadlock) << opened.error;
    EXPECT_EQ(opened.error.rfind(deadlockPath, 0), 0u) << opened.error;

    const std::string brokenPath = dir.file("broken.mario.json");
    std::ofstream(brokenPath) << "{\"format\": \"mario-plan\", ";
    EXPECT_EQ(openSchedule(brokenPath, none).problem, OpenProblem::Unreadable);

    const std::string goodPath = dir.file("good.mario.json");
    std::ofstream(goodPath) << writePlan(test::unitPlan(Scheme::OneFOneB, 2, 2)).dump();
    const OpenedSchedule good = openSchedule(goodPath, none);
    ASSERT_TRUE(good.ok()) << good.error;
    EXPECT_EQ(programs(good.input.source), programs(test::unitPlan(Scheme::OneFOneB, 2, 2)));
}

TEST(PreparedSchedule, SavingAPlanWritesTheScheduleAsShown) {
    auto prepared = prepareSchedule(figure2(paperPasses()));
    ASSERT_TRUE(prepared);
    const test::ScratchDir dir("prepared_schedule");
    const std::string path = dir.file("saved.mario.json");
    ASSERT_TRUE(saveSchedule(path, figure2(paperPasses()), &prepared->plan));
    auto reread = readPlanFile(path);
    ASSERT_TRUE(reread) << reread.error().message;
    EXPECT_EQ(scheduleFingerprint({std::nullopt, *reread, {}, {}}),
              scheduleFingerprint({std::nullopt, prepared->plan, {}, {}}));
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

TEST(PreparedSchedule, SavingAConfigThatCannotHoldTheWorkIsRefusedAndTheFileKept) {
    const test::ScratchDir dir("prepared_schedule");
    const std::string path = dir.file("kept.config.json");
    std::ofstream(path) << "previous";
    const PresetLibrary presets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    const OpenedSchedule opened =
        openSchedule(std::string(MARIO_TEST_SOURCE_DIR) + "/resources/examples/figure2.config.json", presets);
    ASSERT_TRUE(opened.ok() && opened.input.config) << opened.error;
    ScheduleInput edited = opened.input;
    edited.edits.push_back({1, {Op::Forward, 1, 1}, std::nullopt});
    auto refused = saveSchedule(path, edited, nullptr);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("1 hand edit(s)"), std::string::npos) << refused.error().message;
    ScheduleInput fromPlan = figure2({});
    auto noConfig = saveSchedule(path, fromPlan, &fromPlan.source);
    ASSERT_FALSE(noConfig);
    EXPECT_NE(noConfig.error().message.find("no config"), std::string::npos) << noConfig.error().message;
    std::ifstream in(path);
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "previous");
    ASSERT_TRUE(saveSchedule(path, opened.input, nullptr));  // no edits: the config is written
    EXPECT_TRUE(openSchedule(path, presets).ok());
}

TEST(PassTrace, EveryStepIsThePlanAsThatPassLeftItAndTheLastIsThePreparedPlan) {
    const ScheduleInput input = figure2(paperPasses());
    const auto trace = passTrace(input);
    auto prepared = prepareSchedule(input);
    ASSERT_TRUE(prepared);
    ASSERT_EQ(trace.size(), 1 + prepared->steps.size());  // step 0 is the source plan
    EXPECT_DOUBLE_EQ(trace.front().result.makespan_ms, 21);
    EXPECT_EQ(programs(trace.back().plan), programs(prepared->plan));
    EXPECT_DOUBLE_EQ(trace.back().result.makespan_ms, 22);
    for (std::size_t k = 1; k < trace.size(); ++k) {
        EXPECT_FALSE(trace[k].caption.empty()) << "step " << k;
        EXPECT_FALSE(trace[k].touched.empty()) << "step " << k;
        for (const auto& [device, index] : trace[k].touched)
            EXPECT_LT(index, static_cast<int>(trace[k].plan.devices[device].program.size()));
    }
}

}  // namespace
}  // namespace mario
