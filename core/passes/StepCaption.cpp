#include "core/passes/StepCaption.h"

#include <cstdio>
#include <optional>

#include "core/schedule/PipelineTopology.h"

namespace mario {
namespace {

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return text;
}

int indexOf(const std::vector<Instruction>& program, const Instruction& ins) {
    for (int i = 0; i < static_cast<int>(program.size()); ++i)
        if (program[i] == ins) return i;
    return -1;
}

// The compute instruction that the device sending R's gradient runs while R runs, if any:
// the overlap made visible.
std::optional<Instruction> partnerOf(const PassChange& change, const Plan& plan, const PipelineTopology& topology,
                                     const SimResult& sim) {
    const int next = topology.nextStage(change.instruction.stage);
    const int at = indexOf(plan.devices[change.device].program, change.instruction);
    if (next < 0 || at < 0) return std::nullopt;
    const int other = topology.deviceOf(next);
    const InstructionTiming& r = sim.devices[change.device].timings[at];
    const auto& program = plan.devices[other].program;
    for (std::size_t i = 0; i < program.size(); ++i) {
        const InstructionTiming& t = sim.devices[other].timings[i];
        if (isCompute(program[i].op) && t.start < r.end && t.end > r.start) return program[i];
    }
    return std::nullopt;
}

// Prefers an R that now runs beside a backward on the next device, as in the paper's Figure 2.
std::string overlapExample(const PassReport& step, const Plan& plan, const SimResult& sim) {
    auto topology = PipelineTopology::build(plan);
    if (!topology || step.changes.empty()) return {};
    const PassChange* chosen = &step.changes.front();
    std::optional<Instruction> partner = partnerOf(*chosen, plan, *topology, sim);
    for (const PassChange& change : step.changes) {
        auto candidate = partnerOf(change, plan, *topology, sim);
        if (candidate && isBackwardStart(candidate->op)) {
            chosen = &change;
            partner = candidate;
            break;
        }
    }
    const std::string who = toActionString(chosen->instruction) + " on device " + std::to_string(chosen->device);
    if (!partner) return ": " + who + " now runs while it waits for its gradient";
    return ": " + who + " now runs while device " + std::to_string(topology->deviceOf(partner->stage)) + " computes " +
           toActionString(*partner);
}

std::string listOf(const PassReport& step, std::size_t most) {
    std::string text;
    for (std::size_t i = 0; i < step.changes.size() && i < most; ++i) {
        if (i) text += i + 1 == std::min(step.changes.size(), most) && step.changes.size() <= most ? " and " : ", ";
        text += toActionString(step.changes[i].instruction) + " on device " + std::to_string(step.changes[i].device);
    }
    if (step.changes.size() > most) text += " and " + std::to_string(step.changes.size() - most) + " more";
    return text;
}

}  // namespace

std::string captionForStep(const PassReport& step, const Plan& after, const SimResult& before,
                           const SimResult& afterSim, const std::string& units) {
    const std::size_t n = step.changes.size();
    const std::string count = std::to_string(n);
    std::string text;
    switch (step.pass) {
        case PassId::Checkpoint:
            text = "Apply-checkpoint keeps only the inputs of " + count +
                   " forwards and recomputes each right before its backward";
            break;
        case PassId::Overlap:
            text = "Overlap-recompute moved " + count + " recomputation" + (n == 1 ? "" : "s") +
                   " ahead of their gradient waits" + overlapExample(step, after, afterSim);
            break;
        case PassId::Redundancy:
            text = "Remove-redundancy dropped " + listOf(step, 3) +
                   ": each followed its own forward directly, so checkpointing saved nothing";
            break;
        case PassId::Prepose:
            text = "Prepose-forward moved " + listOf(step, 3) +
                   " into earlier bubbles, freeing their slots for recomputation";
            break;
        case PassId::Hide: {
            std::size_t moved = 0;
            for (const auto& change : step.changes) moved += change.kind == ChangeKind::Moved;
            const std::size_t dropped = n - moved;
            text = "Hide-recompute looked at each device's whole program: it moved " + std::to_string(moved) +
                   " recomputation" + (moved == 1 ? "" : "s") + " into earlier bubbles and dropped " +
                   std::to_string(dropped) + " whose activations fit in the memory budget";
            break;
        }
        case PassId::Reorder: {
            std::size_t dropped = 0;
            for (const auto& change : step.changes) dropped += change.kind == ChangeKind::Removed;
            text = "Reorder changed the order of its devices' work: it moved " + std::to_string(n - dropped) +
                   " instruction" + (n - dropped == 1 ? "" : "s") + " (forwards, backwards and recomputations) and " +
                   "dropped " + std::to_string(dropped) + " recomputation" + (dropped == 1 ? "" : "s") +
                   " within the memory budget";
            break;
        }
        case PassId::BoundW:
            text = "Bound-w ran " + count + " deferred weight gradient" + (n == 1 ? "" : "s") +
                   " (W) earlier, so that no device holds more than the plan's balanced peak";
            break;
        case PassId::Relax:
            text = "Relax-checkpoint kept the activations of " + listOf(step, 3) +
                   " within the memory limit, so they need no recomputation";
            break;
    }
    text += ". Step " + number(before.makespan_ms) + " → " + number(afterSim.makespan_ms) + " " + units + ".";
    return text;
}

}  // namespace mario
