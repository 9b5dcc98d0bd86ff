// Prepose-forward's re-timing limit (issue 30): its trials are incremental, and on big steps a
// trial re-times half the plan, so a budget counted in trials let 32 devices × 2048
// micro-batches spend 1.2 s for a step that the first trials had already shortened. The pass
// now also stops once its trials have re-timed `maxEvaluations` instructions; here it is held
// against the same pass run without that limit on one plan.
#include <gtest/gtest.h>

#include "core/passes/PassManager.h"
#include "core/passes/Passes.h"
#include "core/sim/Validator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

Plan checkpointedChimera() {
    Plan plan = test::unitPlan(Scheme::Chimera, 8, 64);
    EXPECT_TRUE(runPasses(plan, {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy}).ok());
    return plan;
}

TEST(PreposeBudget, StopsOnceItsTrialsHaveRetimedTheLimit) {
    Plan unlimited = checkpointedChimera();
    const double before = test::simulate(unlimited).makespan_ms;
    auto whole = preposeForward(unlimited);
    ASSERT_TRUE(whole) << whole.error().message;
    ASSERT_GT(whole->simulations, 4) << "the plan must give prepose enough trials to cut short";

    Plan limited = checkpointedChimera();
    const long long limit = whole->evaluations / 4;
    auto cut = preposeForward(limited, {}, nullptr, 0, limit);
    ASSERT_TRUE(cut) << cut.error().message;
    // It stops at the first trial that reaches the limit, never before, never a trial later.
    EXPECT_GE(cut->evaluations, limit);
    EXPECT_LT(cut->evaluations, limit + static_cast<long long>(limited.instructionCount()));
    EXPECT_LT(cut->simulations, whole->simulations);
    // What it keeps is a valid plan, no slower than where it started.
    EXPECT_TRUE(Validator::validate(limited).ok());
    EXPECT_LE(test::simulate(limited).makespan_ms, before + 1e-9);
    EXPECT_GE(test::simulate(limited).makespan_ms, test::simulate(unlimited).makespan_ms - 1e-9);
}

TEST(PreposeBudget, NoLimitWhenTheCallerSetsNone) {
    Plan a = checkpointedChimera(), b = checkpointedChimera();
    auto unlimited = preposeForward(a);
    auto zero = preposeForward(b, {}, nullptr, 0, 0);
    ASSERT_TRUE(unlimited && zero);
    EXPECT_EQ(zero->simulations, unlimited->simulations);
    EXPECT_EQ(zero->evaluations, unlimited->evaluations);
}

}  // namespace
}  // namespace mario
