#pragma once
// Plans for tests, built straight from the generators with unit-style costs (no presets).
#include <gtest/gtest.h>

#include "schedule/Generators.h"
#include "schedule/PlanBuilder.h"

namespace mario::test {

struct UnitStage {
    double forward = 1, backward = 2, recompute = 1;
    double activation = 1000, checkpoint = 10, staticBytes = 0, sendBytes = 0;
};

inline Plan unitPlan(Scheme scheme, int devices, int microbatches, int chunks = 1, UnitStage unit = {},
                     LinkSpec link = {}) {
    ScheduleShape shape{scheme, devices, chunks, microbatches, 0, unit.forward, unit.backward};
    const PipelineLayout layout = pipelineLayout(shape);
    Plan plan;
    plan.info.scheme = std::string(schemeName(scheme));
    if (layout.chains.size() > 1) plan.pipelines = layout.chains;
    plan.link = link;
    for (std::size_t s = 0; s < layout.stage_device.size(); ++s) {
        StageSpec stage;
        stage.index = static_cast<int>(s);
        stage.device = layout.stage_device[s];
        stage.cost.forward_ms = unit.forward;
        stage.cost.backward_ms = unit.backward;
        stage.cost.recompute_ms = unit.recompute;
        stage.cost.activation_bytes = unit.activation;
        stage.cost.checkpoint_bytes = unit.checkpoint;
        stage.cost.static_bytes = unit.staticBytes;
        stage.cost.send_bytes = unit.sendBytes;
        plan.stages.push_back(stage);
    }
    for (int d = 0; d < devices; ++d) plan.devices.push_back({d, {}});
    auto order = generateComputeOrder(shape);
    EXPECT_TRUE(order.ok()) << (order.ok() ? "" : order.error().message);
    auto built = planFromComputeOrder(std::move(plan), *order);
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
    return std::move(built).value();
}

}  // namespace mario::test
