#include "core/sim/CriticalPath.h"

#include <algorithm>
#include <string>

namespace mario {

std::vector<InstructionRef> CriticalPath::computeInstructions() const {
    std::vector<InstructionRef> refs;
    for (const CriticalStep& step : steps)
        if (step.kind == CriticalStep::Kind::Compute) refs.push_back(step.at);
    return refs;
}

int CriticalPath::deviceChanges() const {
    return static_cast<int>(std::count_if(steps.begin(), steps.end(), [](const CriticalStep& step) {
        return step.kind == CriticalStep::Kind::Transfer;
    }));
}

Result<CriticalPath> criticalPath(const Plan& plan, const SimResult& result) {
    auto messages = MessageGraph::build(plan, result);
    if (!messages) return messages.error();
    return criticalPath(plan, result, *messages);
}

namespace {

void addCompute(CriticalPath& path, const Instruction& ins, const InstructionRef& at, const InstructionTiming& t) {
    const double duration = t.end - t.start;
    // Zero-length instructions (an OPT of cost 0) cannot be seen; they bind nothing either.
    if (!(duration > 0)) return;
    path.steps.push_back({CriticalStep::Kind::Compute, at, at, t.start, t.end});
    path.compute_ms += duration;
    switch (ins.op) {
        case Op::Forward: path.forward_ms += duration; break;
        case Op::Recompute: path.recompute_ms += duration; break;
        case Op::Backward:
        case Op::BackwardInput:
        case Op::BackwardWeight: path.backward_ms += duration; break;
        default: path.other_ms += duration; break;
    }
}

}  // namespace

Result<CriticalPath> criticalPath(const Plan& plan, const SimResult& result, const MessageGraph& messages) {
    if (result.deadlocked) return makeError("the plan deadlocks: no step ends, so no path sets its length");
    if (result.devices.size() != plan.devices.size())
        return makeError("the simulation has " + std::to_string(result.devices.size()) + " devices, the plan " +
                         std::to_string(plan.devices.size()));
    CriticalPath path;
    path.makespan_ms = result.makespan_ms;

    // The walk starts at the last instruction of the device whose clock is the makespan
    // (the lowest such device, so the answer does not depend on iteration order).
    InstructionRef at;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& timings = result.devices[d].timings;
        if (timings.size() != plan.devices[d].program.size())
            return makeError("devices[" + std::to_string(d) + "]: the simulation times " +
                             std::to_string(timings.size()) + " instructions, the program has " +
                             std::to_string(plan.devices[d].program.size()));
        if (!timings.empty() && timings.back().end >= result.makespan_ms && !at.valid())
            at = {static_cast<int>(d), static_cast<int>(timings.size()) - 1};
    }
    // Each step moves to an earlier instruction of a device or to a SEND no later than it;
    // the bound only guards a result that breaks the simulator's rules.
    std::size_t budget = plan.instructionCount() + 1;
    while (at.valid()) {
        if (budget-- == 0) return makeError("the simulation's times loop back on themselves");
        const Instruction& ins = plan.devices[at.device].program[at.program_index];
        const InstructionTiming& t = result.devices[at.device].timings[at.program_index];
        if (isCompute(ins.op)) addCompute(path, ins, at, t);
        if (isRecv(ins.op) && t.end > t.start) {
            // The RECV waited: its message bound it, so the path goes on at the sender.
            const Message* message = messages.receivedBy(at);
            if (message && message->send.valid()) {
                path.steps.push_back({CriticalStep::Kind::Transfer, at, message->send, message->sent_ms, t.end});
                path.transfer_ms += t.end - message->sent_ms;
                at = message->send;
                continue;
            }
        }
        at.program_index -= 1;
        if (at.program_index < 0) at = {};
    }
    std::reverse(path.steps.begin(), path.steps.end());
    path.gap_ms = std::max(0.0, path.makespan_ms - path.compute_ms - path.transfer_ms);
    return path;
}

}  // namespace mario
