#include "core/schedule/CheckpointedForwards.h"

#include "core/schedule/StageMicrobatchTable.h"

namespace mario {

std::vector<bool> checkpointedForwards(const std::vector<Instruction>& program) {
    std::vector<bool> checkpointed(program.size(), false);
    // Where each (stage, micro-batch)'s last R stands (a table, not the std::set of before:
    // the passes ask for every device's memory levels many times a run; issue 45).
    StageMicrobatchTable lastRecompute(program, -1);
    bool any = false;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i].op == Op::Recompute) lastRecompute.set(program[i], static_cast<std::int64_t>(i)), any = true;
    if (!any) return checkpointed;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (program[i].op == Op::Forward)
            checkpointed[i] = lastRecompute.get(program[i]) > static_cast<std::int64_t>(i);
    return checkpointed;
}

}  // namespace mario
