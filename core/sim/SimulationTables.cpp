#include "core/sim/SimulationTables.h"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
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

// What the computations' pass gathers for the tables and the sums, across devices.
struct SimulationTables::Marks {
    double model = 0, recompute = 0;
    // The Rs' and Is' (stage, micro-batch), marked in the tables once their width is known.
    std::vector<std::pair<int, int>> recomputed, splitBackward;
};

// The second pass over a device's program, after the census has checked every operand: it
// stops at compute instructions only. The Rs and Is mark the tables, and the sums are those of
// sim/StepFlops.cpp, sim/LowerBound.cpp's core(d) and its chain of each micro-batch: the same
// additions in the same order as those functions make on their own walks. One instance per
// kind (with or without the summary, overlapped pairs or not), so that it tests neither.
template <bool kSummary, bool kOverlapped>
void SimulationTables::walkComputations(const Plan& plan, std::size_t device, Marks& marks) {
    const auto& program = plan.devices[device].program;
    const Instruction* const code = program.data();
    const std::size_t size = program.size();
    const StageRow* const rows = stages.data();
    int* const chainOf = sums.chain_of_microbatch.data();  // by micro-batch number until renumbered
    double core = 0, model = marks.model, recompute = marks.recompute;
    std::size_t rs = 0;
    for (std::size_t i = 0; i < size; ++i) {
        const Instruction& ins = code[i];
        if (ins.op > Op::BackwardWeight) continue;  // communication, REDUCE_GRAD, OPT
        const StageRow& row = rows[ins.stage];
        auto coreTime = [&] {
            if constexpr (kOverlapped) return computeMs(plan, program, i);
            else return row.duration[int(ins.op)];
        };
        switch (ins.op) {
            case Op::Forward:
                if constexpr (kSummary) {
                    model += row.forward_flops;
                    chainOf[ins.microbatch] = topology.chainOf(ins.stage);
                    core += coreTime();
                }
                break;
            case Op::Recompute:
                marks.recomputed.emplace_back(ins.stage, ins.microbatch), ++rs;
                if constexpr (kSummary) {
                    recompute += row.forward_flops;
                    core += coreTime();
                }
                break;
            case Op::Backward:
                if constexpr (kSummary) {
                    model += 2 * row.forward_flops;
                    core += coreTime();
                }
                break;
            case Op::BackwardInput:
                marks.splitBackward.emplace_back(ins.stage, ins.microbatch);
                if constexpr (kSummary) {
                    model += row.forward_flops;
                    core += coreTime();
                }
                break;
            case Op::BackwardWeight:
                if constexpr (kSummary) model += row.forward_flops;
                break;
            default: break;
        }
    }
    recomputes[device] = rs;
    marks.model = model;
    marks.recompute = recompute;
    if constexpr (kSummary) sums.core_ms[device] = core;
}

// The census checks every operand in a loop with no branch (the largest stage and micro-batch
// numbers, the smallest micro-batch of the instructions that have one): every micro-batch needs
// at least two instructions, so a number beyond the instruction count can only be a typo, and
// must not turn into a multi-gigabyte allocation; the worded walk runs only for a wrong plan
// (passes simulate thousands of valid ones). It counts the Rs and Is too, so that a timing
// without a summary of a plan with neither skips the second pass.
//
// Micro-batches are addressed by their own numbers when the (stage, micro-batch) tables that
// makes stay within the limit below, as they do for any plan that numbers its micro-batches
// from 0 without many gaps; otherwise MessageSlots numbers them densely in order of appearance
// (a further walk) and the loop reads a renumbered copy of the programs. Which index a
// micro-batch gets changes no time, sum or bound (the critical chain is a maximum over
// micro-batches); numbering them took a fifth of a simulation.
std::optional<Error> SimulationTables::walk(const Plan& plan, bool summary) {
    fillStages(plan);
    const std::size_t deviceCount = plan.devices.size();
    const auto limit = static_cast<std::int64_t>(plan.instructionCount());
    unsigned largestStage = 0;
    int largestMicrobatch = -1, smallestMicrobatch = 0;
    std::size_t marked = 0;  // Rs and Is, counted only where they decide whether the second pass runs
    auto census = [&](auto countMarks) {
        for (const auto& device : plan.devices)
            for (const Instruction& ins : device.program) {
                largestStage = std::max(largestStage, static_cast<unsigned>(ins.stage));
                largestMicrobatch = std::max(largestMicrobatch, ins.microbatch);
                smallestMicrobatch = std::min(smallestMicrobatch, hasMicrobatch(ins.op) ? ins.microbatch : 0);
                if constexpr (decltype(countMarks)::value)
                    marked += (ins.op == Op::Recompute) | (ins.op == Op::BackwardInput);
            }
    };
    if (summary) census(std::false_type{});  // the second pass runs anyway
    else census(std::true_type{});
    if ((limit > 0 && largestStage >= static_cast<unsigned>(stageCount)) | (largestMicrobatch >= limit) |
        (smallestMicrobatch < 0))
        return operandError(plan, stageCount);
    const int count = largestMicrobatch + 1;  // Plan::microbatchCount
    const int width = std::max(1, count);
    recomputes.assign(deviceCount, 0);
    std::vector<int>& chainOf = sums.chain_of_microbatch;
    chainOf.clear();
    Marks marks;
    if (summary) {
        sums.core_ms.assign(deviceCount, 0.0);
        chainOf.assign(static_cast<std::size_t>(width), -1);
    }
    const bool overlapped = plan.overlap_factor > 0;
    for (std::size_t d = 0; d < deviceCount; ++d) {
        if (summary) {
            if (overlapped) walkComputations<true, true>(plan, d, marks);
            else walkComputations<true, false>(plan, d, marks);
        } else if (marked > 0) {
            walkComputations<false, false>(plan, d, marks);  // only the marks: no times are read
        }
    }
    sums.model_flops = marks.model;
    sums.recompute_flops = marks.recompute;
    microbatchCount = count;
    // The tables are stages × micro-batches. A plan of one chain has each micro-batch on every
    // stage, so they stay within a few times its size; a plan of many chains, each with
    // micro-batches of its own, or an unvalidated one, may not (docs/limits.md).
    const std::int64_t allowed = limits::kMaxPairsPerInstruction * limit + limits::kPairsAlwaysAllowed;
    code.resize(deviceCount);
    if (std::int64_t(stageCount) * width <= allowed) {
        std::vector<int> own(static_cast<std::size_t>(width));
        for (int m = 0; m < width; ++m) own[m] = m;
        messages = MessageSlots(stageCount, std::move(own), count);
        for (std::size_t d = 0; d < deviceCount; ++d) code[d] = plan.devices[d].program.data();
    } else {
        messages = MessageSlots(plan, stageCount, count);
        const std::vector<int>& dense = messages.denseOf();
        for (auto* list : {&marks.recomputed, &marks.splitBackward})
            for (auto& mark : *list) mark.second = dense[mark.second];
        if (summary) {
            std::vector<int> byDense(static_cast<std::size_t>(messages.microbatches()), -1);
            for (std::size_t m = 0; m < std::min(chainOf.size(), dense.size()); ++m)
                if (dense[m] >= 0) byDense[dense[m]] = chainOf[m];
            chainOf = std::move(byDense);
        }
        renumber(plan);
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
    for (auto [stage, m] : marks.recomputed) checkpointed[static_cast<std::size_t>(stage) * microbatches + m] = 1;
    for (auto [stage, m] : marks.splitBackward) split[static_cast<std::size_t>(stage) * microbatches + m] = 1;
    statics = staticBytesPerDevice(plan);
    // The sink row after the messages: where a send with no stage to go to writes.
    messageStates.assign(messages.size() + static_cast<std::size_t>(microbatches), {kNotSent, -1});
    touched.reset(new std::size_t[std::max<std::int64_t>(1, limit)]);
    return std::nullopt;
}

// The programs with each micro-batch number replaced by its dense index (MessageSlots), for a
// plan whose numbers would make the tables too wide.
void SimulationTables::renumber(const Plan& plan) {
    const std::vector<int>& dense = messages.denseOf();
    renumbered.resize(plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        renumbered[d] = plan.devices[d].program;
        for (Instruction& ins : renumbered[d])
            if (hasMicrobatch(ins.op)) ins.microbatch = dense[ins.microbatch];
        code[d] = renumbered[d].data();
    }
}

void SimulationTables::fillMessageSlots() {
    const std::size_t sink = messages.size();
    routes.resize(static_cast<std::size_t>(stageCount) * kMessageKinds);
    for (int s = 0; s < stageCount; ++s) {
        const StageRow& row = stages[s];
        const int next = row.next_stage, previous = row.previous_stage;  // PipelineTopology::sendTarget
        MessageRoute* const route = &routes[static_cast<std::size_t>(s) * kMessageKinds];
        route[0] = {next < 0 ? sink : messages.of(false, next, 0), row.send_transfer_ms};
        route[1] = {messages.of(false, s, 0), 0.0};
        route[2] = {previous < 0 ? sink : messages.of(true, previous, 0),
                    previous < 0 ? 0.0 : stages[previous].send_transfer_ms};
        route[3] = {messages.of(true, s, 0), 0.0};
    }
}

void SimulationTables::resetMessages() {
    // A slot costs a store in each table either way; filling whole tables runs without the
    // list's loads and indexing, so it wins once a timing has touched a quarter of them.
    if (touchedCount * 4 >= messageStates.size()) {
        std::fill(messageStates.begin(), messageStates.end(), MessageState{kNotSent, -1});
    } else {
        for (std::size_t k = 0; k < touchedCount; ++k) messageStates[touched[k]] = {kNotSent, -1};
    }
    touchedCount = 0;
}

}  // namespace mario
