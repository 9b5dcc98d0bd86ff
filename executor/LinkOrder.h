#pragma once
// The order in which every cross-device message travels, as its sender's program sends it.
// NCCL matches a send with a receive by order on a communicator, not by key, so a receiver
// whose program takes messages in another order than its sender sends them (a hand-edited
// plan, Chimera's crossing chains) must post its receives in the sender's order and buffer the
// early ones. Torch-free, so the rule is tested without a GPU.
#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"

namespace mario::exec {

struct LinkMessage {
    bool forward = true;  // an activation (SEND_F) or a gradient (SEND_B)
    int stage = 0;        // the receiving stage
    int microbatch = 0;
    auto operator<=>(const LinkMessage&) const = default;
};

class LinkOrder {
public:
    // Every SEND_F/SEND_B whose receiving stage lives on another device, per (from, to) device.
    static LinkOrder build(const Plan& plan, const PipelineTopology& topology);

    // The messages from device `from` to device `to` in the order `from` sends them (empty when
    // the two devices never talk).
    const std::vector<LinkMessage>& messages(int from, int to) const;
    // The (from, to) pairs that carry at least one message, sorted.
    std::vector<std::pair<int, int>> links() const;
    // Where `message` stands on its link; nullopt when the sender never sends it.
    std::optional<std::size_t> position(int from, int to, const LinkMessage& message) const;

private:
    std::map<std::pair<int, int>, std::vector<LinkMessage>> messages_;
    std::map<std::pair<int, int>, std::map<LinkMessage, std::size_t>> positions_;
};

}  // namespace mario::exec
