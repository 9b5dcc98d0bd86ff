#pragma once
// The passes one step at a time, for teaching: the plan as each step left it, simulated, with a
// sentence saying what happened and the boxes it touched. The window's pass stepper draws these;
// `mario simulate` prints the same steps as text.
#include <string>
#include <utility>
#include <vector>

#include "core/session/ScheduleInput.h"
#include "core/sim/SimResult.h"

namespace mario {

struct PassTraceStep {
    Plan plan;
    SimResult result;     // with memory curves
    std::string caption;  // empty for step 0 (the source plan): the caller words its invitation
    // (device, program index) of every instruction the step inserted or moved; for a removed
    // recomputation its forward, which now keeps its activations.
    std::vector<std::pair<int, int>> touched;
};

// Step 0 is the source plan; step k the plan after the k-th pass step that changed it. Hand
// edits are not part of the trace. Empty when the source plan cannot be simulated.
std::vector<PassTraceStep> passTrace(const ScheduleInput& input);

}  // namespace mario
