#include "core/schedule/Communication.h"

#include <optional>
#include <string>

namespace mario {

namespace {

// The receive a compute instruction waits for and the send that passes its result on, when
// the neighbouring stage in that direction lives on another device.
struct Neighbours {
    std::optional<Instruction> receive, send;
};

Neighbours neighboursOf(const Instruction& ins, const PipelineTopology& topology) {
    const int s = ins.stage;
    auto crossesDevice = [&](int to) { return to >= 0 && topology.deviceOf(s) != topology.deviceOf(to); };
    Neighbours out;
    if (ins.op == Op::Forward) {
        if (crossesDevice(topology.previousStage(s))) out.receive = Instruction{Op::RecvForward, s, ins.microbatch};
        if (crossesDevice(topology.nextStage(s))) out.send = Instruction{Op::SendForward, s, ins.microbatch};
    } else if (isBackwardStart(ins.op)) {
        if (crossesDevice(topology.nextStage(s))) out.receive = Instruction{Op::RecvBackward, s, ins.microbatch};
        if (crossesDevice(topology.previousStage(s))) out.send = Instruction{Op::SendBackward, s, ins.microbatch};
    }
    return out;
}

}  // namespace

std::vector<Instruction> withCommunication(const std::vector<Instruction>& computeOnly,
                                           const PipelineTopology& topology) {
    std::vector<Instruction> program;
    program.reserve(computeOnly.size() * 3);
    for (std::size_t i = 0; i < computeOnly.size(); ++i) {
        // An overlapped pair is one composite: both inputs arrive before it, both results
        // leave after it.
        const bool pair = computeOnly[i].overlapped && i + 1 < computeOnly.size();
        const std::size_t last = pair ? i + 1 : i;
        const Neighbours first = neighboursOf(computeOnly[i], topology);
        const Neighbours second = pair ? neighboursOf(computeOnly[last], topology) : Neighbours{};
        for (const auto* n : {&first, &second})
            if (n->receive) program.push_back(*n->receive);
        for (std::size_t k = i; k <= last; ++k) program.push_back(computeOnly[k]);
        for (const auto* n : {&first, &second})
            if (n->send) program.push_back(*n->send);
        i = last;
    }
    return program;
}

void appendGradientSync(std::vector<Instruction>& program, const std::vector<int>& stagesOfDevice,
                        const std::vector<bool>& needsReduce) {
    for (int s : stagesOfDevice)
        if (needsReduce[s]) program.push_back({Op::ReduceGrad, s, -1});
    for (int s : stagesOfDevice) program.push_back({Op::Optimizer, s, -1});
}

Result<Plan> planFromComputeOrder(Plan plan, const ComputeOrder& order) {
    if (order.size() != plan.devices.size())
        return makeError("compute order has " + std::to_string(order.size()) + " devices, the plan has " +
                         std::to_string(plan.devices.size()));
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    const bool replicated = topology->chains().size() > 1;
    std::vector<bool> needsReduce(plan.stages.size(), plan.info.data_parallel > 1 || replicated);
    std::vector<std::vector<int>> stagesOfDevice(plan.devices.size());
    for (const auto& stage : plan.stages) stagesOfDevice[stage.device].push_back(stage.index);
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        plan.devices[d].program = withCommunication(order[d], *topology);
        appendGradientSync(plan.devices[d].program, stagesOfDevice[d], needsReduce);
    }
    return plan;
}

}  // namespace mario
