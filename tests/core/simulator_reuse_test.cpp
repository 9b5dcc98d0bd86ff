// Simulator::run keeps one set of its tables per thread and rebuilds it for each plan, so that
// simulating again allocates none of them (issue 45). Whatever plan the tables held before, a
// simulation must be the one a thread that never simulated makes: each plan of a sequence that
// changes every size the tables have (stages, micro-batches, devices, chains, Rs, Is, contention
// rounds, a deadlock, a refused operand, no summary) is simulated after the one before it and
// again on a fresh thread, and every number of the two results must be the same to the last bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// The result of `plan` simulated on a thread of its own: no tables left by any plan before.
Result<SimResult> simulateOnAFreshThread(const Plan& plan, const SimOptions& options) {
    Result<SimResult> result = makeError("not simulated");
    std::thread([&] { result = Simulator::run(plan, options); }).join();
    return result;
}

void expectSameResult(const Result<SimResult>& reused, const Result<SimResult>& fresh, const std::string& what) {
    ASSERT_EQ(reused.ok(), fresh.ok()) << what;
    if (!fresh.ok()) {
        EXPECT_EQ(reused.error().message, fresh.error().message) << what;
        return;
    }
    const SimResult& a = *reused;
    const SimResult& b = *fresh;
    EXPECT_EQ(a.deadlocked, b.deadlocked) << what;
    EXPECT_EQ(a.blocked.size(), b.blocked.size()) << what;
    for (std::size_t k = 0; k < std::min(a.blocked.size(), b.blocked.size()); ++k)
        EXPECT_EQ(a.blocked[k].waits_for, b.blocked[k].waits_for) << what;
    EXPECT_EQ(a.makespan_ms, b.makespan_ms) << what;
    EXPECT_EQ(a.lower_bound_ms, b.lower_bound_ms) << what;
    EXPECT_EQ(a.critical_chain_ms, b.critical_chain_ms) << what;
    EXPECT_EQ(a.tight_lower_bound_ms, b.tight_lower_bound_ms) << what;
    EXPECT_EQ(a.recompute_ms, b.recompute_ms) << what;
    EXPECT_EQ(a.recompute_hidden_ms, b.recompute_hidden_ms) << what;
    EXPECT_EQ(a.contention_ms, b.contention_ms) << what;
    EXPECT_EQ(a.contention_rounds, b.contention_rounds) << what;
    EXPECT_EQ(a.flops.model_flops, b.flops.model_flops) << what;
    ASSERT_EQ(a.devices.size(), b.devices.size()) << what;
    for (std::size_t d = 0; d < a.devices.size(); ++d) {
        const DeviceStats& x = a.devices[d];
        const DeviceStats& y = b.devices[d];
        EXPECT_EQ(x.busy_ms, y.busy_ms) << what << ", device " << d;
        EXPECT_EQ(x.peak_bytes, y.peak_bytes) << what << ", device " << d;
        ASSERT_EQ(x.timings.size(), y.timings.size()) << what << ", device " << d;
        for (std::size_t i = 0; i < x.timings.size(); ++i) {
            EXPECT_EQ(x.timings[i].start, y.timings[i].start) << what << ", device " << d << ", instruction " << i;
            EXPECT_EQ(x.timings[i].end, y.timings[i].end) << what << ", device " << d << ", instruction " << i;
        }
        ASSERT_EQ(x.recompute_hidden.size(), y.recompute_hidden.size()) << what << ", device " << d;
        for (std::size_t k = 0; k < x.recompute_hidden.size(); ++k)
            EXPECT_EQ(x.recompute_hidden[k].hidden_ms, y.recompute_hidden[k].hidden_ms) << what;
    }
}

// A device recomputes every forward it keeps, right before its backward.
Plan withRecomputation(Plan plan, std::size_t device = 0) {
    test::recomputeBeforeEachBackward(plan, device);
    return plan;
}

Plan withContention(Plan plan, double contention) {
    for (auto& stage : plan.stages) stage.cost.contention = contention;
    return plan;
}

// Device 0 waits for a gradient before its first forward: a deadlock.
Plan deadlocked(Plan plan) {
    auto& program = plan.devices[0].program;
    const auto receive =
        std::find_if(program.begin(), program.end(), [](const Instruction& ins) { return ins.op == Op::RecvBackward; });
    std::rotate(program.begin(), receive, receive + 1);
    return plan;
}

// A forward of micro-batch -1: refused before any table is indexed.
Plan withABadOperand(Plan plan) {
    for (Instruction& ins : plan.devices[1].program)
        if (ins.op == Op::Forward) {
            ins.microbatch = -1;
            break;
        }
    return plan;
}

TEST(SimulatorReuse, EveryPlanOfASequenceSimulatesAsOnAFreshThread) {
    struct Step {
        std::string what;
        Plan plan;
        SimOptions options;
    };
    std::vector<Step> steps;
    steps.push_back({"1F1B 8 x 32", test::unitPlan(Scheme::OneFOneB, 8, 32), {}});
    steps.push_back({"1F1B 2 x 2 after a larger plan", test::unitPlan(Scheme::OneFOneB, 2, 2), {}});
    steps.push_back({"ZB-H1 4 x 8, split backwards", test::unitPlan(Scheme::ZbH1, 4, 8), {}});
    steps.push_back({"Chimera 4 x 8, two chains", test::unitPlan(Scheme::Chimera, 4, 8), {}});
    steps.push_back({"interleaved 4 x 16, 2 chunks", test::unitPlan(Scheme::Interleaved, 4, 16, 2), {}});
    steps.push_back({"1F1B 4 x 8 with Rs", withRecomputation(test::unitPlan(Scheme::OneFOneB, 4, 8)), {}});
    steps.push_back({"1F1B 4 x 8 with Rs on device 2 only (no marks left from device 0's)",
                     withRecomputation(test::unitPlan(Scheme::OneFOneB, 4, 8), 2),
                     {}});
    steps.push_back(
        {"1F1B 4 x 8 without the summary", test::unitPlan(Scheme::OneFOneB, 4, 8), SimOptions::timelineOnly()});
    steps.push_back(
        {"1F1B 4 x 8 with contention rounds", withContention(test::unitPlan(Scheme::OneFOneB, 4, 8), 0.3), {}});
    steps.push_back({"1F1B 16 x 64 after contention rounds", test::unitPlan(Scheme::OneFOneB, 16, 64), {}});
    steps.push_back({"a deadlocked 1F1B 4 x 8", deadlocked(test::unitPlan(Scheme::OneFOneB, 4, 8)), {}});
    steps.push_back({"1F1B 4 x 8 after a deadlock", test::unitPlan(Scheme::OneFOneB, 4, 8), {}});
    steps.push_back({"a refused operand", withABadOperand(test::unitPlan(Scheme::OneFOneB, 4, 8)), {}});
    steps.push_back({"Chimera 4 x 8 with Rs and contention after a refusal",
                     withContention(withRecomputation(test::unitPlan(Scheme::Chimera, 4, 8)), 0.2),
                     {}});
    steps.push_back({"DualPipe 4 x 8", test::unitPlan(Scheme::DualPipe, 4, 8), {}});
    steps.push_back({"1F1B 8 x 32 again", test::unitPlan(Scheme::OneFOneB, 8, 32), {}});
    for (const Step& step : steps) {
        const auto reused = Simulator::run(step.plan, step.options);
        expectSameResult(reused, simulateOnAFreshThread(step.plan, step.options), step.what);
    }
    // The refusal is a refusal, and the contention plans took rounds: the sequence covers them.
    EXPECT_FALSE(Simulator::run(steps[12].plan).ok());
    EXPECT_GT(Simulator::run(steps[8].plan)->contention_rounds, 1);
    EXPECT_TRUE(Simulator::run(steps[10].plan)->deadlocked);
}

}  // namespace
}  // namespace mario
