#pragma once
// One sentence that says what a pass step did, for the GUI's pass stepper and teaching
// handouts: "Overlap-recompute moved 12 recomputations ahead of their gradient waits: 1R0 on
// device 1 now runs while device 2 computes 2B0. Step 28 → 25 ms."
#include <string>

#include "core/passes/PassReport.h"
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario {

// `units` names the unit of the step times: "ms", or "time units" for unit-cost plans, which
// count abstract time ("Step 28 → 25 time units.").
std::string captionForStep(const PassReport& step, const Plan& after, const SimResult& before,
                           const SimResult& afterSim, const std::string& units = "ms");

}  // namespace mario
