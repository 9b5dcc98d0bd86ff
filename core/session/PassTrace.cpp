#include "core/session/PassTrace.h"

#include "core/passes/PassManager.h"
#include "core/passes/StepCaption.h"
#include "core/session/HandEdits.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

std::vector<std::pair<int, int>> touchedBy(const PassReport& step, const Plan& plan) {
    std::vector<std::pair<int, int>> boxes;
    for (const PassChange& change : step.changes) {
        const auto& program = plan.devices[change.device].program;
        const Instruction shown =
            change.kind == ChangeKind::Removed
                ? Instruction{Op::Forward, change.instruction.stage, change.instruction.microbatch}
                : change.instruction;
        const int index = findInstruction(program, shown);
        if (index >= 0) boxes.emplace_back(change.device, index);
    }
    return boxes;
}

}  // namespace

std::vector<PassTraceStep> passTrace(const ScheduleInput& input) {
    std::vector<PassTraceStep> steps;
    auto base = Simulator::run(input.source, {.record_memory_curve = true});
    if (!base) return steps;
    steps.push_back({input.source, std::move(*base), {}, {}});
    Plan plan = input.source;
    PassManagerOptions options;
    options.validate_each_pass = false;
    options.prepose_simulations = input.effort.prepose_simulations;  // the steps of the schedule shown
    options.hide_simulations = input.effort.hide_simulations;
    options.reorder_evaluations = input.effort.reorder_evaluations;
    // Unit costs count abstract time, not milliseconds (as the window's axes say).
    const bool unit = (input.config && input.config->unit_costs) || input.source.info.unit_costs;
    const std::string units = unit ? "time units" : "ms";
    options.on_step = [&steps, &units](const PassReport& step, const Plan& now) {
        auto sim = Simulator::run(now, {.record_memory_curve = true});
        if (!sim) return;
        std::string caption = captionForStep(step, now, steps.back().result, *sim, units);
        steps.push_back({now, std::move(*sim), std::move(caption), touchedBy(step, now)});
    };
    (void)runPasses(plan, input.passes, options);
    return steps;
}

}  // namespace mario
