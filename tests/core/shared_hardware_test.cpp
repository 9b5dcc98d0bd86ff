// Devices that share hardware (sim/SharedHardware.h): every compute instruction stretched by
// 1 + contention × the average number of other devices computing meanwhile. Expected timelines
// are worked by hand on GPipe 2×2 (forward 1, backward 2), and the stretch of two unequal
// instructions side by side is the root of the quadratic it solves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/io/PlanJson.h"
#include "core/sim/SharedHardware.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// Where `action` ("0F1") stands in `device`'s program; a failure when it is not there.
std::size_t indexOf(const Plan& plan, int device, const char* action) {
    const auto wanted = parseAction(action);
    const auto& program = plan.devices[device].program;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i] == *wanted) return i;
    ADD_FAILURE() << action << " is not on device " << device;
    return 0;
}

InstructionTiming timingOf(const Plan& plan, const SimResult& sim, int device, const char* action) {
    return sim.devices[device].timings[indexOf(plan, device, action)];
}

Plan gpipe2x2(double contention) {
    Plan plan = test::unitPlan(Scheme::GPipe, 2, 2);
    for (auto& stage : plan.stages) stage.cost.contention = contention;
    return plan;
}

TEST(SharedHardware, InstructionsSideBySideStretchEachOther) {
    // Alone: device 0 F0 [0,1] F1 [1,2], device 1 F0 [1,2] F1 [2,3] B0 [3,5] B1 [5,7], device 0
    // B0 [5,7] B1 [7,9]: step 9. Side by side: device 0's F1 and device 1's F0 (from 1) and
    // device 1's B1 and device 0's B0 (from 5.5); each pair takes 1.5× its time.
    const Plan alone = gpipe2x2(0);
    EXPECT_DOUBLE_EQ(test::simulate(alone).makespan_ms, 9);
    const Plan plan = gpipe2x2(0.5);
    const SimResult sim = test::simulate(plan);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 0, "0F0").end, 1);  // device 1 waits: alone
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 0, "0F1").end, 2.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 1, "1F0").end, 2.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 1, "1F1").start, 2.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 1, "1F1").end, 3.5);  // device 0 waits for B1: alone
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 1, "1B0").end, 5.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 1, "1B1").end, 8.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 0, "0B0").end, 8.5);
    EXPECT_DOUBLE_EQ(timingOf(plan, sim, 0, "0B1").end, 10.5);
    EXPECT_DOUBLE_EQ(sim.makespan_ms, 10.5);
    EXPECT_DOUBLE_EQ(sim.contention_ms, 0.5 + 0.5 + 1 + 1);
    EXPECT_DOUBLE_EQ(sim.devices[0].contention_ms, 1.5);
    EXPECT_DOUBLE_EQ(sim.devices[0].busy_ms, 6 + 1.5);
    EXPECT_GE(sim.contention_rounds, 2);
    EXPECT_DOUBLE_EQ(sim.aloneMakespan(), 9);  // what hide's bound is compared with
    EXPECT_LE(sim.lower_bound_ms, sim.makespan_ms);

    // The passes time plans alone.
    auto trial = Simulator::run(plan, SimOptions::timelineOnly());
    ASSERT_TRUE(trial);
    EXPECT_DOUBLE_EQ(trial->makespan_ms, 9);
    EXPECT_DOUBLE_EQ(trial->contention_ms, 0);
}

TEST(SharedHardware, TheLongerOfTwoIsStretchedOnlyWhileTheShorterRuns) {
    // Stage 0 forwards in 10 ms, stage 1 in 4, contention 0.2. From t = 10 device 1's F0 runs
    // wholly beside device 0's F1: y = 4·1.2 = 4.8. Device 0's F1 has a neighbour for y of its
    // x ms: x = 10·(1 + 0.2·y/x), so x² − 10x − 0.2·10·y = 0 and x = 5 + √(25 + 9.6).
    Plan plan = gpipe2x2(0.2);
    plan.stages[0].cost.forward_ms = 10;
    plan.stages[1].cost.forward_ms = 4;
    const SimResult sim = test::simulate(plan);
    const double x = 5 + std::sqrt(25 + 9.6);
    // The rounds stop once no stretch moves by 1e-4: within 1e-3 ms of the root here.
    EXPECT_NEAR(timingOf(plan, sim, 1, "1F0").end - timingOf(plan, sim, 1, "1F0").start, 4.8, 1e-3);
    EXPECT_NEAR(timingOf(plan, sim, 0, "0F1").end - timingOf(plan, sim, 0, "0F1").start, x, 1e-3);
    EXPECT_TRUE(sim.contention_settled);
    // What the stretch is made of, read off the settled timeline.
    EXPECT_NEAR(busyNeighbours(plan, sim)[0][indexOf(plan, 0, "0F1")], 4.8 / x, 1e-4);
}

TEST(SharedHardware, APipelineThatNeverComputesTwiceAtOnceCostsNothingMore) {
    // One micro-batch: F on device 0, F and B on device 1, B on device 0, never side by side.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1);
    const double alone = test::simulate(plan).makespan_ms;
    for (auto& stage : plan.stages) stage.cost.contention = 0.7;
    const SimResult sim = test::simulate(plan);
    EXPECT_DOUBLE_EQ(sim.makespan_ms, alone);
    EXPECT_DOUBLE_EQ(sim.contention_ms, 0);
    // One device alone has no neighbours whatever its contention.
    Plan single = test::unitPlan(Scheme::OneFOneB, 1, 4);
    single.stages[0].cost.contention = 0.7;
    EXPECT_FALSE(sharesHardware(single));
    EXPECT_EQ(test::simulate(single).contention_rounds, 0);
}

TEST(SharedHardware, EveryDeviceBusyTheWholeTimeIsTheBusyTimeOfAll) {
    // 1F1B 4×32: in the steady state all four devices compute, so a settled contention of κ
    // makes each steady instruction 1 + 3κ as long; the step lies between the alone step and
    // the alone step stretched by 1 + 3κ everywhere.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 32);
    const double alone = test::simulate(plan).makespan_ms;
    for (auto& stage : plan.stages) stage.cost.contention = 0.1;
    const SimResult sim = test::simulate(plan);
    EXPECT_GT(sim.makespan_ms, alone * 1.2);
    EXPECT_LT(sim.makespan_ms, alone * 1.3);
    // Device 0's 16th backward sits in the steady state: three neighbours all along.
    EXPECT_NEAR(busyNeighbours(plan, sim)[0][indexOf(plan, 0, "0B15")], 3, 1e-9);
}

TEST(SharedHardware, AContentionThatOverflowsTheStepIsNamed) {
    // Stretched times beyond a double are an error naming the cost that made them (issue 30's
    // rule), not the largest other cost.
    Plan plan = gpipe2x2(1e308);
    auto result = Simulator::run(plan);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find(".contention: 1e+308"), std::string::npos) << result.error().message;
}

// Two devices each running a one-stage chain of their own (F0 B0 F1 B1 beside F2 B2 F3 B3),
// the stages of `contention`, padded with `unused` one-stage chains no instruction names.
Plan sideBySidePadded(double contention, int unused) {
    nlohmann::json stages = nlohmann::json::array(), chains = nlohmann::json::array();
    for (int s = 0; s < 2 + unused; ++s) {
        stages.push_back({{"index", s},
                          {"device", s % 2},
                          {"forward_ms", s == 1 ? 2.0 : 1.0},
                          {"backward_ms", s == 0 ? 3.5 : 2.0},
                          {"contention", contention}});
        chains.push_back({s});
    }
    const nlohmann::json file = {{"format", "mario-plan"},
                                 {"version", 1},
                                 {"stages", stages},
                                 {"pipelines", chains},
                                 {"devices",
                                  {{{"index", 0}, {"program", {"0F0", "0B0", "0F1", "0B1"}}},
                                   {{"index", 1}, {"program", {"1F2", "1B2", "1F3", "1B3"}}}}}};
    auto plan = readPlan(file);
    EXPECT_TRUE(plan) << plan.error().message;
    return plan ? *plan : Plan{};
}

TEST(SharedHardware, UnusedStagesDoNotChangeTheRoundsOrTheirBudget) {
    // A contention of 1e15 stretches instructions to about 1e15, where one step of a double
    // (0.125) is above the 1e-4 a settled stretch may move: the rounds run until their budget,
    // 4e6 units of work, each round costing its 8 instructions, 2 devices and an overhead of 64.
    // It used to be 4e6 rounds of 8 instructions whatever the stage count, each round costing
    // its stages too (11 s at 64 stages, 113 s at 1,024).
    const int budgetRounds = static_cast<int>(4e6 / (8 + 2 + 64));
    const SimResult bare = test::simulate(sideBySidePadded(1e15, 0));
    const SimResult padded = test::simulate(sideBySidePadded(1e15, 1022));
    EXPECT_FALSE(bare.contention_settled);
    EXPECT_EQ(bare.contention_rounds, budgetRounds);
    EXPECT_EQ(padded.contention_rounds, budgetRounds);
    EXPECT_DOUBLE_EQ(padded.makespan_ms, bare.makespan_ms);
    // At an ordinary contention the padding changes nothing either.
    const SimResult settledBare = test::simulate(sideBySidePadded(0.5, 0));
    const SimResult settledPadded = test::simulate(sideBySidePadded(0.5, 1022));
    EXPECT_TRUE(settledPadded.contention_settled);
    EXPECT_EQ(settledPadded.contention_rounds, settledBare.contention_rounds);
    EXPECT_DOUBLE_EQ(settledPadded.makespan_ms, settledBare.makespan_ms);
    EXPECT_GT(settledBare.makespan_ms, settledBare.aloneMakespan());
}

TEST(SharedHardware, PlanFilesCarryTheContention) {
    Plan plan = gpipe2x2(0.25);
    const nlohmann::json written = writePlan(plan);
    EXPECT_DOUBLE_EQ(written["stages"][1]["contention"].get<double>(), 0.25);
    auto back = readPlan(written);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_DOUBLE_EQ(back->stages[1].cost.contention, 0.25);
    EXPECT_DOUBLE_EQ(test::simulate(*back).makespan_ms, test::simulate(plan).makespan_ms);
    // Devices of their own write nothing: files from before read as they did.
    EXPECT_FALSE(writePlan(gpipe2x2(0))["stages"][0].contains("contention"));
    nlohmann::json negative = written;
    negative["stages"][1]["contention"] = -0.5;
    auto refused = readPlan(negative);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("stages[1].contention"), std::string::npos) << refused.error().message;
}

// Device `device`'s OPT timing (its program's last instruction of that op).
InstructionTiming optimizerOf(const Plan& plan, const SimResult& sim, int device) {
    const auto& program = plan.devices[device].program;
    for (std::size_t i = program.size(); i-- > 0;)
        if (program[i].op == Op::Optimizer) return sim.devices[device].timings[i];
    ADD_FAILURE() << "no OPT on device " << device;
    return {};
}

TEST(SharedHardware, OptimizerStepsSideBySideSplitTheirBandwidth) {
    // GPipe 2x2 (forward 1, backward 2) with steps of 2 ms (stage 0) and 3 ms (stage 1). Alone:
    // device 1 steps over [7, 10] while device 0 runs B1 [7, 9] and steps over [9, 11].
    Plan plan = gpipe2x2(0);
    plan.stages[0].cost.optimizer_ms = 2;
    plan.stages[1].cost.optimizer_ms = 3;
    EXPECT_DOUBLE_EQ(test::simulate(plan).makespan_ms, 11);
    // Contention 0 for computing, 1 for stepping beside a step: device 1's step, x = end − 7 long,
    // runs 2 ms beside B1 (no stretch) and x − 2 beside device 0's step, so
    // x = 3 (1 + (x − 2)/x): x² − 6x + 6 = 0, x = 3 + √3, ending at 10 + √3. Device 0's step,
    // y = end − 9 long, shares x − 2 = 1 + √3 of it: y = 2 (1 + (1 + √3)/y), y = 1 + √(3 + 2√3).
    for (auto& stage : plan.stages) stage.cost.optimizer_contention = 1.0;
    const SimResult sim = test::simulate(plan);
    const double x = 3 + std::sqrt(3.0), y = 1 + std::sqrt(3 + 2 * std::sqrt(3.0));
    // The rounds stop once no stretch moves by 1e-4: within 1e-3 ms of the roots here.
    EXPECT_TRUE(sim.contention_settled);
    EXPECT_NEAR(optimizerOf(plan, sim, 1).end, 7 + x, 1e-3);
    EXPECT_NEAR(optimizerOf(plan, sim, 0).end, 9 + y, 1e-3);
    EXPECT_NEAR(sim.makespan_ms, 9 + y, 1e-3);
    EXPECT_NEAR(timingOf(plan, sim, 0, "0B1").end, 9, 1e-12);  // computing is not stretched

    // Beside a neighbour that computes, a step is charged the stage's contention: with 0.5 for
    // computing and 0 for stepping, the two steps side by side no longer slow each other, so
    // the step is shorter than with 0.5 for both.
    Plan mixed = gpipe2x2(0.5);
    mixed.stages[0].cost.optimizer_ms = 2;
    mixed.stages[1].cost.optimizer_ms = 3;
    const SimResult before = test::simulate(mixed);
    for (auto& stage : mixed.stages) stage.cost.optimizer_contention = 0.0;
    const SimResult apart = test::simulate(mixed);
    EXPECT_LT(apart.makespan_ms, before.makespan_ms);
    // Unset, the optimizer's contention is the stage's: the plans time as they did before.
    Plan unset = gpipe2x2(0.5);
    unset.stages[0].cost.optimizer_ms = 2;
    unset.stages[1].cost.optimizer_ms = 3;
    EXPECT_DOUBLE_EQ(test::simulate(unset).makespan_ms, before.makespan_ms);

    // Plan files carry it; files without it read as before.
    const nlohmann::json written = writePlan(plan);
    EXPECT_DOUBLE_EQ(written["stages"][0]["optimizer_contention"].get<double>(), 1.0);
    auto back = readPlan(written);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_DOUBLE_EQ(test::simulate(*back).makespan_ms, sim.makespan_ms);
    EXPECT_FALSE(writePlan(gpipe2x2(0.5))["stages"][0].contains("optimizer_contention"));
    nlohmann::json negative = written;
    negative["stages"][0]["optimizer_contention"] = -1;
    auto refused = readPlan(negative);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("stages[0].optimizer_contention"), std::string::npos)
        << refused.error().message;
}

// A deadlock is a result under contention too, and the timing after the rounds reuses the
// message tables the deadlocked round left: device 0 waits for B0's gradient before it sends
// anything, device 1 for F0's activation, so both stop at their first instruction at time 0,
// in the one round there is and in the timing after it, and again in a second simulation.
TEST(SharedHardware, ADeadlockStopsTheRoundsAndEveryTimingStopsAtTheSameInstructions) {
    Plan plan = gpipe2x2(0.5);
    auto& program = plan.devices[0].program;
    const auto recv = std::find(program.begin(), program.end(), *parseAction("0RECV_B0"));
    ASSERT_NE(recv, program.end());
    std::rotate(program.begin(), recv, recv + 1);  // 0RECV_B0 first
    ASSERT_EQ(plan.devices[1].program.front(), *parseAction("1RECV_F0"));
    for (int run = 0; run < 2; ++run) {
        auto sim = Simulator::run(plan);
        ASSERT_TRUE(sim) << sim.error().message;
        EXPECT_TRUE(sim->deadlocked);
        ASSERT_EQ(sim->blocked.size(), 2u);
        for (const BlockedDevice& blocked : sim->blocked) EXPECT_EQ(blocked.program_index, 0);
        EXPECT_EQ(sim->contention_rounds, 1);
        EXPECT_DOUBLE_EQ(sim->makespan_ms, 0);
        EXPECT_DOUBLE_EQ(sim->contention_ms, 0);
    }
}

}  // namespace
}  // namespace mario
