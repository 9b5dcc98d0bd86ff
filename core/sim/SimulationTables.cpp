#include "core/sim/SimulationTables.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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
    SimulationTables tables(std::move(*topologyResult));
    if (auto error = tables.walk(plan, summary)) return *error;
    return tables;
}

SimulationTables::SimulationTables(PipelineTopology built)
    : topology(std::move(built)), stageCount(topology.stageCount()) {}

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

// One walk. It checks every operand, without a branch for a send or a receive (two thirds of a
// 1F1B program): every micro-batch needs at least two instructions, so a number beyond the
// instruction count can only be a typo, and must not turn into a multi-gigabyte allocation; the
// worded walk runs only for a wrong plan (passes simulate thousands of valid ones). It stops at
// compute instructions only: the Rs and Is mark the tables, and the sums are those of
// sim/StepFlops.cpp, sim/LowerBound.cpp's core(d) and its chain of each micro-batch: the same
// additions in the same order as those functions make on their own walks.
//
// Micro-batches are addressed by their own numbers when the (stage, micro-batch) tables that
// makes stay within the limit below, as they do for any plan that numbers its micro-batches
// from 0 without many gaps; otherwise MessageSlots numbers them densely in order of appearance
// (a second walk). Which index a micro-batch gets changes no time, sum or bound (the critical
// chain is a maximum over micro-batches); numbering them took a fifth of a simulation.
std::optional<Error> SimulationTables::walk(const Plan& plan, bool summary) {
    fillStages(plan);
    const std::size_t deviceCount = plan.devices.size();
    const auto limit = static_cast<std::int64_t>(plan.instructionCount());
    unsigned largestStage = 0;
    int largestMicrobatch = -1;
    bool negative = false;
    recomputes.assign(deviceCount, 0);
    if (summary) sums.core_ms.assign(deviceCount, 0.0);
    std::vector<int>& chainOf = sums.chain_of_microbatch;  // by micro-batch number until renumbered
    chainOf.clear();
    // The Rs' and Is' (stage, micro-batch), marked in the tables once their width is known.
    std::vector<std::pair<int, int>> recomputed, splitBackward;
    const bool overlapped = plan.overlap_factor > 0;
    const StageRow* rows = stages.data();
    double model = 0, recompute = 0;
    for (std::size_t d = 0; d < deviceCount; ++d) {
        const auto& program = plan.devices[d].program;
        const Instruction* code = program.data();
        const std::size_t size = program.size();
        double core = 0;
        std::size_t rs = 0;
        auto coreTime = [&](std::size_t i) {
            return overlapped ? computeMs(plan, program, i) : rows[code[i].stage].duration[int(code[i].op)];
        };
        for (std::size_t i = 0; i < size; ++i) {
            const Instruction& ins = code[i];
            largestStage = std::max(largestStage, static_cast<unsigned>(ins.stage));
            largestMicrobatch = std::max(largestMicrobatch, ins.microbatch);
            negative |= hasMicrobatch(ins.op) & (ins.microbatch < 0);
            if (ins.op > Op::BackwardWeight) continue;  // communication, REDUCE_GRAD, OPT
            // A computation indexes the tables at once, so its own operands are checked first.
            if ((static_cast<unsigned>(ins.stage) >= static_cast<unsigned>(stageCount)) |
                (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ins.microbatch)) >=
                 static_cast<std::uint64_t>(limit)))
                return operandError(plan, stageCount);
            switch (ins.op) {
                case Op::Forward:
                    if (!summary) break;
                    model += rows[ins.stage].forward_flops;
                    if (static_cast<std::size_t>(ins.microbatch) >= chainOf.size())
                        chainOf.resize(std::max<std::size_t>(ins.microbatch + 1, 2 * chainOf.size()), -1);
                    chainOf[ins.microbatch] = topology.chainOf(ins.stage);
                    core += coreTime(i);
                    break;
                case Op::Recompute:
                    recomputed.emplace_back(ins.stage, ins.microbatch), ++rs;
                    if (!summary) break;
                    recompute += rows[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::Backward:
                    if (!summary) break;
                    model += 2 * rows[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::BackwardInput:
                    splitBackward.emplace_back(ins.stage, ins.microbatch);
                    if (!summary) break;
                    model += rows[ins.stage].forward_flops;
                    core += coreTime(i);
                    break;
                case Op::BackwardWeight:
                    if (summary) model += rows[ins.stage].forward_flops;
                    break;
                default: break;
            }
        }
        recomputes[d] = rs;
        if (summary) sums.core_ms[d] = core;
    }
    if ((limit > 0 && largestStage >= static_cast<unsigned>(stageCount)) | (largestMicrobatch >= limit) | negative)
        return operandError(plan, stageCount);
    const int count = largestMicrobatch + 1;  // Plan::microbatchCount
    sums.model_flops = model;
    sums.recompute_flops = recompute;
    microbatchCount = count;
    // The tables are stages × micro-batches. A plan of one chain has each micro-batch on every
    // stage, so they stay within a few times its size; a plan of many chains, each with
    // micro-batches of its own, or an unvalidated one, may not (docs/limits.md).
    const std::int64_t allowed = limits::kMaxPairsPerInstruction * limit + limits::kPairsAlwaysAllowed;
    const int width = std::max(1, count);
    if (std::int64_t(stageCount) * width <= allowed) {
        std::vector<int> own(static_cast<std::size_t>(width));
        for (int m = 0; m < width; ++m) own[m] = m;
        messages = MessageSlots(stageCount, std::move(own), count);
        if (summary) chainOf.resize(static_cast<std::size_t>(width), -1);
    } else {
        messages = MessageSlots(plan, stageCount, count);
        const std::vector<int>& dense = messages.denseOf();
        for (auto* marks : {&recomputed, &splitBackward})
            for (auto& mark : *marks) mark.second = dense[mark.second];
        if (summary) {
            std::vector<int> byDense(static_cast<std::size_t>(messages.microbatches()), -1);
            for (std::size_t m = 0; m < std::min(chainOf.size(), dense.size()); ++m)
                if (dense[m] >= 0) byDense[dense[m]] = chainOf[m];
            chainOf = std::move(byDense);
        }
    }
    microbatches = messages.microbatches();
    fillMessageSlots();
    const std::int64_t cells = std::int64_t(stageCount) * microbatches;
    if (cells > allowed)
        return makeError("the plan's " + std::to_string(microbatches) + " micro-batches on " +
                         std::to_string(stageCount) + " stages make " + std::to_string(cells) +
                         " (stage, micro-batch) pairs; the limit is " +
                         std::to_string(limits::kMaxPairsPerInstruction) + " per instruction plus " +
                         std::to_string(limits::kPairsAlwaysAllowed) + ", " + std::to_string(allowed) + " for its " +
                         std::to_string(limit) + " instructions");
    checkpointed.assign(static_cast<std::size_t>(cells), 0);
    split.assign(checkpointed.size(), 0);
    for (auto [stage, m] : recomputed) checkpointed[static_cast<std::size_t>(stage) * microbatches + m] = 1;
    for (auto [stage, m] : splitBackward) split[static_cast<std::size_t>(stage) * microbatches + m] = 1;
    statics = staticBytesPerDevice(plan);
    arrival.assign(messages.size(), kNotSent);
    waiting.assign(messages.size(), -1);
    touched.reset(new std::size_t[std::max<std::int64_t>(1, limit)]);
    return std::nullopt;
}

void SimulationTables::fillMessageSlots() {
    for (int s = 0; s < stageCount; ++s) {
        StageRow& row = stages[s];
        const int next = row.next_stage, previous = row.previous_stage;  // PipelineTopology::sendTarget
        row.message_slot = {next < 0 ? kNoSlot : messages.of(false, next, 0), messages.of(false, s, 0),
                            previous < 0 ? kNoSlot : messages.of(true, previous, 0), messages.of(true, s, 0)};
        row.transfer_ms = {row.send_transfer_ms, 0.0, previous < 0 ? 0.0 : stages[previous].send_transfer_ms, 0.0};
    }
}

void SimulationTables::resetMessages() {
    // A slot costs a store in each table either way; filling whole tables runs without the
    // list's loads and indexing, so it wins once a timing has touched a quarter of them.
    if (touchedCount * 4 >= arrival.size()) {
        std::fill(arrival.begin(), arrival.end(), kNotSent);
        std::fill(waiting.begin(), waiting.end(), -1);
    } else {
        for (std::size_t k = 0; k < touchedCount; ++k) arrival[touched[k]] = kNotSent, waiting[touched[k]] = -1;
    }
    touchedCount = 0;
}

}  // namespace mario
