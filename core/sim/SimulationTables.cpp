#include "core/sim/SimulationTables.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/model/Limits.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

constexpr double kNotSent = std::numeric_limits<double>::quiet_NaN();

// Words the first operand out of range; called only when the census below found one.
Error operandError(const Plan& plan, int stageCount) {
    const auto limit = static_cast<std::int64_t>(plan.instructionCount());
    for (const auto& device : plan.devices)
        for (std::size_t i = 0; i < device.program.size(); ++i)
            if (device.program[i].microbatch >= limit)
                return makeError("devices[" + std::to_string(device.index) + "].program[" + std::to_string(i) +
                                 "]: micro-batch " + std::to_string(device.program[i].microbatch) +
                                 " is out of range (number micro-batches from 0)");
    for (const auto& device : plan.devices)
        for (std::size_t i = 0; i < device.program.size(); ++i) {
            const Instruction& ins = device.program[i];
            if (ins.stage < 0 || ins.stage >= stageCount || (hasMicrobatch(ins.op) && ins.microbatch < 0))
                return makeError("devices[" + std::to_string(device.index) + "].program[" + std::to_string(i) +
                                 "]: \"" + toActionString(ins) + "\" names a stage that does not exist");
        }
    return makeError("an operand is out of range");  // unreachable: the census found one above
}

}  // namespace

Result<SimulationTables> SimulationTables::build(const Plan& plan, bool summary) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const int stageCount = topologyResult->stageCount();
    // Dense (stage, micro-batch) tables are sized by the largest micro-batch number; every
    // micro-batch needs at least two instructions, so a number beyond the instruction count
    // can only be a typo, and must not turn into a multi-gigabyte allocation. One branch-free
    // walk says whether anything is wrong and finds Plan::microbatchCount on the way; the
    // worded walks run only for a wrong plan (passes simulate thousands of valid ones).
    const auto limit = static_cast<std::int64_t>(plan.instructionCount());
    bool wrong = false;
    int count = 0;
    for (const auto& device : plan.devices)
        for (const Instruction& ins : device.program) {
            wrong |= (ins.microbatch >= limit) |
                     (static_cast<unsigned>(ins.stage) >= static_cast<unsigned>(stageCount)) |
                     (hasMicrobatch(ins.op) & (ins.microbatch < 0));
            count = std::max(count, ins.microbatch + 1);
        }
    if (wrong) return operandError(plan, stageCount);
    MessageSlots messages(plan, stageCount, count);
    const int microbatches = messages.microbatches();
    // The tables below are stages × micro-batches. A plan of one chain has each micro-batch on
    // every stage, so they stay within a few times its size; a plan of many chains, each with
    // micro-batches of its own, or an unvalidated one, may not (docs/limits.md).
    const std::int64_t cells = std::int64_t(stageCount) * microbatches;
    const std::int64_t allowed = limits::kMaxPairsPerInstruction * limit + limits::kPairsAlwaysAllowed;
    if (cells > allowed)
        return makeError("the plan's " + std::to_string(microbatches) + " micro-batches on " +
                         std::to_string(stageCount) + " stages make " + std::to_string(cells) +
                         " (stage, micro-batch) pairs; the limit is " +
                         std::to_string(limits::kMaxPairsPerInstruction) + " per instruction plus " +
                         std::to_string(limits::kPairsAlwaysAllowed) + ", " + std::to_string(allowed) + " for its " +
                         std::to_string(limit) + " instructions");
    return SimulationTables(plan, std::move(*topologyResult), std::move(messages), count, summary);
}

SimulationTables::SimulationTables(const Plan& plan, PipelineTopology built, MessageSlots slots, int count,
                                   bool summary)
    : topology(std::move(built)), messages(std::move(slots)), stageCount(topology.stageCount()),
      microbatches(messages.microbatches()), microbatchCount(count), arrival(messages.size(), kNotSent),
      waiting(messages.size(), -1) {
    fillStages(plan);
    fillTables(plan, summary);
    statics = staticBytesPerDevice(plan);
    // Each send and each receive that blocks lists its slot once, so the instructions bound the
    // list: reserved, it does not grow by copies in every timing (3% of one, issue 45).
    touched.reserve(plan.instructionCount());
}

void SimulationTables::fillStages(const Plan& plan) {
    stages.resize(stageCount);
    for (int s = 0; s < stageCount; ++s) {
        const StageCost& cost = plan.stages[s].cost;
        StageRow& row = stages[s];
        for (int op = 0; op < kOps; ++op) row.duration[op] = cost.durationOf(static_cast<Op>(op));
        row.forward_bytes = cost.activation_bytes;
        row.checkpoint_bytes = cost.checkpoint_bytes;
        row.recompute_bytes = cost.activation_bytes - cost.checkpoint_bytes;
        row.backward_release = -cost.activation_bytes;
        row.input_grad_release = -(cost.activation_bytes - cost.weightGradBytes());
        row.weight_grad_release = -cost.weightGradBytes();
        row.send_transfer_ms = plan.link.transferMs(cost.send_bytes);
        row.forward_flops = cost.forward_flops;
        row.next_stage = topology.nextStage(s);
        row.previous_stage = topology.previousStage(s);
    }
}

// The (stage, micro-batch) tables, and with a summary the sums of sim/StepFlops.cpp,
// sim/LowerBound.cpp's core(d) and its chain of each micro-batch: the same additions in the
// same order as those functions make on their own walks.
void SimulationTables::fillTables(const Plan& plan, bool summary) {
    checkpointed.assign(static_cast<std::size_t>(stageCount) * microbatches, 0);
    split.assign(checkpointed.size(), 0);
    recomputes.assign(plan.devices.size(), 0);
    const std::vector<int>& dense = messages.denseOf();
    if (summary) {
        sums.core_ms.assign(plan.devices.size(), 0.0);
        sums.chain_of_microbatch.assign(microbatches, -1);
    }
    // One switch per instruction: only Rs and Is write the tables, and only compute adds to the
    // sums; a send or a receive (two thirds of a 1F1B program) costs its load and a jump.
    const bool overlapped = plan.overlap_factor > 0;
    double model = 0, recompute = 0;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        double core = 0;
        std::size_t rs = 0;
        auto cell = [&](const Instruction& ins) {
            return static_cast<std::size_t>(ins.stage) * microbatches + dense[ins.microbatch];
        };
        auto coreTime = [&](std::size_t i) {
            return overlapped ? computeMs(plan, program, i) : stages[program[i].stage].duration[int(program[i].op)];
        };
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            switch (ins.op) {
                case Op::Forward:
                    if (!summary) break;
                    model += stages[ins.stage].forward_flops;
                    sums.chain_of_microbatch[dense[ins.microbatch]] = topology.chainOf(ins.stage);
                    core += coreTime(i);
                    break;
                case Op::Recompute:
                    checkpointed[cell(ins)] = 1, ++rs;
                    if (!summary) break;
                    recompute += stages[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::Backward:
                    if (!summary) break;
                    model += 2 * stages[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::BackwardInput:
                    split[cell(ins)] = 1;
                    if (!summary) break;
                    model += stages[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::BackwardWeight:
                    if (summary) model += stages[ins.stage].forward_flops;
                    break;
                default: break;
            }
        }
        recomputes[d] = rs;
        if (summary) sums.core_ms[d] = core;
    }
    sums.model_flops = model;
    sums.recompute_flops = recompute;
}

}  // namespace mario
