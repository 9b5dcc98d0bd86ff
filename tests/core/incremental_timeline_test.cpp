// The incremental timeline against the simulator: on random plans of every scheme, random
// batches of recomputations move earlier (anywhere after their forward), and after every
// update — and after every undo — each instruction's start and end equal a whole simulation's;
// an update that gives up does so only when the step really got longer.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/passes/PassManager.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/core/RandomPlans.h"

namespace mario {
namespace {

void expectSameTimeline(const Plan& plan, const IncrementalTimeline& timeline, const char* when) {
    auto sim = Simulator::run(plan);
    ASSERT_TRUE(sim.ok());
    ASSERT_FALSE(sim->deadlocked);
    EXPECT_NEAR(timeline.makespan(), sim->makespan_ms, 1e-7) << when;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& ours = timeline.timings(static_cast<int>(d));
        ASSERT_EQ(ours.size(), sim->devices[d].timings.size());
        for (std::size_t i = 0; i < ours.size(); ++i) {
            ASSERT_NEAR(ours[i].start, sim->devices[d].timings[i].start, 1e-7)
                << when << ": device " << d << " " << toActionString(plan.devices[d].program[i]);
            ASSERT_NEAR(ours[i].end, sim->devices[d].timings[i].end, 1e-7)
                << when << ": device " << d << " " << toActionString(plan.devices[d].program[i]);
        }
    }
}

struct Move {
    int device = 0;
    std::size_t from = 0, to = 0;
};

// A random R of `device` and a random earlier position after its forward, if there is one.
bool randomMove(const Plan& plan, int device, std::mt19937& rng, Move& move) {
    const auto& program = plan.devices[device].program;
    std::vector<std::size_t> recomputes;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i].op == Op::Recompute) recomputes.push_back(i);
    if (recomputes.empty()) return false;
    const std::size_t r = recomputes[std::uniform_int_distribution<std::size_t>(0, recomputes.size() - 1)(rng)];
    std::size_t forward = r;
    while (forward > 0 && !(program[forward - 1] == Instruction{Op::Forward, program[r].stage, program[r].microbatch}))
        --forward;
    if (forward == 0 || forward >= r) return false;  // forward is the index just after the F
    move = {device, r, std::uniform_int_distribution<std::size_t>(forward, r - 1)(rng)};
    // Not between an overlapped pair's F and its B (DualPipe's F&B): the validator refuses a
    // forward marked overlapped without its backward right after it, and no pass parts a pair.
    return !program[move.to - 1].overlapped;
}

TEST(IncrementalTimeline, FollowsRandomMovesOfRecomputationsExactly) {
    std::mt19937 rng(11);
    long long updates = 0, evaluations = 0, instructions = 0, gaveUp = 0;
    for (int trial = 0; trial < 60; ++trial) {
        Plan plan = test::randomPlan(rng);
        ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint, PassId::Overlap}).ok());
        auto built = IncrementalTimeline::build(plan);
        ASSERT_TRUE(built.ok()) << built.error().message;
        IncrementalTimeline timeline = std::move(*built);
        // Half the plans give up with the tails too (they must stay lower bounds through R moves).
        const bool tails = trial % 2 == 0;
        if (tails) timeline.takeTails();
        const std::size_t evaluationsBefore = timeline.evaluations();
        for (int step = 0; step < 25; ++step) {
            if (tails && rng() % 4 == 0) timeline.takeTails();
            std::vector<Move> batch;
            for (int d = 0; d < static_cast<int>(plan.devices.size()); ++d) {
                Move move;
                if (rng() % 2 && randomMove(plan, d, rng, move)) batch.push_back(move);
            }
            if (batch.empty()) continue;
            for (const Move& m : batch) {
                auto& program = plan.devices[m.device].program;
                std::rotate(program.begin() + m.to, program.begin() + m.from, program.begin() + m.from + 1);
                timeline.moved(plan, m.device, m.from, m.to);
            }
            // Half the updates may give up once the step provably ends later than before.
            const double before = timeline.makespan();
            const bool mayGiveUp = rng() % 2;
            auto updated = mayGiveUp ? timeline.update(plan, before) : timeline.update(plan);
            ASSERT_TRUE(updated.ok());
            if (!*updated) {
                ASSERT_TRUE(mayGiveUp) << "moving an R earlier after its F cannot deadlock";
                auto sim = Simulator::run(plan);
                ASSERT_TRUE(sim.ok());
                EXPECT_GT(sim->makespan_ms, before) << "gave up on a move that does not lengthen the step";
                ++gaveUp;
                for (const Move& m : batch) {
                    auto& program = plan.devices[m.device].program;
                    std::rotate(program.begin() + m.to, program.begin() + m.to + 1, program.begin() + m.from + 1);
                }
                timeline.undo(plan);
                expectSameTimeline(plan, timeline, "after giving up");
                continue;
            }
            ++updates;
            instructions += static_cast<long long>(plan.instructionCount());
            expectSameTimeline(plan, timeline, "after a move");
            if (rng() % 3 == 0) {
                for (const Move& m : batch) {
                    auto& program = plan.devices[m.device].program;
                    std::rotate(program.begin() + m.to, program.begin() + m.to + 1, program.begin() + m.from + 1);
                }
                timeline.undo(plan);
                expectSameTimeline(plan, timeline, "after undo");
            }
            if (HasFatalFailure()) return;
        }
        evaluations += static_cast<long long>(timeline.evaluations() - evaluationsBefore);
    }
    ASSERT_GT(updates, 300);
    EXPECT_GT(gaveUp, 50);
    // Incremental at all: fewer instructions re-evaluated than whole simulations would run.
    EXPECT_LT(evaluations, instructions);
    std::printf("incremental timeline: %lld updates, %.1f%% of the instructions whole simulations would run\n", updates,
                100.0 * static_cast<double>(evaluations) / static_cast<double>(instructions));
}

// Prepose-forward's moves: a forward with its receive and send moves anywhere earlier on its
// device. That can deadlock the plan; every cycle it closes runs through the moved forward, whose
// positive length makes the times grow round the cycle, so the update must refuse exactly the
// moves the simulator finds deadlocked, and follow the others exactly.
TEST(IncrementalTimeline, FollowsForwardMovesAndRefusesTheDeadlockedOnes) {
    std::mt19937 rng(5);
    int deadlocks = 0, followed = 0;
    for (int trial = 0; trial < 40; ++trial) {
        Plan plan = test::randomPlan(rng);
        ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint, PassId::Overlap}).ok());
        auto built = IncrementalTimeline::build(plan);
        ASSERT_TRUE(built.ok()) << built.error().message;
        IncrementalTimeline timeline = std::move(*built);
        for (int step = 0; step < 20; ++step) {
            const int d = static_cast<int>(rng() % plan.devices.size());
            auto& program = plan.devices[d].program;
            std::vector<std::size_t> forwards;
            for (std::size_t i = 1; i < program.size(); ++i)
                if (program[i].op == Op::Forward && !program[i].overlapped) forwards.push_back(i);
            if (forwards.empty()) continue;
            const std::size_t f = forwards[rng() % forwards.size()];
            std::size_t g0 = f, g1 = f + 1;
            if (program[f - 1] == Instruction{Op::RecvForward, program[f].stage, program[f].microbatch}) --g0;
            if (g1 < program.size() &&
                program[g1] == Instruction{Op::SendForward, program[f].stage, program[f].microbatch})
                ++g1;
            if (g0 == 0) continue;
            const std::size_t target = rng() % g0;
            if (target > 0 && program[target - 1].overlapped) continue;  // would part a pair, as above
            if (rng() % 2) {  // one instruction at a time, or the group as one block
                for (std::size_t j = 0; j < g1 - g0; ++j) {
                    std::rotate(program.begin() + target + j, program.begin() + g0 + j, program.begin() + g0 + j + 1);
                    timeline.moved(plan, d, g0 + j, target + j);
                }
            } else {
                std::rotate(program.begin() + target, program.begin() + g0, program.begin() + g1);
                timeline.moved(plan, d, g0, target, g1 - g0);
            }
            auto sim = Simulator::run(plan);
            ASSERT_TRUE(sim.ok());
            auto updated = timeline.update(plan);
            ASSERT_TRUE(updated.ok());
            EXPECT_EQ(*updated, !sim->deadlocked);
            if (*updated) {
                ++followed;
                expectSameTimeline(plan, timeline, "after a forward move");
                if (rng() % 2) continue;
            } else {
                ++deadlocks;
            }
            std::rotate(program.begin() + target, program.begin() + target + (g1 - g0), program.begin() + g1);
            timeline.undo(plan);
            expectSameTimeline(plan, timeline, "after undoing a forward move");
            if (HasFatalFailure()) return;
        }
    }
    EXPECT_GT(deadlocks, 20);
    EXPECT_GT(followed, 100);
}

// One device, GPipe with three micro-batches checkpointed (F 0.3, R 0.1, B 1 ms): nothing waits,
// so the step is the sum of the work, 3·(0.3 + 0.1 + 1) = 4.2 ms, wherever the Rs stand. Moving
// R1 ahead of F2 re-times F2 to end at (0.6 + 0.1) + 0.3 = 1.0 in doubles, while R0 right after
// it keeps the start the whole simulation gave it, (0.3 + 0.3 + 0.3) + 0.1 = 0.9999999999999999:
// the same time up to rounding, so the update stops there, and F2 ends a last bit after R0
// starts. When R0 then moves ahead of F2, F2's tail taken before (which holds R0) is no bound
// any more; the update gave up on that move although the step stays 4.2 (found on random ZBV
// plans).
TEST(IncrementalTimeline, AnEndThatEqualsAMovedRsStartUpToRoundingMayReachIt) {
    Plan plan = test::unitPlan(Scheme::GPipe, 1, 3, 1, {.forward = 0.3, .backward = 1, .recompute = 0.1});
    ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint}).ok());
    auto& program = plan.devices[0].program;
    auto move = [&](const char* action, std::size_t to) {
        const auto from = static_cast<std::size_t>(test::indexOf(plan, 0, action));
        std::rotate(program.begin() + to, program.begin() + from, program.begin() + from + 1);
        return from;
    };
    move("0R1", 3);  // F0 F1 F2 R1 R0 B0 B1 R2 B2
    ASSERT_EQ(test::indexOf(plan, 0, "0R0"), 4);
    auto built = IncrementalTimeline::build(plan);
    ASSERT_TRUE(built.ok()) << built.error().message;
    IncrementalTimeline timeline = std::move(*built);
    timeline.moved(plan, 0, move("0R1", 2), 2);  // F0 F1 R1 F2 R0 …
    ASSERT_TRUE(*timeline.update(plan));
    EXPECT_EQ(timeline.timings(0)[3].end, 1.0);                      // F2, re-timed
    EXPECT_EQ(timeline.timings(0)[4].start, 0.3 + 0.3 + 0.3 + 0.1);  // R0, kept
    EXPECT_LT(timeline.timings(0)[4].start, timeline.timings(0)[3].end);
    timeline.takeTails();
    timeline.moved(plan, 0, move("0R0", 3), 3);  // F0 F1 R1 R0 F2 …
    auto updated = timeline.update(plan, 4.2);
    ASSERT_TRUE(updated.ok());
    ASSERT_TRUE(*updated) << "gave up on a move that keeps the step at 4.2";
    EXPECT_NEAR(timeline.makespan(), 4.2, 1e-12);
    expectSameTimeline(plan, timeline, "after moving R0");
}

TEST(IncrementalTimeline, RefusesADeadlockedPlan) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    // Device 0 waits for a gradient before it has sent the forward that would produce it.
    auto& program = plan.devices[0].program;
    auto recv =
        std::find_if(program.begin(), program.end(), [](const Instruction& ins) { return ins.op == Op::RecvBackward; });
    ASSERT_NE(recv, program.end());
    std::rotate(program.begin(), recv, recv + 1);
    ASSERT_TRUE(Simulator::run(plan)->deadlocked);
    EXPECT_FALSE(IncrementalTimeline::build(plan).ok());
}

}  // namespace
}  // namespace mario
