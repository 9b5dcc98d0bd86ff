// The critical path against schedules worked by hand, and its defining property on random
// plans: compute and transfers tile [0, makespan] with nothing in between.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/sim/CriticalPath.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/core/RandomPlans.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using test::simulate;

// "D3:3F0": the device and the action string of each compute step, as a person reads a Gantt.
std::vector<std::string> computeNames(const Plan& plan, const CriticalPath& path) {
    std::vector<std::string> names;
    for (const InstructionRef& ref : path.computeInstructions())
        names.push_back("D" + std::to_string(ref.device) + ":" +
                        toActionString(plan.devices[ref.device].program[ref.program_index]));
    return names;
}

TEST(CriticalPath, Figure2OneFOneBByHand) {
    // 1F1B, 4 devices, 4 micro-batches, F = 1, B = 2, free links; makespan 21. Worked by
    // hand: the first forward runs down the pipeline (devices 0..3 at 0, 1, 2, 3), device 3
    // then runs F0 B0 F1 B1 F2 B2 F3 B3 back to back from 3 to 15 (each of its RECV_F finds
    // the activation already there or arriving exactly as it asks: 6 ≥ 4, 9 = 9, 12 = 12),
    // and the last backward runs up the pipeline (device 2 at 15, 1 at 17, 0 at 19 to 21).
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 4);
    const SimResult sim = simulate(plan);
    ASSERT_DOUBLE_EQ(sim.makespan_ms, 21);
    auto path = criticalPath(plan, sim);
    ASSERT_TRUE(path.ok()) << path.error().message;
    const std::vector<std::string> expected{"D0:0F0", "D1:1F0", "D2:2F0", "D3:3F0", "D3:3B0", "D3:3F1", "D3:3B1",
                                            "D3:3F2", "D3:3B2", "D3:3F3", "D3:3B3", "D2:2B3", "D1:1B3", "D0:0B3"};
    EXPECT_EQ(computeNames(plan, *path), expected);
    // Seven forwards of 1 and seven backwards of 2, no transfer time on free links.
    EXPECT_DOUBLE_EQ(path->forward_ms, 7);
    EXPECT_DOUBLE_EQ(path->backward_ms, 14);
    EXPECT_DOUBLE_EQ(path->compute_ms, 21);
    EXPECT_DOUBLE_EQ(path->transfer_ms, 0);
    EXPECT_DOUBLE_EQ(path->gap_ms, 0);
    EXPECT_EQ(path->deviceChanges(), 6);  // down three devices, up three
}

TEST(CriticalPath, TransfersWithLatencyByHand) {
    // 1F1B, 2 devices, 2 micro-batches, F = 1, B = 2, latency 0.5. By hand:
    //   device 0: F0 [0,1]  F1 [1,2]  (waits)  B0 [5,7]  (waits)  B1 [8,10]
    //   device 1: (waits) F0 [1.5,2.5] B0 [2.5,4.5] F1 [4.5,5.5] B1 [5.5,7.5]
    // B1 on device 0 waits for the gradient sent at 7.5 (arrives 8); device 1 runs back to
    // back from 1.5, where it waited for F0's activation sent at 1 (arrives 1.5).
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2, 1, {}, LinkSpec{0.5, 0});
    const SimResult sim = simulate(plan);
    ASSERT_DOUBLE_EQ(sim.makespan_ms, 10);
    auto path = criticalPath(plan, sim);
    ASSERT_TRUE(path.ok()) << path.error().message;
    const std::vector<std::string> expected{"D0:0F0", "D1:1F0", "D1:1B0", "D1:1F1", "D1:1B1", "D0:0B1"};
    EXPECT_EQ(computeNames(plan, *path), expected);
    ASSERT_EQ(path->steps.size(), 8u);
    const CriticalStep& first = path->steps[1];
    EXPECT_EQ(first.kind, CriticalStep::Kind::Transfer);
    EXPECT_EQ(first.from, (InstructionRef{0, test::indexOf(plan, 0, "0SEND_F0")}));
    EXPECT_EQ(first.at, (InstructionRef{1, test::indexOf(plan, 1, "1RECV_F0")}));
    EXPECT_DOUBLE_EQ(first.start, 1);
    EXPECT_DOUBLE_EQ(first.end, 1.5);
    const CriticalStep& last = path->steps[6];
    EXPECT_EQ(last.kind, CriticalStep::Kind::Transfer);
    EXPECT_EQ(last.from, (InstructionRef{1, test::indexOf(plan, 1, "1SEND_B1")}));
    EXPECT_DOUBLE_EQ(last.start, 7.5);
    EXPECT_DOUBLE_EQ(last.end, 8);
    EXPECT_DOUBLE_EQ(path->compute_ms, 9);
    EXPECT_DOUBLE_EQ(path->transfer_ms, 1);
    EXPECT_DOUBLE_EQ(path->gap_ms, 0);
}

TEST(CriticalPath, RefusesADeadlock) {
    // Device 0 asks for B0's gradient before it runs F0: each device waits for the other.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1);
    auto& program = plan.devices[0].program;
    const int recv = test::indexOf(plan, 0, "0RECV_B0");
    ASSERT_GE(recv, 0);
    std::rotate(program.begin(), program.begin() + recv, program.begin() + recv + 1);
    const SimResult sim = simulate(plan);
    ASSERT_TRUE(sim.deadlocked);
    auto path = criticalPath(plan, sim);
    ASSERT_FALSE(path.ok());
    EXPECT_NE(path.error().message.find("deadlock"), std::string::npos);
}

TEST(CriticalPath, RefusesAnotherPlansResult) {
    const SimResult sim = simulate(test::unitPlan(Scheme::OneFOneB, 4, 4));
    EXPECT_FALSE(criticalPath(test::unitPlan(Scheme::OneFOneB, 2, 4), sim).ok());
}

TEST(CriticalPath, TilesTheStepOnRandomPlans) {
    std::mt19937 rng(14);
    for (int trial = 0; trial < 150; ++trial) {
        const Plan plan = test::randomPlan(rng);
        const SimResult sim = simulate(plan);
        ASSERT_FALSE(sim.deadlocked);
        auto path = criticalPath(plan, sim);
        ASSERT_TRUE(path.ok()) << path.error().message;
        const double eps = 1e-9 * std::max(1.0, sim.makespan_ms);
        ASSERT_FALSE(path->steps.empty());
        EXPECT_NEAR(path->steps.front().start, 0, eps) << "trial " << trial;
        EXPECT_NEAR(path->steps.back().end, sim.makespan_ms, eps) << "trial " << trial;
        for (std::size_t s = 0; s < path->steps.size(); ++s) {
            const CriticalStep& step = path->steps[s];
            if (s > 0) {
                EXPECT_NEAR(step.start, path->steps[s - 1].end, eps) << "trial " << trial << " step " << s;
            }
            if (step.kind == CriticalStep::Kind::Compute) {
                // A compute step is exactly the instruction's simulated box.
                const InstructionTiming& t = sim.devices[step.at.device].timings[step.at.program_index];
                EXPECT_EQ(step.start, t.start);
                EXPECT_EQ(step.end, t.end);
                EXPECT_TRUE(isCompute(plan.devices[step.at.device].program[step.at.program_index].op));
            } else {
                // A transfer is one message in flight: the link's time for the sender's bytes,
                // from a SEND on one device to a RECV on another.
                const Instruction& send = plan.devices[step.from.device].program[step.from.program_index];
                const Instruction& recv = plan.devices[step.at.device].program[step.at.program_index];
                ASSERT_TRUE(isSend(send.op));
                EXPECT_TRUE(isRecv(recv.op));
                EXPECT_NE(step.from.device, step.at.device);
                // send_bytes is the boundary after a stage: the sender's for an activation,
                // the receiver's for a gradient (docs/execution-model.md).
                const int boundary = send.op == Op::SendForward ? send.stage : recv.stage;
                EXPECT_NEAR(step.durationMs(),
                            plan.link.transferMs(plan.stages[static_cast<std::size_t>(boundary)].cost.send_bytes), eps);
            }
        }
        EXPECT_NEAR(path->gap_ms, 0, eps) << "trial " << trial;
        EXPECT_NEAR(path->compute_ms + path->transfer_ms, sim.makespan_ms, eps);
        EXPECT_NEAR(path->forward_ms + path->backward_ms + path->recompute_ms + path->other_ms, path->compute_ms, eps);
        // No chain can be shorter than the makespan it sets, nor beat the lower bound.
        EXPECT_GE(path->compute_ms + path->transfer_ms, sim.lower_bound_ms - eps);
    }
}

}  // namespace
}  // namespace mario
