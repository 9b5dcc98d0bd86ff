#include "core/sim/ProgramMemory.h"

#include <algorithm>

#include "core/schedule/CheckpointedForwards.h"

namespace mario {

std::vector<double> memoryDeltas(const Plan& plan, const std::vector<Instruction>& program) {
    const std::vector<bool> checkpointed = checkpointedForwards(program);
    std::vector<double> deltas(program.size(), 0.0);
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& ins = program[i];
        const StageCost& c = plan.stages[ins.stage].cost;
        switch (ins.op) {
            case Op::Forward: deltas[i] = checkpointed[i] ? c.checkpoint_bytes : c.activation_bytes; break;
            case Op::Recompute: deltas[i] = c.activation_bytes - c.checkpoint_bytes; break;
            case Op::Backward: deltas[i] = -c.activation_bytes; break;
            case Op::BackwardInput: deltas[i] = -(c.activation_bytes - c.weightGradBytes()); break;
            case Op::BackwardWeight: deltas[i] = -c.weightGradBytes(); break;
            default: break;
        }
    }
    return deltas;
}

std::vector<double> memoryLevels(const Plan& plan, const std::vector<Instruction>& program) {
    std::vector<double> levels = memoryDeltas(plan, program);
    double running = 0;
    for (double& level : levels) level = running += level;
    return levels;
}

double staticBytesOf(const Plan& plan, int device) {
    double staticBytes = plan.info.reserve_bytes;  // the framework's, on every device
    double working = 0;
    for (const auto& stage : plan.stages)
        if (stage.device == device) {
            staticBytes += stage.cost.static_bytes;
            working = std::max(working, stage.cost.working_bytes);
        }
    return staticBytes + working;
}

std::vector<double> staticBytesPerDevice(const Plan& plan) {
    std::vector<double> bytes(plan.devices.size(), plan.info.reserve_bytes);
    std::vector<double> working(plan.devices.size(), 0.0);
    for (const auto& stage : plan.stages)
        if (stage.device >= 0 && stage.device < static_cast<int>(bytes.size())) {
            bytes[stage.device] += stage.cost.static_bytes;
            working[stage.device] = std::max(working[stage.device], stage.cost.working_bytes);
        }
    for (std::size_t d = 0; d < bytes.size(); ++d) bytes[d] += working[d];
    return bytes;
}

double programPeakBytes(const Plan& plan, int device) {
    double peak = 0;
    for (double level : memoryLevels(plan, plan.devices[device].program)) peak = std::max(peak, level);
    return staticBytesOf(plan, device) + peak;
}

}  // namespace mario
