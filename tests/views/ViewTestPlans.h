#pragma once
// Plans for the views tests: tests/common/UnitPlans.h's unit-cost plans (failures are
// fatal here), plus a real preset-costed Chimera plan and
// synthetic timelines of any size for the culling tests.
#include <QtGlobal>
#include <string>
#include <utility>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassManager.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Simulator.h"
#include "tests/common/UnitPlans.h"
#include "views/Timeline.h"

namespace mario::viewtest {

using test::UnitStage;

inline Plan unitPlan(Scheme scheme, int devices, int microbatches, UnitStage unit = {}) {
    auto built = test::makeUnitPlan(scheme, devices, microbatches, 1, unit);
    if (!built) qFatal("unit plan: %s", built.error().message.c_str());
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
    auto config = readConfigFile(
        std::string(MARIO_TEST_SOURCE_DIR) + "/resources/examples/gpt3-13b-chimera.config.json", *presets);
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
    constexpr BoxKind kinds[] = {BoxKind::Forward, BoxKind::CheckpointedForward, BoxKind::Recompute, BoxKind::Backward,
                                 BoxKind::Wait};
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
