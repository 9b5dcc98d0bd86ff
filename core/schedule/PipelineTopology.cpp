#include "core/schedule/PipelineTopology.h"

#include <string>

namespace mario {

Result<PipelineTopology> PipelineTopology::build(const Plan& plan) {
    PipelineTopology topology;
    const int stageCount = static_cast<int>(plan.stages.size());
    topology.deviceCount_ = static_cast<int>(plan.devices.size());
    topology.chains_ = plan.chains();
    topology.device_.assign(stageCount, -1);
    topology.chain_.assign(stageCount, -1);
    topology.position_.assign(stageCount, -1);
    topology.previous_.assign(stageCount, -1);
    topology.next_.assign(stageCount, -1);

    for (int s = 0; s < stageCount; ++s) {
        const int device = plan.stages[s].device;
        if (device < 0 || device >= topology.deviceCount_)
            return makeError("stages[" + std::to_string(s) + "].device: " + std::to_string(device) +
                             " is not one of the " + std::to_string(topology.deviceCount_) + " devices");
        topology.device_[s] = device;
    }
    for (int c = 0; c < static_cast<int>(topology.chains_.size()); ++c) {
        const auto& chain = topology.chains_[c];
        if (chain.empty()) return makeError("pipelines[" + std::to_string(c) + "]: empty chain");
        for (int p = 0; p < static_cast<int>(chain.size()); ++p) {
            const int s = chain[p];
            // Worded only for a wrong plan: built for every stage, the text was 2% of a simulation.
            auto where = [&] { return "pipelines[" + std::to_string(c) + "][" + std::to_string(p) + "]"; };
            if (s < 0 || s >= stageCount) return makeError(where() + ": stage " + std::to_string(s) + " does not exist");
            if (topology.chain_[s] != -1)
                return makeError(where() + ": stage " + std::to_string(s) + " appears in two chains");
            topology.chain_[s] = c;
            topology.position_[s] = p;
            topology.previous_[s] = p > 0 ? chain[p - 1] : -1;
            topology.next_[s] = p + 1 < static_cast<int>(chain.size()) ? chain[p + 1] : -1;
        }
    }
    for (int s = 0; s < stageCount; ++s)
        if (topology.chain_[s] == -1) return makeError("pipelines: stage " + std::to_string(s) + " is in no chain");
    return topology;
}

bool PipelineTopology::crossStageDependency(const Instruction& instruction, Instruction& dependency) const {
    const int s = instruction.stage;
    switch (instruction.op) {
        case Op::Forward:
            if (previous_[s] < 0) return false;
            dependency = {Op::Forward, previous_[s], instruction.microbatch};
            return true;
        case Op::Backward:
        case Op::BackwardInput:
            if (next_[s] < 0) return false;
            dependency = {instruction.op, next_[s], instruction.microbatch};
            return true;
        default: return false;
    }
}

int PipelineTopology::sendTarget(const Instruction& send) const {
    if (send.op == Op::SendForward) return next_[send.stage];
    if (send.op == Op::SendBackward) return previous_[send.stage];
    return -1;
}

}  // namespace mario
