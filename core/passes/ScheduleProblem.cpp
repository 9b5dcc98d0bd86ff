#include "core/passes/ScheduleProblem.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/schedule/Communication.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/MessageSlots.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// Durations and memory from their owners (ComputeTime, ProgramMemory), on one-instruction
// programs: an F is checkpointed exactly when its R follows it.
double msOf(const Plan& plan, const Instruction& ins) { return computeMs(plan, {ins}, 0); }
double bytesOf(const Plan& plan, const std::vector<Instruction>& program, std::size_t i) {
    return memoryDeltas(plan, program)[i];
}

using OpKey = std::tuple<int, int, int>;  // op, stage, micro-batch
OpKey keyOf(Op op, int stage, int microbatch) { return {static_cast<int>(op), stage, microbatch}; }

}  // namespace

Result<ScheduleProblem> ScheduleProblem::fromPlan(const Plan& plan, const std::vector<double>& budget) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    if (budget.size() < plan.devices.size()) return makeError("exact search: a memory budget for every device is needed");
    ScheduleProblem problem;
    problem.skeleton_ = plan;
    problem.statics_ = staticBytesPerDevice(plan);
    problem.syncs_.resize(plan.devices.size());
    problem.tail_.assign(plan.devices.size(), 0.0);
    std::map<OpKey, int> index;
    for (const auto& device : plan.devices) {
        const int d = device.index;
        problem.room_.push_back(budget[d] - problem.statics_[d]);
        for (const Instruction& ins : device.program) {
            if (ins.overlapped) return makeError("exact search: overlapped pairs are not modelled");
            if (!isCompute(ins.op) || ins.op == Op::Recompute) continue;
            if (!hasMicrobatch(ins.op)) {
                problem.syncs_[d].push_back(ins);
                problem.tail_[d] += msOf(plan, ins);
                continue;
            }
            ScheduleOp op;
            op.instruction = {ins.op, ins.stage, ins.microbatch};
            op.device = d;
            op.ms = msOf(plan, op.instruction);
            if (!(op.ms > 0)) return makeError("exact search: " + toActionString(ins) + " takes no time");
            op.bytes = bytesOf(plan, {op.instruction}, 0);
            if (ins.op == Op::Forward) {
                const Instruction recompute{Op::Recompute, ins.stage, ins.microbatch};
                op.checkpointed_bytes = bytesOf(plan, {op.instruction, recompute}, 0);
            }
            index[keyOf(ins.op, ins.stage, ins.microbatch)] = static_cast<int>(problem.ops_.size());
            problem.ops_.push_back(std::move(op));
        }
    }
    auto find = [&](Op op, int stage, int microbatch) {
        const auto it = index.find(keyOf(op, stage, microbatch));
        return it == index.end() ? -1 : it->second;
    };
    auto backwardOf = [&](int stage, int microbatch) {
        const int b = find(Op::Backward, stage, microbatch);
        return b >= 0 ? b : find(Op::BackwardInput, stage, microbatch);
    };
    const std::size_t computeOps = problem.ops_.size();
    for (std::size_t i = 0; i < computeOps; ++i) {
        ScheduleOp& op = problem.ops_[i];
        const Instruction ins = op.instruction;
        const int s = ins.stage, m = ins.microbatch;
        auto addInput = [&](int from, bool backward, int sender) {
            ScheduleOp& self = problem.ops_[i];
            const ScheduleOp& producer = problem.ops_[from];
            double lag = 0;
            if (producer.device != self.device) {
                const Instruction send{backward ? Op::SendBackward : Op::SendForward, sender, m};
                lag = MessageSlots::transferMs(plan, send, s);
            }
            self.inputs.push_back({from, lag});
        };
        if (ins.op == Op::Forward) {
            if (backwardOf(s, m) < 0 || problem.ops_[backwardOf(s, m)].device != op.device)
                return makeError("exact search: " + toActionString(ins) + " has no backward on its device");
            const int previous = topology->previousStage(s);
            if (previous >= 0) {
                const int from = find(Op::Forward, previous, m);
                if (from < 0) return makeError("exact search: " + toActionString(ins) + " has no input forward");
                addInput(from, false, previous);
            }
        } else if (isBackwardStart(ins.op)) {
            const int forward = find(Op::Forward, s, m);
            if (forward < 0) return makeError("exact search: " + toActionString(ins) + " has no forward");
            problem.ops_[i].forward = forward;
            addInput(forward, false, s);
            const int next = topology->nextStage(s);
            if (next >= 0) {
                const int from = backwardOf(next, m);
                if (from < 0) return makeError("exact search: " + toActionString(ins) + " has no gradient");
                addInput(from, true, next);
            }
        } else if (ins.op == Op::BackwardWeight) {
            const int input = find(Op::BackwardInput, s, m);
            if (input < 0) return makeError("exact search: " + toActionString(ins) + " has no I");
            addInput(input, false, s);
        }
    }
    // Every F's optional R, after the compute operations.
    for (std::size_t i = 0; i < computeOps; ++i) {
        if (problem.ops_[i].instruction.op != Op::Forward) continue;
        const Instruction f = problem.ops_[i].instruction;
        ScheduleOp r;
        r.instruction = {Op::Recompute, f.stage, f.microbatch};
        r.device = problem.ops_[i].device;
        r.ms = msOf(plan, r.instruction);
        if (!(r.ms > 0)) return makeError("exact search: " + toActionString(r.instruction) + " takes no time");
        r.bytes = bytesOf(plan, {f, r.instruction}, 1);
        r.forward = static_cast<int>(i);
        r.inputs.push_back({static_cast<int>(i), 0});
        problem.ops_[i].recompute = static_cast<int>(problem.ops_.size());
        problem.ops_.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < problem.ops_.size(); ++i)
        for (const auto& input : problem.ops_[i].inputs) problem.ops_[input.op].consumers.push_back(static_cast<int>(i));
    // Symmetry: a chain's micro-batches are interchangeable where each of its stages runs every
    // one of them the same way (DualPipe splits the backward of some only).
    for (const auto& chain : topology->chains()) {
        std::vector<int> entry;
        bool uniform = true;
        for (int stage : chain) {
            int kind = -1;
            for (const auto& op : problem.ops_)
                if (op.instruction.stage == stage && isBackwardStart(op.instruction.op)) {
                    const int k = static_cast<int>(op.instruction.op);
                    uniform = uniform && (kind < 0 || kind == k);
                    kind = k;
                }
        }
        for (std::size_t i = 0; i < computeOps; ++i)
            if (problem.ops_[i].instruction.op == Op::Forward && problem.ops_[i].instruction.stage == chain.front())
                entry.push_back(static_cast<int>(i));
        std::sort(entry.begin(), entry.end(), [&](int a, int b) {
            return problem.ops_[a].instruction.microbatch < problem.ops_[b].instruction.microbatch;
        });
        if (uniform && entry.size() > 1) problem.entries_.push_back(std::move(entry));
    }
    return problem;
}

Result<Plan> ScheduleProblem::toPlan(const std::vector<std::vector<int>>& order) const {
    auto topology = PipelineTopology::build(skeleton_);
    if (!topology) return topology.error();
    Plan plan = skeleton_;
    // Communication as planFromComputeOrder inserts it; the input's own REDUCE_GRAD and OPT.
    for (std::size_t d = 0; d < order.size() && d < plan.devices.size(); ++d) {
        std::vector<Instruction> compute;
        for (int op : order[d]) compute.push_back(ops_[op].instruction);
        auto program = withCommunication(compute, *topology);
        program.insert(program.end(), syncs_[d].begin(), syncs_[d].end());
        plan.devices[d].program = std::move(program);
    }
    return plan;
}

}  // namespace mario
