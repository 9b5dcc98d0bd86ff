// The window's result cache is keyed by scheduleFingerprint(): two inputs that differ in any
// field the plan format has must differ there, or the window shows a stale result (the old key
// left out micro-batch size, data parallelism and sequence length). Checked independently of
// the hasher's code: every leaf of the plan's own JSON is changed in turn and read back.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/ScheduleFingerprint.h"
#include "core/session/SessionFile.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// A plan with every optional field present, so that each one appears in its JSON.
Plan planWithEveryField() {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    plan.info.name = "fingerprint";
    plan.info.scheme = "1f1b";
    plan.info.micro_batch_size = 2;
    plan.info.sequence_length = 1024;
    plan.info.data_parallel = 2;
    plan.info.memory_limit_bytes = 1e9;
    plan.info.device_memory_bytes = 4e10;
    plan.info.passes_applied = {"checkpoint"};
    plan.info.notes = "n";
    plan.pipelines = {{0, 1}};
    plan.link = {0.5, 10};
    plan.overlap_factor = 0.25;
    for (StageSpec& stage : plan.stages) {
        stage.layers = std::pair{stage.index, stage.index + 1};
        stage.cost.backward_input_ms = 1.5;
        stage.cost.backward_weight_ms = 0.5;
        stage.cost.weight_grad_bytes = 300;
        stage.cost.working_bytes = 13;
        stage.cost.contention = 0.0625;
        stage.cost.reduce_grad_ms = 0.25;
        stage.cost.optimizer_ms = 0.125;
        stage.cost.static_bytes = 7;
        stage.cost.send_bytes = 11;
    }
    return plan;
}

// Calls `visit` with a copy of `document` in which one leaf was changed, for every leaf.
void forEachLeafChange(const nlohmann::json& document,
                       const std::function<void(const nlohmann::json&, const std::string&)>& visit) {
    const nlohmann::json flat = document.flatten();
    for (const auto& [pointer, value] : flat.items()) {
        nlohmann::json changed = flat;
        if (value.is_boolean()) changed[pointer] = !value.get<bool>();
        else if (value.is_number_integer()) changed[pointer] = value.get<long long>() + 1;
        else if (value.is_number()) changed[pointer] = value.get<double>() + 1.5;  // no fixed point
        else if (value.is_string()) changed[pointer] = value.get<std::string>() + "x";
        else continue;
        visit(changed.unflatten(), pointer);
    }
}

TEST(ScheduleFingerprint, ThePlanFormatRoundTripKeepsTheFingerprint) {
    ScheduleInput input{std::nullopt, planWithEveryField(), {PassId::Checkpoint}, {}};
    auto reread = readPlan(writePlan(input.source));
    ASSERT_TRUE(reread.ok()) << reread.error().message;
    ScheduleInput again = input;
    again.source = *reread;
    EXPECT_EQ(scheduleFingerprint(again), scheduleFingerprint(input));
}

TEST(ScheduleFingerprint, ChangingAnyFieldOfThePlanChangesIt) {
    const ScheduleInput input{std::nullopt, planWithEveryField(), {}, {}};
    const std::uint64_t original = scheduleFingerprint(input);
    int checked = 0;
    forEachLeafChange(writePlan(input.source), [&](const nlohmann::json& changed, const std::string& where) {
        auto plan = readPlan(changed, {.validate = false});
        if (!plan) return;  // a change the format refuses (an unknown op, a negative index) needs no key
        ScheduleInput other = input;
        other.source = *plan;
        EXPECT_NE(scheduleFingerprint(other), original) << "changing " << where << " kept the fingerprint";
        ++checked;
    });
    // Every descriptive field, the link, the factor, both stages' costs and layers, indices: the
    // program entries themselves do not read back once changed ("0F0x") and are checked below.
    EXPECT_GE(checked, 45);
}

TEST(ScheduleFingerprint, PassesTheirOrderEditsAndConfigCount) {
    const ScheduleInput input{std::nullopt, planWithEveryField(), {PassId::Checkpoint, PassId::Overlap}, {}};
    const std::uint64_t original = scheduleFingerprint(input);
    ScheduleInput reordered = input;
    reordered.passes = {PassId::Overlap, PassId::Checkpoint};
    EXPECT_NE(scheduleFingerprint(reordered), original);
    ScheduleInput edited = input;
    edited.edits.push_back({1, {Op::Forward, 1, 1}, Instruction{Op::Backward, 1, 0}});
    EXPECT_NE(scheduleFingerprint(edited), original);
    ScheduleInput toEnd = edited;
    toEnd.edits.back().before.reset();
    EXPECT_NE(scheduleFingerprint(toEnd), scheduleFingerprint(edited));
    ScheduleInput swapped = input;
    std::swap(swapped.source.devices[1].program[0], swapped.source.devices[1].program[1]);
    EXPECT_NE(scheduleFingerprint(swapped), original);
    ScheduleInput paired = input;
    paired.source.devices[0].program[0].overlapped = true;  // not part of Instruction's ==, still a change
    EXPECT_NE(scheduleFingerprint(paired), original);
    ScheduleInput configured = input;
    configured.config = Config{};
    EXPECT_NE(scheduleFingerprint(configured), original);
    ScheduleInput renamed = configured;
    renamed.config->name = "other";
    EXPECT_NE(scheduleFingerprint(renamed), scheduleFingerprint(configured));
    EXPECT_EQ(scheduleFingerprint(input), original);  // and it is a function of the content only
}

// The passes' effort caps (a tuned candidate's, core/tune) make another schedule: the window's
// cache tells them apart, and its autosave brings them back.
TEST(ScheduleFingerprint, TheEffortCapsCountAndTheAutosaveKeepsThem) {
    ScheduleInput input{std::nullopt, planWithEveryField(), {PassId::Checkpoint, PassId::Hide}, {}};
    const std::uint64_t uncapped = scheduleFingerprint(input);
    input.effort = {.prepose_simulations = 48, .hide_simulations = 48};
    EXPECT_NE(scheduleFingerprint(input), uncapped);
    const std::uint64_t withoutReorderCap = scheduleFingerprint(input);
    input.effort.reorder_evaluations = 300'000;  // the tuner's (TuneOptions)
    EXPECT_NE(scheduleFingerprint(input), withoutReorderCap);
    const PresetLibrary presets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    const auto restored = readSessionFile(writeSessionFile(input, ""), presets);
    ASSERT_TRUE(restored.ok()) << restored.error().message;
    EXPECT_EQ(restored->input.effort, input.effort);
    EXPECT_EQ(scheduleFingerprint(restored->input), scheduleFingerprint(input));
    nlohmann::json damaged = nlohmann::json::parse(writeSessionFile(input, ""));
    damaged["pass_effort"]["hide_simulations"] = -1;
    const auto refused = readSessionFile(damaged.dump(), presets);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("pass_effort.hide_simulations"), std::string::npos);
    damaged["pass_effort"]["hide_simulations"] = 48;
    damaged["pass_effort"]["reorder_evaluations"] = 2'000'000'000;
    const auto tooMuch = readSessionFile(damaged.dump(), presets);
    ASSERT_FALSE(tooMuch.ok());
    EXPECT_NE(tooMuch.error().message.find("pass_effort.reorder_evaluations: expected a whole number in [0, 1000000000]"),
              std::string::npos)
        << tooMuch.error().message;
}

}  // namespace
}  // namespace mario
