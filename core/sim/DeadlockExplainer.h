#pragma once
// Words for a deadlock: for each stuck device, the receive it is blocked on and why the
// matching send never happened (missing from the sender's program, or the sender is itself
// stuck before reaching it).
#include <cstddef>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario {

std::vector<BlockedDevice> explainDeadlock(const Plan& plan, const PipelineTopology& topology,
                                           const std::vector<std::size_t>& stoppedAt);

// One line per blocked device, joined with "; ".
std::string describeDeadlock(const std::vector<BlockedDevice>& blocked);

}  // namespace mario
