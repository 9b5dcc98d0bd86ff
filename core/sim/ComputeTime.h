#pragma once
// How long one instruction of a device program computes: its stage's cost for its kind, and
// for the two halves of an overlapped pair their shares of the pair's time. The simulator,
// the incremental timeline and the lower bounds all time instructions through here, so the
// overlap rule has one owner (docs/execution-model.md, "Overlapped pairs").
#include <cstddef>
#include <vector>

#include "core/schedule/Plan.h"

namespace mario {

// A pair of a forward F and a backward B takes T_F + T_B − φ·min(T_F, T_B), φ being the
// plan's overlap_factor: both computations share one stream, and φ of the shorter one's time
// (its hidden communication) disappears under the longer. Each half keeps the share of the
// pair that its own cost has, so the halves stand side by side on a timeline.
double overlapScale(const Plan& plan, const Instruction& forward, const Instruction& backward);

// Milliseconds instruction `i` of `program` computes (0 for communication).
double computeMs(const Plan& plan, const std::vector<Instruction>& program, std::size_t i);

}  // namespace mario
