#pragma once
// Which forwards of a device program are checkpointed: those whose (stage, micro-batch) is
// recomputed later in the same program (docs/execution-model.md). Shared by every view of a program
// (trace export, text Gantt, memory accounting) so they all agree.
#include <vector>

#include "core/schedule/Instruction.h"

namespace mario {

// One flag per instruction, true only at checkpointed forwards. One backward walk.
std::vector<bool> checkpointedForwards(const std::vector<Instruction>& program);

}  // namespace mario
