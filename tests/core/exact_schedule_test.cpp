// The exact search (core/passes/ExactSchedule.h) against an independent enumeration: on tiny
// pipelines every device order of F, B (or I and W) and R, with every choice of which forwards
// are checkpointed, is written with planFromComputeOrder and simulated; the least step among the
// plans that do not deadlock and keep every device within its budget is the optimum the search
// must prove. And against 1F1B's closed form, (m + p − 1)(F + B) for uniform stages: no order
// beats it (the last device starts its first forward after p − 1 forwards, runs m forwards and
// backwards, and the first gradient then crosses p − 1 backwards).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/passes/ExactSchedule.h"
#include "core/passes/PassManager.h"
#include "core/schedule/Communication.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/RandomOrders.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using Order = std::vector<Instruction>;

// Every order of one device's compute, each forward with or without its R, whose memory stays
// within `budget`: an F before its R before its backward, I before W (the schemes drawn here
// run one stage per device).
std::vector<Order> deviceOrders(const Plan& plan, int device, double budget) {
    std::vector<Instruction> work;
    for (const auto& ins : plan.devices[device].program)
        if (hasMicrobatch(ins.op) && isCompute(ins.op) && ins.op != Op::Recompute) work.push_back(ins);
    const double statics = staticBytesOf(plan, device);
    std::vector<Order> out;
    Order current;
    std::vector<int> state(work.size(), 0);  // an F's: 0 not yet, 1 kept whole, 2 its R owed, 3 R ran
    auto has = [&](Op op, int stage, int mb) {
        return std::find(current.begin(), current.end(), Instruction{op, stage, mb}) != current.end();
    };
    auto visit = [&](auto&& self) -> void {
        if (current.size() >= work.size() &&
            std::all_of(work.begin(), work.end(), [&](const Instruction& w) { return has(w.op, w.stage, w.microbatch); })) {
            const auto levels = memoryLevels(plan, current);
            const double peak = levels.empty() ? 0.0 : *std::max_element(levels.begin(), levels.end());
            if (statics + std::max(0.0, peak) <= budget * (1 + 1e-12)) out.push_back(current);
            return;
        }
        for (std::size_t i = 0; i < work.size(); ++i) {
            const Instruction w = work[i];
            if (has(w.op, w.stage, w.microbatch)) continue;
            const bool forwardDone = has(Op::Forward, w.stage, w.microbatch);
            if (w.op != Op::Forward && !forwardDone) continue;
            if (w.op == Op::BackwardWeight && !has(Op::BackwardInput, w.stage, w.microbatch)) continue;
            if (isBackwardStart(w.op)) {
                // Its forward's R, when one was chosen, must have run.
                bool owed = false;
                for (std::size_t f = 0; f < work.size(); ++f)
                    owed = owed || (work[f].op == Op::Forward && work[f].stage == w.stage &&
                                    work[f].microbatch == w.microbatch && state[f] == 2);
                if (owed) continue;
            }
            if (w.op == Op::Forward) {
                for (int withR : {0, 1}) {
                    current.push_back(w);
                    state[i] = withR ? 2 : 1;
                    self(self);
                    state[i] = 0;
                    current.pop_back();
                }
            } else {
                current.push_back(w);
                self(self);
                current.pop_back();
            }
        }
        // An owed R may run now.
        for (std::size_t f = 0; f < work.size(); ++f) {
            if (state[f] != 2) continue;
            const Instruction r{Op::Recompute, work[f].stage, work[f].microbatch};
            current.push_back(r);
            state[f] = 3;
            self(self);
            state[f] = 2;
            current.pop_back();
        }
    };
    visit(visit);
    return out;
}

// The least step over every combination of the devices' orders; infinity when none runs.
double bruteForce(const Plan& plan, const std::vector<double>& budget) {
    std::vector<std::vector<Order>> choices;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) choices.push_back(deviceOrders(plan, static_cast<int>(d), budget[d]));
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::size_t> pick(choices.size(), 0);
    for (;;) {
        ComputeOrder order;
        for (std::size_t d = 0; d < choices.size(); ++d) {
            if (choices[d].empty()) return best;
            order.push_back(choices[d][pick[d]]);
        }
        auto built = planFromComputeOrder(plan, order);
        EXPECT_TRUE(built.ok());
        auto sim = Simulator::run(*built, SimOptions::timelineOnly());
        if (sim.ok() && !sim->deadlocked) best = std::min(best, sim->makespan_ms);
        std::size_t d = 0;
        while (d < pick.size() && ++pick[d] == choices[d].size()) pick[d++] = 0;
        if (d == pick.size()) return best;
    }
}

// The exact answer's plan is valid, runs in the step it claims and keeps every budget.
void expectPlanOfResult(const ExactResult& result, const std::vector<double>& budget) {
    ASSERT_TRUE(result.plan.has_value());
    EXPECT_TRUE(Validator::validate(*result.plan).ok()) << Validator::validate(*result.plan).summary();
    const SimResult sim = test::simulate(*result.plan);
    EXPECT_NEAR(sim.makespan_ms, result.makespan, 1e-9 * result.makespan);
    for (std::size_t d = 0; d < budget.size(); ++d)
        EXPECT_LE(programPeakBytes(*result.plan, static_cast<int>(d)), budget[d] * (1 + 1e-12));
}

struct Case {
    Scheme scheme;
    int devices, microbatches, seeds;
};

TEST(ExactSchedule, EqualsBruteForceOnTinyPipelines) {
    const Case cases[] = {{Scheme::OneFOneB, 2, 2, 8}, {Scheme::GPipe, 2, 2, 4}, {Scheme::ZbH1, 2, 2, 4},
                          {Scheme::OneFOneB, 3, 2, 2}};
    int compared = 0;
    for (const Case& c : cases)
        for (int seed = 0; seed < c.seeds; ++seed) {
            std::mt19937 rng(1000 * c.devices + 17 * c.microbatches + seed + static_cast<int>(c.scheme));
            Plan plan = test::unitPlan(c.scheme, c.devices, c.microbatches);
            test::randomCosts(plan, rng);
            Plan checkpointed = plan;
            ASSERT_TRUE(runPasses(checkpointed, *parsePassList("checkpoint")).ok());
            // Three budgets: the checkpointed plan's own peaks (some forwards must recompute),
            // hide's rule (one more activation set), and none.
            std::vector<double> tight;
            for (std::size_t d = 0; d < plan.devices.size(); ++d)
                tight.push_back(programPeakBytes(checkpointed, static_cast<int>(d)));
            const auto hide = hideBudget(checkpointed, false);
            ASSERT_TRUE(hide.ok());
            const std::vector<double> none(plan.devices.size(), std::numeric_limits<double>::infinity());
            const std::vector<double>* budgets[] = {&tight, &hide.value(), &none};
            for (const std::vector<double>* budget : budgets) {
                const double expected = bruteForce(plan, *budget);
                auto exact = exactSchedule(checkpointed, *budget);
                ASSERT_TRUE(exact.ok()) << exact.error().message;
                ASSERT_TRUE(exact->proven);
                const std::string where = std::string(schemeName(c.scheme)) + " " + std::to_string(c.devices) + "x" +
                                          std::to_string(c.microbatches) + " seed " + std::to_string(seed);
                EXPECT_NEAR(exact->makespan, expected, 1e-9 * expected) << where;
                EXPECT_LE(exact->root_bound, expected * (1 + 1e-12)) << where;
                expectPlanOfResult(*exact, *budget);
                ++compared;
            }
        }
    EXPECT_EQ(compared, 3 * (8 + 4 + 4 + 2));
}

TEST(ExactSchedule, OneFOneBClosedFormIsOptimalForUniformStages) {
    for (int p : {2, 3, 4})
        for (int m : {p, 2 * p}) {
            Plan plan = test::unitPlan(Scheme::OneFOneB, p, m);  // F = 1, B = 2, no transfer time
            // 1F1B's own memory: device 0 holds p activations at once.
            std::vector<double> budget;
            for (int d = 0; d < p; ++d) budget.push_back(programPeakBytes(plan, d));
            auto exact = exactSchedule(plan, budget);
            ASSERT_TRUE(exact.ok()) << exact.error().message;
            EXPECT_TRUE(exact->proven) << p << "x" << m;
            EXPECT_DOUBLE_EQ(exact->makespan, (m + p - 1) * 3.0) << p << "x" << m;
            expectPlanOfResult(*exact, budget);
        }
}

TEST(ExactSchedule, SaysNotProvenWhenItsNodeBudgetRunsOut) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
    std::mt19937 rng(7);
    test::randomCosts(plan, rng);
    ASSERT_TRUE(runPasses(plan, *parsePassList("checkpoint")).ok());
    auto budget = hideBudget(plan, false);
    ASSERT_TRUE(budget.ok());
    ExactOptions options;
    options.node_budget = 50;
    auto exact = exactSchedule(plan, *budget, options);
    ASSERT_TRUE(exact.ok());
    EXPECT_FALSE(exact->proven);
    EXPECT_LE(exact->nodes, 51);
}

TEST(ExactSchedule, RefusesWhatItDoesNotModel) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    plan.stages[1].cost.forward_ms = 0;
    auto exact = exactSchedule(plan, {1e30, 1e30});
    ASSERT_FALSE(exact.ok());
    EXPECT_NE(exact.error().message.find("takes no time"), std::string::npos);
}

}  // namespace
}  // namespace mario
