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

// `own` (the instruction's own cost) scaled when instruction `i` is half of an overlapped pair.
double overlappedMs(const Plan& plan, const std::vector<Instruction>& program, std::size_t i, double own);

// Milliseconds instruction `i` of `program` computes (0 for communication). Inline: the
// simulator asks it for every compute instruction, and the call was a tenth of a simulation
// (issue 45); the pair's rule stays out of line.
inline double computeMs(const Plan& plan, const std::vector<Instruction>& program, std::size_t i) {
    const Instruction& ins = program[i];
    const double own = plan.stages[ins.stage].cost.durationOf(ins.op);
    if (plan.overlap_factor <= 0) return own;
    return overlappedMs(plan, program, i, own);
}

}  // namespace mario
