#include "core/sim/MessageGraph.h"

#include <algorithm>
#include <string>

#include "core/schedule/PipelineTopology.h"
#include "core/sim/MessageSlots.h"

namespace mario {

double Message::waitedMs() const { return std::max(0.0, received_ms - reached_ms); }

namespace {

bool producesForward(Op op) { return op == Op::Forward; }
bool producesBackward(Op op) { return isBackwardStart(op); }

}  // namespace

Result<MessageGraph> MessageGraph::build(const Plan& plan, const SimResult& result) {
    if (result.devices.size() != plan.devices.size())
        return makeError("the simulation has " + std::to_string(result.devices.size()) + " devices, the plan " +
                         std::to_string(plan.devices.size()));
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        if (result.devices[d].timings.size() != plan.devices[d].program.size())
            return makeError("devices[" + std::to_string(d) + "]: the simulation times " +
                             std::to_string(result.devices[d].timings.size()) + " instructions, the program has " +
                             std::to_string(plan.devices[d].program.size()));
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    const int stages = topology->stageCount();
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        for (const Instruction& ins : plan.devices[d].program)
            if (ins.stage < 0 || ins.stage >= stages || (hasMicrobatch(ins.op) && ins.microbatch < 0))
                return makeError("devices[" + std::to_string(d) + "]: \"" + toActionString(ins) +
                                 "\" names a stage that does not exist");

    const MessageSlots slots(plan, stages);
    // Both tables are addressed like messages: (direction, stage, dense micro-batch). The
    // compute table holds a stage's F under "forward" and its B or I under "backward": the
    // instruction that produces the stage's outgoing message and consumes its incoming one.
    std::vector<InstructionRef> compute(slots.size()), recv(slots.size());
    std::vector<InstructionRef> sends;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const InstructionRef ref{static_cast<int>(d), static_cast<int>(i)};
            if (producesForward(ins.op) || producesBackward(ins.op))
                compute[slots.of(producesBackward(ins.op), ins.stage, slots.denseOf(ins))] = ref;
            else if (isRecv(ins.op)) recv[slots.of(ins.op == Op::RecvBackward, ins.stage, slots.denseOf(ins))] = ref;
            else if (isSend(ins.op)) sends.push_back(ref);
        }
    }

    MessageGraph graph;
    graph.messages_.reserve(sends.size());
    auto timing = [&](const InstructionRef& ref) -> const InstructionTiming& {
        return result.devices[ref.device].timings[ref.program_index];
    };
    for (const InstructionRef& send : sends) {
        const Instruction& ins = plan.devices[send.device].program[send.program_index];
        const int target = topology->sendTarget(ins);
        if (target < 0) continue;  // the validator names it; nothing can receive it
        const bool backward = ins.op == Op::SendBackward;
        const int mb = slots.denseOf(ins);
        Message message;
        message.backward = backward;
        message.stage = target;
        message.microbatch = ins.microbatch;
        message.send = send;
        message.producer = compute[slots.of(backward, ins.stage, mb)];
        message.recv = recv[slots.of(backward, target, mb)];
        message.consumer = compute[slots.of(backward, target, mb)];
        message.sent_ms = timing(send).start;
        message.arrived_ms = message.sent_ms + MessageSlots::transferMs(plan, ins, target);
        message.reached_ms = message.recv.valid() ? timing(message.recv).start : message.arrived_ms;
        message.received_ms = message.recv.valid() ? timing(message.recv).end : message.arrived_ms;
        message.consumed_ms = message.consumer.valid() ? timing(message.consumer).start : message.received_ms;
        graph.messages_.push_back(message);
    }
    for (std::size_t m = 0; m < graph.messages_.size(); ++m) {
        const Message& message = graph.messages_[m];
        const int index = static_cast<int>(m);
        for (const InstructionRef& ref : {message.producer, message.send})
            if (ref.valid()) graph.outgoing_.emplace_back(ref, index);
        for (const InstructionRef& ref : {message.recv, message.consumer})
            if (ref.valid()) graph.incoming_.emplace_back(ref, index);
    }
    std::sort(graph.incoming_.begin(), graph.incoming_.end());
    std::sort(graph.outgoing_.begin(), graph.outgoing_.end());
    return graph;
}

std::vector<const Message*> MessageGraph::lookUp(const std::vector<std::pair<InstructionRef, int>>& index,
                                                 const InstructionRef& at) const {
    std::vector<const Message*> found;
    auto it = std::lower_bound(index.begin(), index.end(), std::pair{at, -1});
    for (; it != index.end() && it->first == at; ++it)
        found.push_back(&messages_[static_cast<std::size_t>(it->second)]);
    return found;
}

std::vector<const Message*> MessageGraph::incoming(const InstructionRef& at) const { return lookUp(incoming_, at); }

std::vector<const Message*> MessageGraph::outgoing(const InstructionRef& at) const { return lookUp(outgoing_, at); }

const Message* MessageGraph::receivedBy(const InstructionRef& recv) const {
    for (const Message* message : incoming(recv))
        if (message->recv == recv) return message;
    return nullptr;
}

}  // namespace mario
