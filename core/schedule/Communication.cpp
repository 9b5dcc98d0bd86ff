#include "schedule/Communication.h"

namespace mario {

std::vector<Instruction> withCommunication(const std::vector<Instruction>& computeOnly, const PipelineTopology& topology) {
    std::vector<Instruction> program;
    program.reserve(computeOnly.size() * 3);
    auto crossesDevice = [&](int from, int to) { return to >= 0 && topology.deviceOf(from) != topology.deviceOf(to); };
    for (const Instruction& ins : computeOnly) {
        const int s = ins.stage;
        const int previous = topology.previousStage(s);
        const int next = topology.nextStage(s);
        if (ins.op == Op::Forward) {
            if (crossesDevice(s, previous)) program.push_back({Op::RecvForward, s, ins.microbatch});
            program.push_back(ins);
            if (crossesDevice(s, next)) program.push_back({Op::SendForward, s, ins.microbatch});
        } else if (isBackwardStart(ins.op)) {
            if (crossesDevice(s, next)) program.push_back({Op::RecvBackward, s, ins.microbatch});
            program.push_back(ins);
            if (crossesDevice(s, previous)) program.push_back({Op::SendBackward, s, ins.microbatch});
        } else {
            program.push_back(ins);
        }
    }
    return program;
}

void appendGradientSync(std::vector<Instruction>& program, const std::vector<int>& stagesOfDevice,
                        const std::vector<bool>& needsReduce) {
    for (int s : stagesOfDevice)
        if (needsReduce[s]) program.push_back({Op::ReduceGrad, s, -1});
    for (int s : stagesOfDevice) program.push_back({Op::Optimizer, s, -1});
}

}  // namespace mario
