#include "core/sim/ComputeTime.h"

#include <algorithm>

namespace mario {

double overlapScale(const Plan& plan, const Instruction& forward, const Instruction& backward) {
    const double f = plan.stages[forward.stage].cost.durationOf(forward.op);
    const double b = plan.stages[backward.stage].cost.durationOf(backward.op);
    if (f + b <= 0) return 1.0;
    return (f + b - plan.overlap_factor * std::min(f, b)) / (f + b);
}

double computeMs(const Plan& plan, const std::vector<Instruction>& program, std::size_t i) {
    const Instruction& ins = program[i];
    const double own = plan.stages[ins.stage].cost.durationOf(ins.op);
    if (plan.overlap_factor <= 0) return own;
    const auto pair = overlappedPairAt(program, i);
    return pair ? own * overlapScale(plan, program[*pair], program[*pair + 1]) : own;
}

}  // namespace mario
