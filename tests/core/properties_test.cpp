// Properties over many random configurations and stage costs: the simulator's timeline obeys
// every dependency, memory balances, every pass keeps plans valid, the passes never lose
// against plain checkpointing nor cost memory against the base schedule, files round-trip.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/RecomputeBound.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/RandomPlans.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

constexpr double kEps = 1e-9;

// A micro-batch's backward on one stage waits for its backward on the next, whole (B) or split
// (I): DualPipe runs some micro-batches' backward whole on one device and split on its
// neighbour (its drain switches to I + W at a different step on each device), so the two kinds
// share one key and a dependency finds whichever of them the neighbour ran.
int timelineKey(Op op) { return static_cast<int>(isBackwardStart(op) ? Op::Backward : op); }

// Checks the timeline against docs/execution-model.md directly from the plan.
void expectTimelineObeysTheModel(const Plan& plan, const SimResult& result) {
    auto topology = PipelineTopology::build(plan);
    ASSERT_TRUE(topology.ok());
    std::map<std::tuple<int, int, int>, double> sendAt;  // (op, stage, mb) → issue time
    std::map<std::tuple<int, int, int>, std::pair<double, double>> computeAt;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        const auto& timings = result.devices[d].timings;
        double previousEnd = 0;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            EXPECT_GE(timings[i].start + kEps, previousEnd) << "device " << d << " " << toActionString(ins);
            EXPECT_GE(timings[i].end + kEps, timings[i].start);
            previousEnd = timings[i].end;
            if (isSend(ins.op)) sendAt[{int(ins.op), ins.stage, ins.microbatch}] = timings[i].start;
            if (isCompute(ins.op))
                computeAt[{timelineKey(ins.op), ins.stage, ins.microbatch}] = {timings[i].start, timings[i].end};
        }
    }
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const auto& timing = result.devices[d].timings[i];
            if (isRecv(ins.op)) {
                const bool backward = ins.op == Op::RecvBackward;
                const int source = backward ? topology->nextStage(ins.stage) : topology->previousStage(ins.stage);
                const double issued =
                    sendAt.at({int(backward ? Op::SendBackward : Op::SendForward), source, ins.microbatch});
                const double bytes = plan.stages[backward ? ins.stage : source].cost.send_bytes;
                EXPECT_GE(timing.end + kEps, issued + plan.link.transferMs(bytes));
            }
            Instruction dependency;
            if (topology->crossStageDependency(ins, dependency)) {
                auto it = computeAt.find({timelineKey(dependency.op), dependency.stage, dependency.microbatch});
                ASSERT_NE(it, computeAt.end());
                EXPECT_GE(timing.start + kEps, it->second.second)
                    << toActionString(ins) << " before " << toActionString(dependency);
            }
            if (ins.op == Op::Recompute) {
                EXPECT_GE(timing.start + kEps, computeAt.at({int(Op::Forward), ins.stage, ins.microbatch}).second);
            }
        }
    }
}

TEST(Properties, RandomPlansSimulateByTheExecutionModel) {
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 120; ++trial) {
        Plan plan = test::randomPlan(rng);
        if (trial % 2) {
            ASSERT_TRUE(runPasses(plan, *parsePassList("all")).ok());
        }
        ASSERT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
        auto result = Simulator::run(plan, {.record_memory_curve = true});
        ASSERT_TRUE(result.ok());
        ASSERT_FALSE(result->deadlocked);
        expectTimelineObeysTheModel(plan, *result);
        for (const auto& device : result->devices) {
            // Memory returns to static when every backward has run.
            ASSERT_FALSE(device.memory.empty());
            EXPECT_NEAR(device.memory.back().bytes, device.static_bytes, 1e-3 * device.static_bytes + 1e-3);
            EXPECT_NEAR(device.busy_ms + device.idle_ms, result->makespan_ms, 1e-9);
        }
        EXPECT_GE(result->makespan_ms + kEps, result->lower_bound_ms);
        EXPECT_GE(result->makespan_ms + kEps, result->tight_lower_bound_ms)
            << "trial " << trial << " " << plan.info.scheme;
        EXPECT_GE(result->tight_lower_bound_ms + kEps, result->lower_bound_ms);
        EXPECT_GE(result->recompute_hidden_ms, -kEps);
        EXPECT_LE(result->recompute_hidden_ms, result->recompute_ms + kEps);
    }
}

TEST(Properties, HideKeepsPlansValidNeverSlowerAndWithinItsBudget) {
    std::mt19937 rng(4711);
    int faster = 0;
    for (int trial = 0; trial < 100; ++trial) {
        Plan four = test::randomPlan(rng);
        if (trial % 3 == 0) four.info.memory_limit_bytes = 1e7 + 4e6 * (trial % 5);  // tight limits too
        Plan hidden = four;
        ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok());
        const auto fourSim = Simulator::run(four);
        ASSERT_TRUE(fourSim.ok());
        auto budget = hideBudget(four, false);
        ASSERT_TRUE(budget.ok());
        auto run = runPasses(hidden, *parsePassList("all,hide"), {.validate_each_pass = true});
        ASSERT_TRUE(run.ok()) << run.error().message;
        const auto sim = Simulator::run(hidden);
        ASSERT_TRUE(sim.ok());
        ASSERT_FALSE(sim->deadlocked);
        EXPECT_LE(sim->makespan_ms, fourSim->makespan_ms + kEps) << "trial " << trial << " " << four.info.scheme;
        faster += sim->makespan_ms < fourSim->makespan_ms - 1e-6;
        // Hide's output and its input are both placements of the Rs within the budget: neither
        // may beat the recompute bound.
        auto bound = recomputeBound(four, *budget);
        ASSERT_TRUE(bound.ok()) << bound.error().message;
        EXPECT_LE(bound->bound_ms, sim->makespan_ms + kEps) << "trial " << trial << " " << four.info.scheme;
        EXPECT_LE(bound->bound_ms, fourSim->makespan_ms + kEps) << "trial " << trial;
        // With no memory limit every R may go, and the plan without Rs is the best placement:
        // the bound must be exactly its step (it is not a loose bound there).
        if (four.overlap_factor == 0) {
            Plan bare = four;
            for (auto& device : bare.devices)
                std::erase_if(device.program, [](const Instruction& ins) { return ins.op == Op::Recompute; });
            auto unlimited = recomputeBound(four, std::vector<double>(four.devices.size(), 1e300));
            ASSERT_TRUE(unlimited.ok());
            EXPECT_NEAR(unlimited->bound_ms, Simulator::run(bare)->makespan_ms, 1e-6) << "trial " << trial;
        }
        for (std::size_t d = 0; d < sim->devices.size(); ++d)
            EXPECT_LE(sim->devices[d].peak_bytes, (*budget)[d] + 1e-6) << "trial " << trial << " device " << d;
        expectTimelineObeysTheModel(hidden, *sim);
        const std::string text = writePlan(hidden).dump();
        auto reread = readPlan(nlohmann::json::parse(text));
        ASSERT_TRUE(reread.ok()) << reread.error().message;
        EXPECT_EQ(Simulator::run(*reread)->makespan_ms, sim->makespan_ms);
    }
    // Not vacuous: on most random plans there is something to hide.
    EXPECT_GT(faster, 30);
}

TEST(Properties, PassesKeepPlansValidAndNeverLoseAgainstCheckpointingOrBaseMemory) {
    std::mt19937 rng(777);
    for (int trial = 0; trial < 100; ++trial) {
        const Plan base = test::randomPlan(rng);
        const auto baseSim = Simulator::run(base);
        ASSERT_TRUE(baseSim.ok());

        Plan checkpointed = base;
        ASSERT_TRUE(runPasses(checkpointed, {PassId::Checkpoint}).ok());
        const double checkpointOnly = Simulator::run(checkpointed)->makespan_ms;

        Plan mario = base;
        // validate_each_pass makes runPasses fail if any single pass breaks the plan.
        auto run = runPasses(mario, *parsePassList("all"), {.validate_each_pass = true});
        ASSERT_TRUE(run.ok()) << run.error().message;
        const auto sim = Simulator::run(mario);
        ASSERT_TRUE(sim.ok());
        EXPECT_LE(sim->makespan_ms, checkpointOnly + kEps) << "trial " << trial << " " << base.info.scheme;
        for (std::size_t d = 0; d < sim->devices.size(); ++d)
            EXPECT_LE(sim->devices[d].peak_bytes, baseSim->devices[d].peak_bytes + 1e-6)
                << "trial " << trial << " device " << d;
    }
}

TEST(Properties, WriteReadSimulateGivesIdenticalResults) {
    std::mt19937 rng(4242);
    for (int trial = 0; trial < 40; ++trial) {
        Plan plan = test::randomPlan(rng);
        ASSERT_TRUE(runPasses(plan, *parsePassList(trial % 2 ? "all" : "none")).ok());
        const std::string text = writePlan(plan).dump();
        auto reread = readPlan(nlohmann::json::parse(text));
        ASSERT_TRUE(reread.ok()) << reread.error().message;
        const auto a = Simulator::run(plan);
        const auto b = Simulator::run(*reread);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(a->makespan_ms, b->makespan_ms);
        EXPECT_EQ(a->bubble_ratio, b->bubble_ratio);
        for (std::size_t d = 0; d < a->devices.size(); ++d) {
            EXPECT_EQ(a->devices[d].peak_bytes, b->devices[d].peak_bytes);
            ASSERT_EQ(a->devices[d].timings.size(), b->devices[d].timings.size());
            for (std::size_t i = 0; i < a->devices[d].timings.size(); ++i) {
                EXPECT_EQ(a->devices[d].timings[i].start, b->devices[d].timings[i].start);
                EXPECT_EQ(a->devices[d].timings[i].end, b->devices[d].timings[i].end);
            }
        }
        EXPECT_EQ(writePlan(*reread), writePlan(plan));
    }
}

}  // namespace
}  // namespace mario
