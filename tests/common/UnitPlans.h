#pragma once
// Plans for tests, straight from the generators with the same unit-style costs on every
// stage (no presets). Framework-free, so GoogleTest and Qt Test suites share one recipe and
// wrap the error their own way.
#include <optional>
#include <string>
#include <utility>

#include "core/passes/PassManager.h"
#include "core/schedule/Communication.h"
#include "core/schedule/Generators.h"

namespace mario::test {

struct UnitStage {
    double forward = 1, backward = 2, recompute = 1;
    double activation = 1000, checkpoint = 10, staticBytes = 0, sendBytes = 0;
    // A split backward's parts (I, W) and what W keeps; unset: the cost model's halves.
    std::optional<double> input = {}, weight = {}, weightGradBytes = {};
};

inline Result<Plan> makeUnitPlan(Scheme scheme, int devices, int microbatches, int chunks = 1, UnitStage unit = {},
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
        stage.cost.backward_input_ms = unit.input;
        stage.cost.backward_weight_ms = unit.weight;
        stage.cost.weight_grad_bytes = unit.weightGradBytes;
        plan.stages.push_back(stage);
    }
    for (int d = 0; d < devices; ++d) plan.devices.push_back({d, {}});
    auto order = generateComputeOrder(shape);
    if (!order) return order.error();
    return planFromComputeOrder(std::move(plan), *order);
}

// The same plan after the paper's four passes, or another pass list (the executor tests run
// the plain plan, the four passes and the four with hide-recompute).
inline Result<Plan> makeUnitPlanWithPasses(Scheme scheme, int devices, int microbatches, int chunks = 1,
                                           const char* passList = "all") {
    auto plan = makeUnitPlan(scheme, devices, microbatches, chunks);
    if (!plan) return plan;
    auto passes = parsePassList(passList);
    if (!passes) return passes.error();
    if (auto run = runPasses(*plan, *passes); !run) return run.error();
    return plan;
}

}  // namespace mario::test
