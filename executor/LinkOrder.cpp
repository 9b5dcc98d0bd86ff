#include "executor/LinkOrder.h"

namespace mario::exec {

LinkOrder LinkOrder::build(const Plan& plan, const PipelineTopology& topology) {
    LinkOrder order;
    for (const auto& device : plan.devices) {
        for (const auto& in : device.program) {
            if (in.op != Op::SendForward && in.op != Op::SendBackward) continue;
            const bool forward = in.op == Op::SendForward;
            if (in.stage < 0 || in.stage >= topology.stageCount()) continue;  // the validator's business
            const int target = forward ? topology.nextStage(in.stage) : topology.previousStage(in.stage);
            if (target < 0) continue;
            const int from = topology.deviceOf(in.stage), to = topology.deviceOf(target);
            if (from == to) continue;  // handed over in memory
            const LinkMessage message{forward, target, in.microbatch};
            auto& positions = order.positions_[{from, to}];
            if (positions.count(message)) continue;  // a duplicate send carries nothing new
            positions[message] = order.messages_[{from, to}].size();
            order.messages_[{from, to}].push_back(message);
        }
    }
    return order;
}

const std::vector<LinkMessage>& LinkOrder::messages(int from, int to) const {
    static const std::vector<LinkMessage> none;
    auto it = messages_.find({from, to});
    return it == messages_.end() ? none : it->second;
}

std::vector<std::pair<int, int>> LinkOrder::links() const {
    std::vector<std::pair<int, int>> out;
    for (const auto& [link, list] : messages_) out.push_back(link);
    return out;
}

std::optional<std::size_t> LinkOrder::position(int from, int to, const LinkMessage& message) const {
    auto link = positions_.find({from, to});
    if (link == positions_.end()) return std::nullopt;
    auto it = link->second.find(message);
    if (it == link->second.end()) return std::nullopt;
    return it->second;
}

}  // namespace mario::exec
