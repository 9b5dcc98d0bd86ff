// The incremental timeline under the moves hide-recompute's later step makes (issue 30): an R
// moved toward its backward, past instructions it used to precede. The tails the timeline gives
// up with must stay lower bounds through such moves: the moved R's own tail, taken where it
// stood, counted the instructions it has now passed, so it would claim a chain longer than the
// one that follows it and give up on moves that do not lengthen the step. Here every update
// that gives up is checked against a whole simulation, and every kept one (and every undo)
// against the simulator's timeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/passes/PassManager.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/Simulator.h"
#include "tests/core/RandomPlans.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

void expectSameTimeline(const Plan& plan, const IncrementalTimeline& timeline, const char* when) {
    auto sim = Simulator::run(plan, SimOptions::timelineOnly());
    ASSERT_TRUE(sim.ok());
    ASSERT_NEAR(timeline.makespan(), sim->makespan_ms, 1e-7) << when;
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        for (std::size_t i = 0; i < plan.devices[d].program.size(); ++i) {
            ASSERT_NEAR(timeline.timings(static_cast<int>(d))[i].start, sim->devices[d].timings[i].start, 1e-7) << when;
            ASSERT_NEAR(timeline.timings(static_cast<int>(d))[i].end, sim->devices[d].timings[i].end, 1e-7) << when;
        }
}

// Where the R at r may go later on its device: any index up to just before its backward (or
// before the overlapped pair that holds the backward).
std::vector<std::size_t> laterPlaces(const std::vector<Instruction>& program, std::size_t r) {
    std::vector<std::size_t> places;
    for (std::size_t k = r + 1; k < program.size(); ++k) {
        const Instruction& at = program[k];
        if (isBackwardStart(at.op) && at.stage == program[r].stage && at.microbatch == program[r].microbatch) break;
        if (!at.overlapped) places.push_back(k);  // the R stands right after program[k]
    }
    return places;
}

// Every R moved to a random place between its forward and where it stood: the early Rs of a
// hand-written or imported plan.
void placeEarly(Plan& plan, std::mt19937& rng) {
    for (auto& device : plan.devices) {
        auto& program = device.program;
        for (std::size_t r = 0; r < program.size(); ++r) {
            if (program[r].op != Op::Recompute) continue;
            std::size_t forward = r;
            while (forward > 0 &&
                   !(program[forward - 1] == Instruction{Op::Forward, program[r].stage, program[r].microbatch}))
                --forward;
            if (forward == 0 || forward >= r) continue;
            const std::size_t to = std::uniform_int_distribution<std::size_t>(forward, r)(rng);
            if (to > 0 && program[to - 1].overlapped) continue;
            std::rotate(program.begin() + to, program.begin() + r, program.begin() + r + 1);
        }
    }
}

TEST(LaterMovesTimeline, GivesUpOnlyOnMovesThatLengthenTheStep) {
    std::mt19937 rng(30);
    int updates = 0, gaveUp = 0;
    for (int trial = 0; trial < 60; ++trial) {
        Plan plan = test::randomPlan(rng);
        ASSERT_TRUE(runPasses(plan, {PassId::Checkpoint}).ok());
        placeEarly(plan, rng);
        auto built = IncrementalTimeline::build(plan);
        ASSERT_TRUE(built.ok()) << built.error().message;
        IncrementalTimeline timeline = std::move(*built);
        timeline.takeTails();
        for (int step = 0; step < 40; ++step) {
            const int d = std::uniform_int_distribution<int>(0, static_cast<int>(plan.devices.size()) - 1)(rng);
            auto& program = plan.devices[d].program;
            std::vector<std::size_t> recomputes;
            for (std::size_t i = 0; i < program.size(); ++i)
                if (program[i].op == Op::Recompute) recomputes.push_back(i);
            if (recomputes.empty()) continue;
            const std::size_t r = recomputes[std::uniform_int_distribution<std::size_t>(0, recomputes.size() - 1)(rng)];
            const std::vector<std::size_t> places = laterPlaces(program, r);
            if (places.empty()) continue;
            const std::size_t to = places[std::uniform_int_distribution<std::size_t>(0, places.size() - 1)(rng)];
            std::rotate(program.begin() + r, program.begin() + r + 1, program.begin() + to + 1);
            timeline.moved(plan, d, r, to);
            const double before = timeline.makespan();
            auto updated = timeline.update(plan, before);
            ASSERT_TRUE(updated.ok());
            if (!*updated) {
                auto sim = Simulator::run(plan, SimOptions::timelineOnly());
                ASSERT_TRUE(sim.ok());
                ASSERT_FALSE(sim->deadlocked) << "moving an R later before its backward cannot deadlock";
                EXPECT_GT(sim->makespan_ms, before) << "trial " << trial << ": gave up on a move that does not "
                                                    << "lengthen the step";
                ++gaveUp;
            } else {
                ++updates;
                expectSameTimeline(plan, timeline, "after a later move");
                if (rng() % 2) continue;  // kept; otherwise undone below
            }
            std::rotate(program.begin() + r, program.begin() + to, program.begin() + to + 1);
            timeline.undo(plan);
            expectSameTimeline(plan, timeline, "after undo");
            if (HasFatalFailure()) return;
        }
    }
    EXPECT_GT(updates, 300);
    EXPECT_GT(gaveUp, 50);
}

}  // namespace
}  // namespace mario
