// The pass stepper's captions on Figure 2, checked against the hand-worked schedule.
#include <gtest/gtest.h>

#include "core/passes/PassManager.h"
#include "core/passes/StepCaption.h"
#include "core/session/PassTrace.h"
#include "core/sim/Simulator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

TEST(StepCaption, Figure2StepsReadAsThePaperTellsThem) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 4);
    std::vector<std::pair<PassReport, Plan>> snapshots;
    PassManagerOptions options;
    options.on_step = [&](const PassReport& step, const Plan& now) { snapshots.push_back({step, now}); };
    ASSERT_TRUE(runPasses(plan, *parsePassList("all"), options).ok());
    ASSERT_EQ(snapshots.size(), 4u);  // checkpoint, overlap, redundancy, prepose
    std::vector<std::string> captions;
    SimResult previous = *Simulator::run(test::unitPlan(Scheme::OneFOneB, 4, 4));
    for (const auto& [step, now] : snapshots) {
        const SimResult sim = *Simulator::run(now);
        captions.push_back(captionForStep(step, now, previous, sim));
        previous = sim;
    }
    EXPECT_EQ(captions[0], "Apply-checkpoint keeps only the inputs of 16 forwards and recomputes each right before "
                           "its backward. Step 21 → 28 ms.");
    // Hand-worked (the 25-unit schedule): device 0's R1 runs over [13, 14) while device 1
    // computes B1 over [13, 15); R0 only overlaps device 1's own R0, so R1 is the example.
    EXPECT_EQ(captions[1], "Overlap-recompute moved 12 recomputations ahead of their gradient waits: 0R1 on device 0 "
                           "now runs while device 1 computes 1B1. Step 28 → 25 ms.");
    EXPECT_EQ(captions[2], "Remove-redundancy dropped 3R0 on device 3, 3R1 on device 3, 3R2 on device 3 and 1 more: "
                           "each followed its own forward directly, so checkpointing saved nothing. Step 25 → 23 ms.");
    EXPECT_EQ(captions[3], "Prepose-forward moved 1F3 on device 1 and 2F2 on device 2 into earlier bubbles, freeing "
                           "their slots for recomputation. Step 23 → 22 ms.");
}

TEST(StepCaption, UnitCostStepsCountTimeUnitsNotMilliseconds) {
    // Figure 2 from its unit-cost config: the stepper's captions say what the axes say.
    ScheduleInput input;
    input.config = Config{};
    input.config->unit_costs = UnitCosts{};
    input.source = test::unitPlan(Scheme::OneFOneB, 4, 4);
    input.passes = *parsePassList("all");
    const auto steps = passTrace(input);
    ASSERT_EQ(steps.size(), 5u);  // the base and four passes
    EXPECT_EQ(steps[1].caption.substr(steps[1].caption.size() - 26), "Step 21 → 28 time units.");
    EXPECT_EQ(steps[4].caption.substr(steps[4].caption.size() - 26), "Step 23 → 22 time units.");
    input.config->unit_costs.reset();  // real costs: milliseconds
    EXPECT_EQ(passTrace(input)[1].caption.substr(passTrace(input)[1].caption.size() - 18), "Step 21 → 28 ms.");
}

}  // namespace
}  // namespace mario
