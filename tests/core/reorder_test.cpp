// The reorder pass (core/passes/ReorderSchedule.h) against the exact search
// (core/passes/ExactSchedule.h, itself checked against enumeration in exact_schedule_test.cpp) on
// random small plans: generators' orders and orders drawn at random, random costs, every forward
// checkpointed, hide's budget. On every plan the pass must stay valid and within its budget,
// never end above its input, and never below the proven optimum (that would mean the exact
// search or the simulator is wrong); on at least 95% of them it must reach that optimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/passes/ExactSchedule.h"
#include "core/passes/PassManager.h"
#include "core/passes/PassRegistry.h"
#include "core/passes/ReorderSchedule.h"
#include "core/schedule/Communication.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/RandomOrders.h"
#include "tests/core/RandomPlans.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

constexpr int kPlans = 300;
constexpr double kRequiredRate = 0.95;

struct Shape {
    Scheme scheme;
    int devices, microbatches;
    bool randomOrder;
};

Plan drawPlan(std::mt19937& rng, std::string& name) {
    static const Shape shapes[] = {{Scheme::OneFOneB, 2, 2, false}, {Scheme::OneFOneB, 2, 3, false},
                                   {Scheme::OneFOneB, 3, 2, false}, {Scheme::OneFOneB, 2, 4, false},
                                   {Scheme::OneFOneB, 3, 3, false}, {Scheme::GPipe, 2, 3, false},
                                   {Scheme::ZbH1, 2, 2, false},     {Scheme::OneFOneB, 2, 3, true},
                                   {Scheme::OneFOneB, 3, 2, true},  {Scheme::OneFOneB, 2, 4, true}};
    const Shape& shape = shapes[std::uniform_int_distribution<std::size_t>(0, std::size(shapes) - 1)(rng)];
    Plan plan = test::unitPlan(shape.scheme, shape.devices, shape.microbatches);
    if (shape.randomOrder) {
        auto ordered = planFromComputeOrder(plan, test::randomOrder(plan, shape.microbatches, rng));
        EXPECT_TRUE(ordered.ok());
        plan = std::move(*ordered);
    }
    test::randomCosts(plan, rng);
    EXPECT_TRUE(runPasses(plan, *parsePassList("checkpoint")).ok());
    name = std::string(schemeName(shape.scheme)) + (shape.randomOrder ? " (random order) " : " ") +
           std::to_string(shape.devices) + "x" + std::to_string(shape.microbatches);
    return plan;
}

// Reorders `input` within hide's budget and checks what every run must hold: a valid plan, every
// device within the budget, a step no longer than the input's.
struct Reordered {
    bool ok = false;
    double before = 0, after = 0;
    std::vector<double> budget;
};
Reordered reorderAndCheck(const Plan& input, const std::string& name) {
    Reordered out;
    auto budget = hideBudget(input, false);
    EXPECT_TRUE(budget.ok()) << name;
    if (!budget.ok()) return out;
    out.budget = *budget;
    out.before = test::simulate(input).makespan_ms;
    Plan plan = input;
    auto report = reorderSchedule(plan, out.budget);
    EXPECT_TRUE(report.ok()) << name << ": " << (report.ok() ? "" : report.error().message);
    if (!report.ok()) return out;
    const auto valid = Validator::validate(plan);
    EXPECT_TRUE(valid.ok()) << name << ": " << valid.summary();
    if (!valid.ok()) return out;
    out.after = test::simulate(plan).makespan_ms;
    EXPECT_LE(out.after, out.before * (1 + 1e-12)) << name;
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        EXPECT_LE(programPeakBytes(plan, static_cast<int>(d)), out.budget[d] * (1 + 1e-12)) << name;
    out.ok = true;
    return out;
}

TEST(Reorder, ReachesTheProvenOptimumOnSmallPlansAndNeverGoesBelowItOrAboveItsInput) {
    std::mt19937 rng(43);
    int proven = 0, reached = 0, drawn = 0;
    double worst = 0;
    while (proven < kPlans && drawn < 2 * kPlans) {
        ++drawn;
        std::string name;
        const Plan input = drawPlan(rng, name);
        const Reordered reordered = reorderAndCheck(input, name);
        ASSERT_TRUE(reordered.ok);
        const double after = reordered.after;
        auto exact = exactSchedule(input, reordered.budget);
        ASSERT_TRUE(exact.ok()) << exact.error().message;
        if (!exact->proven) continue;
        ++proven;
        EXPECT_GE(after, exact->makespan * (1 - 1e-9)) << name << ": below the proven optimum";
        if (after <= exact->makespan * (1 + 1e-9)) ++reached;
        worst = std::max(worst, after / exact->makespan - 1);
    }
    ASSERT_GE(proven, kPlans);
    const double rate = static_cast<double>(reached) / proven;
    std::printf("reorder reached the proven optimum on %d of %d plans (%.1f%%), worst %+.2f%% (%d drawn)\n", reached,
                proven, 100 * rate, 100 * worst, drawn);
    EXPECT_GE(rate, kRequiredRate);
}

// Zero-length computes (an embedding-only first stage with no dropout has no input-gradient
// kernel) on links with and without latency: the search re-times trials incrementally where every
// message takes some time (a deadlock cycle then has a positive length, grows and is caught) and
// whole where one need not. A zero-length cycle settled unnoticed would leave a deadlocked plan,
// which the validator's whole simulation refuses. (The exact search refuses zero-length computes,
// so there is no proven optimum to compare with here.)
TEST(Reorder, ZeroLengthComputesKeepThePlanValidWithinBudgetAndNoSlower) {
    std::mt19937 rng(47);
    int incremental = 0, improved = 0;
    for (int drawn = 0; drawn < kPlans; ++drawn) {
        std::string name;
        Plan input = drawPlan(rng, name);
        StageCost& first = input.stages.front().cost;
        first.forward_ms = first.recompute_ms = 0;
        if (first.backward_input_ms) {
            first.backward_ms -= *first.backward_input_ms;
            first.backward_input_ms = 0.0;
        }
        const bool latency = drawn % 2 == 0;
        input.link.latency_ms = latency ? 0.05 : 0.0;
        incremental += latency;
        const Reordered reordered = reorderAndCheck(input, name);
        ASSERT_TRUE(reordered.ok);
        improved += latency && reordered.after < reordered.before * (1 - 1e-9);
    }
    EXPECT_EQ(incremental, kPlans / 2);
    EXPECT_GT(improved, 0);  // the incrementally re-timed search moved something
    std::printf("zero-length computes: reorder shortened %d of %d plans with link latency\n", improved, kPlans / 2);
}

// Through the pass manager: after hide, reorder keeps hide's budget (taken on the plan hide was
// handed), not one grown from hide's result, and the plan stays valid and no slower.
TEST(Reorder, AfterHideKeepsHidesBudget) {
    std::mt19937 rng(7);
    for (int i = 0; i < 20; ++i) {
        Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
        test::randomCosts(plan, rng);
        Plan four = plan;
        ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok());
        auto budget = hideBudget(four, false);
        ASSERT_TRUE(budget.ok());
        Plan hidden = four;
        ASSERT_TRUE(runPasses(hidden, *parsePassList("hide")).ok());
        ASSERT_TRUE(runPasses(plan, *parsePassList("all,hide,reorder")).ok());
        EXPECT_LE(test::simulate(plan).makespan_ms, test::simulate(hidden).makespan_ms * (1 + 1e-12));
        for (std::size_t d = 0; d < plan.devices.size(); ++d)
            EXPECT_LE(programPeakBytes(plan, static_cast<int>(d)), (*budget)[d] * (1 + 1e-12));
    }
}

// Every scheme of the catalog (V placements with two stages per device, DualPipe's overlapped
// pairs, split backwards), random sizes and costs, after all,hide: reorder keeps the plan valid,
// within hide's budget and never slower. (The exact search refuses overlapped pairs; the moves
// never cross one.)
TEST(Reorder, KeepsEverySchemeValidWithinBudgetAndNoSlower) {
    std::mt19937 rng(4343);
    for (int i = 0; i < 60; ++i) {
        Plan plan = test::randomPlan(rng);
        ASSERT_TRUE(runPasses(plan, *parsePassList("all,hide")).ok());
        auto budget = hideBudget(plan, false);
        ASSERT_TRUE(budget.ok());
        const double before = test::simulate(plan).makespan_ms;
        auto report = reorderSchedule(plan, *budget);
        ASSERT_TRUE(report.ok()) << plan.info.scheme << ": " << report.error().message;
        ASSERT_TRUE(Validator::validate(plan).ok()) << plan.info.scheme << ": " << Validator::validate(plan).summary();
        EXPECT_LE(test::simulate(plan).makespan_ms, before * (1 + 1e-12)) << plan.info.scheme;
        for (std::size_t d = 0; d < plan.devices.size(); ++d)
            EXPECT_LE(programPeakBytes(plan, static_cast<int>(d)), (*budget)[d] * (1 + 1e-12)) << plan.info.scheme;
    }
}

}  // namespace
}  // namespace mario
