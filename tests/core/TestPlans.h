#pragma once
// GoogleTest's face of tests/common/UnitPlans.h: a failure to build is a test failure.
#include <gtest/gtest.h>

#include "tests/common/UnitPlans.h"

namespace mario::test {

inline Plan unitPlan(Scheme scheme, int devices, int microbatches, int chunks = 1, UnitStage unit = {},
                     LinkSpec link = {}) {
    auto built = makeUnitPlan(scheme, devices, microbatches, chunks, unit, link);
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
    return built.ok() ? std::move(built).value() : Plan{};
}

}  // namespace mario::test
