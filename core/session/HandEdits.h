#pragma once
// Hand edits: turning a drop on the timeline into an edit, and replaying a list of edits on a
// fresh pass output. Edits name instructions, not positions, so they survive a pass toggle
// that reshuffles the program; one that no longer applies is set aside, never half-applied.
#include <optional>
#include <vector>

#include "core/session/ScheduleInput.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

// Index in `program` of `instruction` (compared by op, stage and micro-batch), or -1.
int findInstruction(const std::vector<Instruction>& program, const Instruction& instruction);

// The program index a box whose centre is dropped at `dropTimeMs` goes before: the first other
// compute instruction whose centre is at or after the drop, before that instruction's own
// receives so the two stay together; the program's size when none is centred later.
int dropInsertionIndex(const Plan& plan, const SimResult& result, int device, int programIndex, double dropTimeMs);

// The edit a drop makes on the shown `plan`, checked at once (dependencies, deadlock): an error
// says why the move is refused; nullopt means the box was dropped where it already stands.
Result<std::optional<HandEdit>> editForDrop(const Plan& plan, const SimResult& result, int device, int programIndex,
                                            double dropTimeMs);

// Applies `edits` in order to `plan`; returns the ones that no longer apply (their device or
// instructions are gone, or the move would now break the plan), which are skipped.
std::vector<HandEdit> applyHandEdits(Plan& plan, const std::vector<HandEdit>& edits);

}  // namespace mario
