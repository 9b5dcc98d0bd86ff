#pragma once
// Hand edits of a plan (the GUI's drag to edit): move one instruction within its device's
// program. A forward or backward carries the RECV just before it and the SEND just after it
// along, so a move never separates a compute from its own communication; an overlapped pair
// moves as one, with the communication of both halves. The edited plan is
// validated; a move that breaks a dependency or deadlocks is refused with the reason.
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct InstructionMove {
    int device = 0;
    int from_index = 0;    // the instruction to move (a compute instruction)
    int before_index = 0;  // it goes before the instruction now at this index (size: the end)
};

struct EditedPlan {
    Plan plan;
    int new_index = 0;  // where the moved instruction now stands
};

// The span [first, last) that moves with program[index]: RECV + compute + SEND, or a
// pair's receives, the pair and its sends.
std::pair<int, int> movingGroup(const std::vector<Instruction>& program, int index);

Result<EditedPlan> moveInstruction(const Plan& plan, const InstructionMove& move);

}  // namespace mario
