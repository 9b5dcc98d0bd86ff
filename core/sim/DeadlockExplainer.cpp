#include "core/sim/DeadlockExplainer.h"

#include <algorithm>
#include <string>

namespace mario {

std::vector<BlockedDevice> explainDeadlock(const Plan& plan, const PipelineTopology& topology,
                                           const std::vector<std::size_t>& stoppedAt) {
    std::vector<BlockedDevice> blocked;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        if (stoppedAt[d] >= program.size()) continue;
        BlockedDevice entry;
        entry.device = plan.devices[d].index;
        entry.program_index = static_cast<int>(stoppedAt[d]);
        entry.instruction = program[stoppedAt[d]];
        const Instruction& recv = entry.instruction;
        const bool backward = recv.op == Op::RecvBackward;
        const int source = backward ? topology.nextStage(recv.stage) : topology.previousStage(recv.stage);
        if (source < 0) {
            entry.waits_for = "a " + std::string(backward ? "gradient" : "activation") +
                              " that no stage sends (stage " + std::to_string(recv.stage) + " is at the " +
                              (backward ? "end" : "start") + " of its chain)";
            blocked.push_back(entry);
            continue;
        }
        const Instruction send{backward ? Op::SendBackward : Op::SendForward, source, recv.microbatch};
        const int sender = topology.deviceOf(source);
        const auto& senderProgram = plan.devices[sender].program;
        const auto where = std::find(senderProgram.begin(), senderProgram.end(), send);
        entry.waits_for = toActionString(send) + " from device " + std::to_string(sender);
        if (where == senderProgram.end()) {
            entry.waits_for += ", which is not in that device's program";
        } else if (stoppedAt[sender] < senderProgram.size()) {
            const auto index = static_cast<std::size_t>(where - senderProgram.begin());
            if (index >= stoppedAt[sender])
                entry.waits_for += ", which is stuck earlier at " + toActionString(senderProgram[stoppedAt[sender]]);
        }
        blocked.push_back(entry);
    }
    return blocked;
}

std::string describeDeadlock(const std::vector<BlockedDevice>& blocked) {
    std::string text;
    for (const auto& entry : blocked) {
        if (!text.empty()) text += "; ";
        text += "device " + std::to_string(entry.device) + " blocked at " + toActionString(entry.instruction) +
                " (program[" + std::to_string(entry.program_index) + "]) waiting for " + entry.waits_for;
    }
    return text;
}

}  // namespace mario
