#pragma once
// GoogleTest's face of tests/common/UnitPlans.h: a failure to build is a test failure.
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <random>

#include "core/schedule/Instruction.h"
#include "core/sim/Simulator.h"
#include "tests/common/UnitPlans.h"

namespace mario::test {

inline Plan unitPlan(Scheme scheme, int devices, int microbatches, int chunks = 1, UnitStage unit = {},
                     LinkSpec link = {}) {
    auto built = makeUnitPlan(scheme, devices, microbatches, chunks, unit, link);
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
    return built.ok() ? std::move(built).value() : Plan{};
}

// The simulation of `plan`; a failure to simulate is a test failure.
inline SimResult simulate(const Plan& plan) {
    auto result = Simulator::run(plan);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? std::move(result).value() : SimResult{};
}

// One stage on one device running `actions` ("0F0", "0R0", …), with unit times and a real
// model's byte counts drawn from `rng` (about 1e10, not integers): where a float ulp is far above
// an absolute slack of 1e-9 bytes (issue 30's tolerance tests).
inline Plan oneStageOfRealBytes(std::mt19937& rng, std::initializer_list<const char*> actions) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Plan plan;
    plan.stages.push_back({0, 0, {}, std::nullopt});
    StageCost& cost = plan.stages[0].cost;
    cost.forward_ms = 1;
    cost.backward_ms = 2;
    cost.recompute_ms = 1;
    cost.activation_bytes = 1e10 * (1 + unit(rng)) + unit(rng);
    cost.checkpoint_bytes = cost.activation_bytes * 0.1 * unit(rng);
    cost.static_bytes = 1e10 * unit(rng) + unit(rng);
    plan.devices.push_back({0, {}});
    for (const char* action : actions) plan.devices[0].program.push_back(*parseAction(action));
    return plan;
}

// One device's program with an R right before each of its backwards (its forwards then
// checkpointed): a plan with recomputation that needs no pass.
inline void recomputeBeforeEachBackward(Plan& plan, std::size_t device) {
    auto& program = plan.devices[device].program;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i].op == Op::Backward) {
            Instruction r = program[i];
            r.op = Op::Recompute;
            program.insert(program.begin() + static_cast<std::ptrdiff_t>(i), r);
            ++i;
        }
}

}  // namespace mario::test
