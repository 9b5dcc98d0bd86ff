#pragma once
// GoogleTest's face of tests/common/UnitPlans.h: a failure to build is a test failure.
#include <gtest/gtest.h>

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

}  // namespace mario::test
