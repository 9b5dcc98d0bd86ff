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

// Words the first operand out of range; called only when the walk below found one.
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
    return makeError("an operand is out of range");  // unreachable: the walk found one above
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
        row.checkpoint_bytes = cost.checkpoint_bytes;
        row.memory_before[int(Op::Forward)] = cost.activation_bytes;
        row.memory_before[int(Op::Recompute)] = cost.activation_bytes - cost.checkpoint_bytes;
        row.memory_after[int(Op::Backward)] = -cost.activation_bytes;
        row.memory_after[int(Op::BackwardInput)] = -(cost.activation_bytes - cost.weightGradBytes());
        row.memory_after[int(Op::BackwardWeight)] = -cost.weightGradBytes();
        row.send_transfer_ms = plan.link.transferMs(cost.send_bytes);
        row.forward_flops = cost.forward_flops;
        row.next_stage = topology.nextStage(s);
        row.previous_stage = topology.previousStage(s);
        row.chain = topology.chainOf(s);
    }
}

// What the walk gathers across devices: the operands' bounds, the sums, and the Rs' and Is'
// (stage, micro-batch), marked in the tables once their width is known.
struct SimulationTables::Walk {
    unsigned largestStage = 0;
    // Of the instructions that have a micro-batch, the largest number + 1 taken as unsigned: a
    // negative number wraps beyond any instruction count, so one comparison finds both faults.
    std::uint64_t microbatchEnd = 0;
    int largestOther = -1;  // REDUCE_GRAD's and OPT's numbers (Plan::microbatchCount counts them)
    double model = 0, recompute = 0;
    std::vector<std::pair<int, int>> recomputed, splitBackward;
};

// One device's program in one walk: every instruction's operands go into the bounds, and a
// computation, once its own operands are checked (it indexes the stage rows and the chains by
// them), marks the tables and adds to the sums: those of sim/StepFlops.cpp, sim/LowerBound.cpp's
// core(d) and its chain of each micro-batch, the same additions in the same order as those
// functions make on their own walks. False when a computation's operand is out of range. One
// instance per kind (with or without the summary, overlapped pairs or not), so that it tests
// neither.
template <bool kSummary, bool kOverlapped>
bool SimulationTables::walkDevice(const Plan& plan, std::size_t device, Walk& walk) {
    const auto& program = plan.devices[device].program;
    const Instruction* const code = program.data();
    const Instruction* const codeEnd = code + program.size();
    const StageRow* const rows = stages.data();
    const unsigned stageEnd = static_cast<unsigned>(stageCount);
    const std::uint64_t limit = plan.instructionCount();
    std::vector<int>& chainOf = sums.chain_of_microbatch;  // by micro-batch number until renumbered
    unsigned largestStage = walk.largestStage;
    std::uint64_t microbatchEnd = walk.microbatchEnd;
    // The FLOPs of the Rs stay in `walk`: kept beside the model's, the compiler packed the two
    // sums into one vector register and unpacked it at every instruction.
    double core = 0, model = walk.model;
    std::size_t rs = 0;
    // The chains' table as a pointer and a size in registers: through the vector, every forward
    // reloaded its bounds from memory.
    int* chain = chainOf.data();
    std::size_t chainSize = chainOf.size();
    for (const Instruction* at = code; at != codeEnd; ++at) {
        const Instruction& ins = *at;
        const Op op = ins.op;
        const unsigned stage = static_cast<unsigned>(ins.stage);
        const std::uint64_t end = std::uint64_t(std::uint32_t(ins.microbatch)) + 1;
        largestStage = std::max(largestStage, stage);
        if (op > Op::BackwardWeight) {  // communication (two thirds of a program), REDUCE_GRAD, OPT
            if (op < Op::ReduceGrad) microbatchEnd = std::max(microbatchEnd, end);
            else walk.largestOther = std::max(walk.largestOther, ins.microbatch);
            continue;
        }
        microbatchEnd = std::max(microbatchEnd, end);
        if (stage >= stageEnd || end > limit) return false;
        const StageRow& row = rows[stage];
        auto coreTime = [&] {
            if constexpr (kOverlapped) return computeMs(plan, program, static_cast<std::size_t>(at - code));
            else return row.duration[int(op)];
        };
        // The kinds tested in the order they are common (F and B, then R, I, W): as a switch the
        // compiler tested a forward, the commonest, last.
        if (op == Op::Forward) {
            if constexpr (kSummary) {
                model += row.forward_flops;
                if (end > chainSize) {
                    chainOf.resize(end, -1);
                    chain = chainOf.data(), chainSize = end;
                }
                chain[ins.microbatch] = row.chain;
                core += coreTime();
            }
        } else if (op == Op::Backward) {
            if constexpr (kSummary) {
                model += 2 * row.forward_flops;
                core += coreTime();
            }
        } else if (op == Op::Recompute) {
            walk.recomputed.emplace_back(ins.stage, ins.microbatch), ++rs;
            if constexpr (kSummary) {
                walk.recompute += row.forward_flops;
                core += coreTime();
            }
        } else if (op == Op::BackwardInput) {
            walk.splitBackward.emplace_back(ins.stage, ins.microbatch);
            if constexpr (kSummary) {
                model += row.forward_flops;
                core += coreTime();
            }
        } else if constexpr (kSummary) {  // Op::BackwardWeight
            model += row.forward_flops;
        }
    }
    recomputes[device] = rs;
    walk.largestStage = largestStage;
    walk.microbatchEnd = microbatchEnd;
    walk.model = model;
    if constexpr (kSummary) sums.core_ms[device] = core;
    return true;
}

// One walk over every program (issue 45: there were ten, then three, then two: a branch-free
// census of the operands and a pass over the computations). Every micro-batch needs at least two
// instructions, so a number beyond the instruction count can only be a typo, and must not turn
// into a multi-gigabyte allocation; the worded walk runs only for a wrong plan (passes simulate
// thousands of valid ones). A plan of overlapped pairs has its operands checked first: a pair's
// time reads its partner's stage, which may come later in the program.
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
    const bool overlapped = plan.overlap_factor > 0;
    if (overlapped)
        for (const auto& device : plan.devices)
            for (const Instruction& ins : device.program)
                if (ins.stage < 0 || ins.stage >= stageCount ||
                    (hasMicrobatch(ins.op) && (ins.microbatch < 0 || ins.microbatch >= limit)))
                    return operandError(plan, stageCount);
    recomputes.assign(deviceCount, 0);
    std::vector<int>& chainOf = sums.chain_of_microbatch;
    chainOf.clear();
    if (summary) {
        sums.core_ms.assign(deviceCount, 0.0);
        // The walk widens it to each new micro-batch; room for a plan of one chain (each
        // micro-batch's F and B on every stage) up front, so that it seldom moves.
        chainOf.reserve(static_cast<std::size_t>(limit / (2 * std::max(1, stageCount)) + 1));
    }
    Walk marks;
    for (std::size_t d = 0; d < deviceCount; ++d) {
        bool checked;
        if (summary) checked = overlapped ? walkDevice<true, true>(plan, d, marks) : walkDevice<true, false>(plan, d, marks);
        else checked = overlapped ? walkDevice<false, true>(plan, d, marks) : walkDevice<false, false>(plan, d, marks);
        if (!checked) return operandError(plan, stageCount);
    }
    if ((limit > 0 && marks.largestStage >= static_cast<unsigned>(stageCount)) |
        (marks.microbatchEnd > static_cast<std::uint64_t>(limit)) | (marks.largestOther >= limit))
        return operandError(plan, stageCount);
    const int largestMicrobatch = std::max(static_cast<int>(marks.microbatchEnd) - 1, marks.largestOther);
    const int width = std::max(1, largestMicrobatch + 1);
    if (summary) chainOf.resize(static_cast<std::size_t>(width), -1);
    const int count = largestMicrobatch + 1;  // Plan::microbatchCount
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
    fillMessageSlots();
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
    MessageState* const states = messageStates.data();
    MessageState* const sink = states + messages.size();
    routes.resize(static_cast<std::size_t>(stageCount) * kMessageKinds);
    for (int s = 0; s < stageCount; ++s) {
        const StageRow& row = stages[s];
        const int next = row.next_stage, previous = row.previous_stage;  // PipelineTopology::sendTarget
        MessageRoute* const route = &routes[static_cast<std::size_t>(s) * kMessageKinds];
        route[0] = {next < 0 ? sink : states + messages.of(false, next, 0), row.send_transfer_ms};
        route[1] = {states + messages.of(false, s, 0), 0.0};
        route[2] = {previous < 0 ? sink : states + messages.of(true, previous, 0),
                    previous < 0 ? 0.0 : stages[previous].send_transfer_ms};
        route[3] = {states + messages.of(true, s, 0), 0.0};
    }
}

void SimulationTables::resetMessages() {
    // A slot costs a store in each table either way; filling whole tables runs without the
    // list's loads and indexing, so it wins once a timing has touched a quarter of them.
    if (messagesUntracked || touchedCount * 4 >= messageStates.size()) {
        std::fill(messageStates.begin(), messageStates.end(), MessageState{kNotSent, -1});
    } else {
        for (std::size_t k = 0; k < touchedCount; ++k) messageStates[touched[k]] = {kNotSent, -1};
    }
    touchedCount = 0;
    messagesUntracked = false;
}

}  // namespace mario
