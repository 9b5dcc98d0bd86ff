#include "core/sim/ComputeTime.h"

#include <algorithm>

namespace mario {

double overlapScale(const Plan& plan, const Instruction& forward, const Instruction& backward) {
    const double f = plan.stages[forward.stage].cost.durationOf(forward.op);
    const double b = plan.stages[backward.stage].cost.durationOf(backward.op);
    if (f + b <= 0) return 1.0;
    return (f + b - plan.overlap_factor * std::min(f, b)) / (f + b);
}

double overlappedMs(const Plan& plan, const std::vector<Instruction>& program, std::size_t i, double own) {
    const auto pair = overlappedPairAt(program, i);
    return pair ? own * overlapScale(plan, program[*pair], program[*pair + 1]) : own;
}

}  // namespace mario
