#include "ScheduleComputation.h"

#include <QElapsedTimer>
#include <algorithm>

#include "passes/PassManager.h"
#include "schedule/PlanEdit.h"
#include "sim/Simulator.h"

namespace mario::gui {

int indexOf(const std::vector<Instruction>& program, const Instruction& instruction) {
    const auto it = std::find(program.begin(), program.end(), instruction);
    return it == program.end() ? -1 : static_cast<int>(it - program.begin());
}

ComputedSchedule computeSchedule(const DocumentState& state, quint64 generation) {
    QElapsedTimer timer;
    timer.start();
    ComputedSchedule out;
    out.generation = generation;
    auto base = Simulator::run(state.source);
    if (!base) {
        out.error = QString::fromStdString(base.error().message);
        return out;
    }
    out.base = std::move(*base);

    Plan plan = state.source;
    auto run = runPasses(plan, state.passes, {.validate_each_pass = false});
    if (!run) {
        out.error = QString::fromStdString(run.error().message);
        return out;
    }
    out.steps = std::move(run->steps);

    for (const HandEdit& edit : state.edits) {
        const auto& program = plan.devices[edit.device].program;
        const int from = indexOf(program, edit.moved);
        const int before = edit.before ? indexOf(program, *edit.before) : static_cast<int>(program.size());
        auto edited = from >= 0 && before >= 0 ? moveInstruction(plan, {edit.device, from, before})
                                               : Result<EditedPlan>(makeError("its instructions are gone"));
        if (!edited) {
            out.skippedEdits << QString::fromStdString(toActionString(edit.moved));
            continue;
        }
        plan = std::move(edited->plan);
    }

    auto result = Simulator::run(plan, {.record_memory_curve = true});
    if (!result) {
        out.error = QString::fromStdString(result.error().message);
        return out;
    }
    out.result = std::move(*result);
    out.plan = std::move(plan);
    out.ok = true;
    out.compute_ms = timer.nsecsElapsed() / 1e6;
    return out;
}

}  // namespace mario::gui
