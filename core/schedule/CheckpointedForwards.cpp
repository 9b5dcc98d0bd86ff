#include "core/schedule/CheckpointedForwards.h"

#include <set>
#include <utility>

namespace mario {

std::vector<bool> checkpointedForwards(const std::vector<Instruction>& program) {
    std::vector<bool> checkpointed(program.size(), false);
    std::set<std::pair<int, int>> recomputedLater;  // (stage, micro-batch)
    for (std::size_t i = program.size(); i-- > 0;) {
        const Instruction& instruction = program[i];
        if (instruction.op == Op::Recompute) recomputedLater.insert({instruction.stage, instruction.microbatch});
        else if (instruction.op == Op::Forward)
            checkpointed[i] = recomputedLater.count({instruction.stage, instruction.microbatch}) > 0;
    }
    return checkpointed;
}

}  // namespace mario
