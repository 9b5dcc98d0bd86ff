#include "core/sim/SimulationTables.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/model/Limits.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/ProgramMemory.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace mario {
namespace {

// Unsent (SimulationTables::MessageState): arrival NaN, no device waiting.
void markUnsent(SimulationTables::MessageState* first, std::size_t count) {
    std::memset(static_cast<void*>(first), 0xff, count * sizeof(SimulationTables::MessageState));
}

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

std::optional<Error> SimulationTables::rebuild(const Plan& plan, bool summary) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    topology = std::move(*topologyResult);
    stageCount = topology.stageCount();
    // What the last plan's timings left: the contention rounds' list is sized by its plan.
    touched.reset();
    touchedCount = 0;
    messagesUntracked = false;
    return walk(plan, summary);
}

void SimulationTables::fillStages(const Plan& plan) {
    stages.resize(stageCount);
    for (int s = 0; s < stageCount; ++s) {
        const StageCost& cost = plan.stages[s].cost;
        StageRow& row = stages[s];
        for (int op = 0; op < kOps; ++op) row.duration[op] = cost.durationOf(static_cast<Op>(op));
        row.memory_change.fill(0.0);
        row.model_flops.fill(0.0);
        row.core_ms.fill(0.0);
        row.checkpoint_bytes = cost.checkpoint_bytes;
        row.memory_change[int(Op::Forward)] = cost.activation_bytes;
        row.memory_change[int(Op::Recompute)] = cost.activation_bytes - cost.checkpoint_bytes;
        row.memory_change[int(Op::Backward)] = -cost.activation_bytes;
        row.memory_change[int(Op::BackwardInput)] = -(cost.activation_bytes - cost.weightGradBytes());
        row.memory_change[int(Op::BackwardWeight)] = -cost.weightGradBytes();
        row.send_transfer_ms = plan.link.transferMs(cost.send_bytes);
        row.forward_flops = cost.forward_flops;
        // sim/StepFlops.cpp's count: a backward is two forwards, its split halves one each.
        row.model_flops[int(Op::Forward)] = cost.forward_flops;
        row.model_flops[int(Op::Backward)] = 2 * cost.forward_flops;
        row.model_flops[int(Op::BackwardInput)] = cost.forward_flops;
        row.model_flops[int(Op::BackwardWeight)] = cost.forward_flops;
        for (Op op : {Op::Forward, Op::Recompute, Op::Backward, Op::BackwardInput})  // LowerBound.cpp's core(d)
            row.core_ms[int(op)] = row.duration[int(op)];
        row.next_stage = topology.nextStage(s);
        row.previous_stage = topology.previousStage(s);
        row.chain = topology.chainOf(s);
    }
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// The census of a program with AVX2, four instructions a step, where the processor has it: as
// plain C++ (SSE2, which has no 32-bit max or min) GCC's vectorised loop spent 16 machine
// instructions on each plan instruction, a quarter of a 1F1B simulation. An instruction is four
// 32-bit lanes: the op's byte (its padding masked off), the stage, the micro-batch and the pair
// flag. Two loads hold four instructions; interleaving their lanes puts the four ops and the
// four stages in one vector and the four micro-batches, each in the place of its op, in another
// (two shuffles for four instructions: taking each instruction as it was loaded cost five
// machine instructions a plan instruction, this three; issue 45). Lane by lane, an unsigned max
// of the stages (a negative one wraps beyond any stage count), a signed max of the micro-batches,
// a signed min of those of the kinds that have one (REDUCE_GRAD's and OPT's zeroed first) and a
// count of the Rs. Returns where it stopped: the last one to three instructions are the plain
// loop's (censusDevice).
static_assert(sizeof(Instruction) == 16 && offsetof(Instruction, stage) == 4 && offsetof(Instruction, microbatch) == 8);
static_assert(int(Op::ReduceGrad) == 9 && int(Op::Optimizer) == 10, "the kinds without a micro-batch come last");
__attribute__((target("avx2"))) const Instruction* censusWithAvx2(const Instruction* at, const Instruction* end,
                                                                  unsigned& largestStage, int& largestMicrobatch,
                                                                  int& smallestMicrobatch, std::size_t& rs) {
    // After the interleave, per 128-bit half: lanes 0-1 two ops, lanes 2-3 their stages (`opsAndStages`);
    // lanes 0-1 their micro-batches, lanes 2-3 their pair flags (`microbatches`).
    const __m256i opMask = _mm256_setr_epi32(0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0);
    const __m256i recompute = _mm256_set1_epi32(int(Op::Recompute));
    const __m256i lastWithMicrobatch = _mm256_set1_epi32(int(Op::ReduceGrad) - 1);
    __m256i unsignedMax = _mm256_setzero_si256(), rsCount = _mm256_setzero_si256();
    __m256i signedMax = _mm256_set1_epi32(-1), signedMin = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (; end - at >= 4; at += 4) {
        const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
        const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 2));
        const __m256i opsAndStages = _mm256_unpacklo_epi32(first, second);
        const __m256i microbatches = _mm256_unpackhi_epi32(first, second);
        const __m256i op = _mm256_and_si256(opsAndStages, opMask);  // the stages' lanes 0: no kind above 8, no R
        const __m256i other = _mm256_cmpgt_epi32(op, lastWithMicrobatch);
        unsignedMax = _mm256_max_epu32(unsignedMax, opsAndStages);
        signedMax = _mm256_max_epi32(signedMax, microbatches);
        signedMin = _mm256_min_epi32(signedMin, _mm256_andnot_si256(other, microbatches));
        rsCount = _mm256_sub_epi32(rsCount, _mm256_cmpeq_epi32(op, recompute));  // -1 where an R
    }
    alignas(32) std::uint32_t lanes[4][8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[0]), unsignedMax);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[1]), signedMax);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[2]), signedMin);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[3]), rsCount);
    for (int lane : {0, 1, 4, 5}) {
        largestStage = std::max(largestStage, lanes[0][lane + 2]);
        largestMicrobatch = std::max(largestMicrobatch, static_cast<int>(lanes[1][lane]));
        smallestMicrobatch = std::min(smallestMicrobatch, static_cast<int>(lanes[2][lane]));
        rs += lanes[3][lane];
    }
    return at;
}
#endif

}  // namespace

// The census of one device's program: the bounds of its operands and its count of Rs, in a loop
// with no branch. Nothing is indexed by an operand here, so a hostile one is only measured;
// walk() refuses it before any table is.
void SimulationTables::censusDevice(const Plan& plan, std::size_t device, Census& census) {
    const auto& program = plan.devices[device].program;
    const Instruction* at = program.data();
    const Instruction* const end = at + program.size();
    unsigned largestStage = census.largestStage;
    int largestMicrobatch = census.largestMicrobatch, smallestMicrobatch = census.smallestMicrobatch;
    std::size_t rs = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) at = censusWithAvx2(at, end, largestStage, largestMicrobatch, smallestMicrobatch, rs);
#endif
    for (; at != end; ++at) {
        largestStage = std::max(largestStage, static_cast<unsigned>(at->stage));
        largestMicrobatch = std::max(largestMicrobatch, at->microbatch);
        smallestMicrobatch = std::min(smallestMicrobatch, hasMicrobatch(at->op) ? at->microbatch : 0);
        rs += at->op == Op::Recompute;
    }
    recomputes[device] = rs;
    census.largestStage = largestStage;
    census.largestMicrobatch = largestMicrobatch;
    census.smallestMicrobatch = smallestMicrobatch;
}

// A census of the operands, then the tables (issue 45: there were ten walks, then three, then a
// census and a walk over the computations; the computations' marks and sums now come from the
// timing loop, which visits them anyway). Every micro-batch needs at least two instructions, so a
// number beyond the instruction count can only be a typo, and must not turn into a
// multi-gigabyte allocation; the worded walk runs only for a wrong plan (passes simulate
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
    Census census;
    for (std::size_t d = 0; d < deviceCount; ++d) censusDevice(plan, d, census);
    if ((limit > 0 && census.largestStage >= static_cast<unsigned>(stageCount)) | (census.largestMicrobatch >= limit) |
        (census.smallestMicrobatch < 0))
        return operandError(plan, stageCount);
    const int largestMicrobatch = census.largestMicrobatch;  // REDUCE_GRAD's and OPT's numbers too
    const int width = std::max(1, largestMicrobatch + 1);
    const int count = largestMicrobatch + 1;  // Plan::microbatchCount
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
    // The loop reads a forward's mark before it times it, so the Rs are marked first, on the
    // columns the loop reads (its own programs); a plan with none skips the walk.
    checkpointed.assign(static_cast<std::size_t>(cells), 0);
    if (std::any_of(recomputes.begin(), recomputes.end(), [](std::size_t rs) { return rs > 0; }))
        for (std::size_t d = 0; d < deviceCount; ++d) {
            const Instruction* const program = code[d];
            for (std::size_t i = 0, n = plan.devices[d].program.size(); i < n; ++i)
                if (program[i].op == Op::Recompute)
                    checkpointed[static_cast<std::size_t>(program[i].stage) * microbatches + program[i].microbatch] = 1;
        }
    // What the summary's timing loop fills (TimingLoop.h): the Is' marks, and per column its
    // forwards' chain and the device that set it last.
    if (summary) {
        split.assign(checkpointed.size(), 0);
        sums.core_ms.assign(deviceCount, 0.0);
        sums.chain_of_microbatch.assign(static_cast<std::size_t>(microbatches), -1);
        if (topology.chains().size() > 1) sums.chain_set_by.assign(static_cast<std::size_t>(microbatches), -1);
        else sums.chain_set_by.clear();
    }
    statics = staticBytesPerDevice(plan);
    // The sink row after the messages: where a send with no stage to go to writes.
    messageStates.resize(messages.size() + static_cast<std::size_t>(microbatches));
    markUnsent(messageStates.data(), messageStates.size());
    fillMessageSlots();
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
        markUnsent(messageStates.data(), messageStates.size());
    } else {
        for (std::size_t k = 0; k < touchedCount; ++k) markUnsent(&messageStates[touched[k]], 1);
    }
    touchedCount = 0;
    messagesUntracked = false;
}

}  // namespace mario
