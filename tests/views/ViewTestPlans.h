#pragma once
// Plans for the views tests, built from core's generators with unit costs (the same recipe
// as tests/core/TestPlans.h, without GoogleTest), plus a real preset-costed Chimera plan and
// synthetic timelines of any size for the culling tests.
#include <QtGlobal>
#include <string>
#include <utility>

#include "io/ConfigJson.h"
#include "model/PresetLibrary.h"
#include "passes/PassManager.h"
#include "schedule/Generators.h"
#include "schedule/PlanBuilder.h"
#include "sim/Simulator.h"
#include "Timeline.h"

namespace mario::viewtest {

struct UnitStage {
    double forward = 1, backward = 2, recompute = 1;
    double activation = 1000, checkpoint = 10, staticBytes = 0;
};

inline Plan unitPlan(Scheme scheme, int devices, int microbatches, UnitStage unit = {}) {
    ScheduleShape shape{scheme, devices, 1, microbatches, 0, unit.forward, unit.backward};
    const PipelineLayout layout = pipelineLayout(shape);
    Plan plan;
    plan.info.scheme = std::string(schemeName(scheme));
    if (layout.chains.size() > 1) plan.pipelines = layout.chains;
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
        plan.stages.push_back(stage);
    }
    for (int d = 0; d < devices; ++d) plan.devices.push_back({d, {}});
    auto order = generateComputeOrder(shape);
    if (!order) qFatal("generateComputeOrder: %s", order.error().message.c_str());
    auto built = planFromComputeOrder(std::move(plan), *order);
    if (!built) qFatal("planFromComputeOrder: %s", built.error().message.c_str());
    return std::move(built).value();
}

inline SimResult simulate(const Plan& plan, bool memoryCurve = false) {
    auto result = Simulator::run(plan, SimOptions{.record_memory_curve = memoryCurve});
    if (!result) qFatal("Simulator::run: %s", result.error().message.c_str());
    return std::move(result).value();
}

inline void applyPasses(Plan& plan, const char* passes) {
    auto list = parsePassList(passes);
    if (!list) qFatal("parsePassList: %s", list.error().message.c_str());
    auto run = runPasses(plan, *list);
    if (!run) qFatal("runPasses: %s", run.error().message.c_str());
}

// The bundled GPT-3 13B Chimera example cut down to `devices` devices, all passes applied.
inline Plan chimeraExample(int devices, int microbatches) {
    auto presets = PresetLibrary::locate();
    if (!presets) qFatal("presets: %s", presets.error().message.c_str());
    auto config = readConfigFile(std::string(MARIO_TEST_SOURCE_DIR) + "/resources/examples/gpt3-13b-chimera.config.json",
                                 *presets);
    if (!config) qFatal("config: %s", config.error().message.c_str());
    config->parallel.pp = devices;
    config->parallel.global_batch_size = microbatches * config->parallel.micro_batch_size * config->parallel.dp;
    auto plan = buildPlan(*config);
    if (!plan) qFatal("buildPlan: %s", plan.error().message.c_str());
    applyPasses(*plan, "all");
    return std::move(plan).value();
}

// `lanes` lanes of `perLane` back-to-back boxes cycling through the compute kinds, with a
// small idle gap after every fourth box (so bubbles exist). Durations vary deterministically.
inline views::Timeline syntheticTimeline(int lanes, int perLane) {
    using views::BoxKind;
    constexpr BoxKind kinds[] = {BoxKind::Forward, BoxKind::CheckpointedForward, BoxKind::Recompute,
                                 BoxKind::Backward, BoxKind::Wait};
    views::Timeline timeline;
    timeline.lanes.resize(static_cast<std::size_t>(lanes));
    for (int l = 0; l < lanes; ++l) {
        double t = 0.1 * l;
        auto& lane = timeline.lanes[static_cast<std::size_t>(l)];
        lane.reserve(static_cast<std::size_t>(perLane));
        for (int i = 0; i < perLane; ++i) {
            const double duration = 0.5 + 0.25 * ((i * 7 + l) % 5);
            views::TimelineBox box;
            box.start = t;
            box.end = t + duration;
            box.lane = l;
            box.program_index = 2 * i;
            box.kind = kinds[(i + l) % 5];
            box.op = box.kind == BoxKind::Wait ? Op::RecvForward : Op::Forward;
            box.stage = l;
            box.microbatch = i % 100;
            lane.push_back(box);
            t = box.end + (i % 4 == 3 ? 0.3 : 0.0);
            timeline.makespan = std::max(timeline.makespan, t);
        }
    }
    return timeline;
}

}  // namespace mario::viewtest
