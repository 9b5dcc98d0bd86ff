#pragma once
// How the simulator and the incremental timeline address messages between stages: every
// forward activation and backward gradient goes to (direction, receiving stage, micro-batch).
// Micro-batch numbers map to dense indices in order of appearance, so tables are stages ×
// (micro-batches that occur), not stages × (largest number): plans may skip numbers.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/schedule/Plan.h"

namespace mario {

class MessageSlots {
public:
    MessageSlots() = default;
    MessageSlots(const Plan& plan, int stageCount) : MessageSlots(plan, stageCount, plan.microbatchCount()) {}
    // `microbatchCount`: plan.microbatchCount(), when the caller has it already.
    MessageSlots(const Plan& plan, int stageCount, int microbatchCount) : stages_(stageCount) {
        dense_.assign(static_cast<std::size_t>(std::max(1, microbatchCount)), -1);
        for (const auto& device : plan.devices)
            for (const auto& ins : device.program)
                if (hasMicrobatch(ins.op) && dense_[ins.microbatch] < 0) dense_[ins.microbatch] = microbatches_++;
        microbatches_ = std::max(1, microbatches_);
    }

    // From a numbering the caller made on a walk of its own (sim/SimulationTables.cpp):
    // `dense` as denseOf() would be, `numbered` the micro-batches it numbered.
    MessageSlots(int stageCount, std::vector<int> dense, int numbered)
        : stages_(stageCount), microbatches_(std::max(1, numbered)), dense_(std::move(dense)) {}

    int microbatches() const { return microbatches_; }
    // Dense index of a micro-batch number (-1 when it never occurs).
    const std::vector<int>& denseOf() const { return dense_; }
    int denseOf(const Instruction& ins) const { return hasMicrobatch(ins.op) ? dense_[ins.microbatch] : 0; }
    std::size_t size() const { return 2u * static_cast<std::size_t>(stages_) * microbatches_; }
    // `microbatch`: the dense index.
    std::size_t of(bool backward, int stage, int microbatch) const {
        return (static_cast<std::size_t>(backward) * stages_ + stage) * microbatches_ + microbatch;
    }

    // How long a SEND's message to stage `target` travels: send_bytes describes the boundary
    // after a stage, for gradients that is the receiver's.
    static double transferMs(const Plan& plan, const Instruction& send, int target) {
        const bool backward = send.op == Op::SendBackward;
        return plan.link.transferMs(plan.stages[backward ? target : send.stage].cost.send_bytes);
    }

private:
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<int> dense_;
};

}  // namespace mario
