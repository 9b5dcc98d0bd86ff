#include "core/sim/RecomputeBound.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/sim/DeviceRecomputes.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/StretchLeavers.h"

namespace mario {
namespace {

// Where a stretch is bounded on its own: at the device's first instruction and at every
// receive, where the device may wait for its data. (A stretch from a compute in between starts
// where the one from the receive before it runs on without a pause; on all 80 grid plans
// starting at every compute as well moved no bound, and took twice the time.) Receives that
// did not wait without Rs count too: with Rs they can.
bool startsAStretch(const std::vector<Instruction>& program, std::size_t i) { return i == 0 || isRecv(program[i].op); }

// How many Rs' backwards a stretch reaches past its start, at most: enough for every stretch of
// the grid and of LLaMA-3 70B 32 × 128 (256 Rs a device), while on a device with thousands of
// micro-batches the stretches from its thousands of receives would otherwise each cross all of
// them (1F1B 4 × 2048: 1.5 s). A stretch cut there still goes on through the chain from the
// next start after it, so a long run of kept Rs is counted window by window.
constexpr std::size_t kOffersPerDevice = 1 << 18;
constexpr std::size_t kShortestWindow = 64;

// Where a chain goes on after an instruction: a receive, the device's next instruction, or
// nowhere (device −1). The chain the bound takes is traced through them (RecomputeBound::chain).
struct Hop {
    int device = -1;
    std::size_t index = 0;
};

// What the walk from the end keeps of one device, per instruction.
struct DeviceWalk {
    // The least time from the instruction's start to the end of the step, and from its end
    // through the message it sends.
    std::vector<double> fromStart, handedOn;
    // Between two backwards of Rs what a stretch keeps stays the same, so per such segment
    // only its best end counts: workBefore[j + 1] + handedOn[j] at its largest, kept at the
    // segment's first instruction with the j it is at; `running` gathers it as the walk goes
    // back.
    std::vector<double> segmentBest;
    std::vector<std::size_t> segmentEnd;
    double running = -INFINITY;
    std::size_t runningEnd = 0;
    std::vector<Hop> next;
    std::vector<std::size_t> lastOf;      // the last instruction on this device before `next`
    std::vector<std::size_t> startAfter;  // the first start of a stretch after it (or the end)
    std::size_t nextBackward = 0;         // into DeviceRecomputes::backwards: the first after the walk
    std::size_t window = 0;               // how many backwards a stretch may reach

    DeviceWalk(const std::vector<Instruction>& program, const DeviceRecomputes& device)
        : fromStart(program.size(), 0.0), handedOn(program.size(), 0.0), segmentBest(program.size(), 0.0),
          segmentEnd(program.size(), 0), next(program.size()), lastOf(program.size(), 0),
          startAfter(program.size(), program.size()), nextBackward(device.backwards.size()) {
        std::size_t starts = 0;
        for (std::size_t i = program.size(); i-- > 0;) {
            if (i + 1 < program.size()) startAfter[i] = startsAStretch(program, i + 1) ? i + 1 : startAfter[i + 1];
            starts += startsAStretch(program, i);
        }
        window = std::max(kShortestWindow, kOffersPerDevice / std::max<std::size_t>(1, starts));
    }
};

}  // namespace

Result<RecomputeBound> recomputeBound(const Plan& plan, const std::vector<double>& budget) {
    RecomputeBound out;
    out.droppable.assign(plan.devices.size(), 0);
    out.recomputes.assign(plan.devices.size(), 0);
    if (plan.overlap_factor > 0) return out;
    // Without its Rs the plan's every instruction starts no later than in any plan that adds
    // Rs to it (more work on a device only delays what follows).
    Plan bare = plan;
    for (auto& device : bare.devices)
        std::erase_if(device.program, [](const Instruction& ins) { return ins.op == Op::Recompute; });
    auto timeline = IncrementalTimeline::build(bare);
    if (!timeline)
        return makeError("recompute bound: the plan without its recomputations: " + timeline.error().message);

    const std::size_t devices = plan.devices.size();
    std::vector<DeviceRecomputes> described;
    const std::vector<double> statics = staticBytesPerDevice(plan);
    for (std::size_t d = 0; d < devices; ++d) {
        const double room = (d < budget.size() ? budget[d] : INFINITY) - statics[d];
        described.push_back(describeRecomputes(plan, bare, d, room));
        out.recomputes[d] = static_cast<int>(described[d].rs.size());
        out.droppable[d] = described[d].droppable;
    }
    std::vector<StretchLeavers> leavers;  // after `described` stops growing: they point into it
    for (const auto& device : described) leavers.emplace_back(device);
    std::vector<DeviceWalk> walks;
    for (std::size_t d = 0; d < devices; ++d) walks.emplace_back(bare.devices[d].program, described[d]);
    auto handsOnTo = [&](int d, std::size_t j) {
        const auto to = walks[d].handedOn[j] > 0 ? timeline->handoff(d, j) : std::nullopt;
        return to ? Hop{to->device, to->index} : Hop{};
    };

    // A stretch i…j of a device's program runs one instruction after another, with the Rs whose
    // backward lies in it (i < backward <= j) less those that may run elsewhere; after j, the
    // message j sends leads on to the receiver's own stretches. Each R counts only in its
    // backward's stretch, so the stretches of one chain never count an R twice. Walking from
    // the end, every receiver's time is known before its sender's.
    const bool whole = timeline->walkFromEnd([&](int d, std::size_t i) {
        DeviceWalk& walk = walks[d];
        if (auto to = timeline->handoff(d, i)) walk.handedOn[i] = to->ms + walks[to->device].fromStart[to->index];
        const auto& program = bare.devices[d].program;
        const DeviceRecomputes& device = described[d];
        if (device.workBefore[i + 1] + walk.handedOn[i] > walk.running) {
            walk.running = device.workBefore[i + 1] + walk.handedOn[i];
            walk.runningEnd = i;
        }
        // The stretches from i up to the next backward of an R.
        const double firstSegment = walk.running;
        const std::size_t firstEnd = walk.runningEnd;
        if (!device.endingAt[i].empty()) {
            walk.segmentBest[i] = walk.running;
            walk.segmentEnd[i] = walk.runningEnd;
            walk.running = -INFINITY;
        }
        // Whatever the stretch from here gives, the instruction runs, then what follows it
        // on the device or through its message.
        const double onDevice = i + 1 < program.size() ? walk.fromStart[i + 1] : 0.0;
        walk.fromStart[i] = device.ms[i] + std::max(walk.handedOn[i], onDevice);
        walk.next[i] = walk.handedOn[i] > onDevice ? handsOnTo(d, i) : i + 1 < program.size() ? Hop{d, i + 1} : Hop{};
        walk.lastOf[i] = i;
        const auto& backwards = device.backwards;
        while (walk.nextBackward > 0 && backwards[walk.nextBackward - 1] > i) --walk.nextBackward;
        if (!startsAStretch(program, i)) return;
        // What the Rs whose backward lies in the stretch add to it, less what may leave it.
        StretchLeavers& leaving = leavers[d];
        leaving.start(device.memoryAt[i]);
        // After a stretch that ends at a backward j, what follows is its segment up to the next
        // backward, or the device runs on to the next start after j and its chain from there
        // (the Rs that chain counts have their backwards after that start, so none twice).
        double total = 0, longest = firstSegment;
        Hop then = handsOnTo(d, firstEnd);
        std::size_t thenFrom = firstEnd;
        const std::size_t last = std::min(backwards.size(), walk.nextBackward + walk.window);
        for (std::size_t b = walk.nextBackward; b < last; ++b) {
            const std::size_t j = backwards[b];
            for (std::size_t k : device.endingAt[j]) {
                total += device.rs[k].ms;
                leaving.add(device.rs[k], device.rs[k].forward < i);
            }
            const std::size_t a = walk.startAfter[j];
            const double onward = a < program.size() ? device.workBefore[a] + walk.fromStart[a] : -INFINITY;
            const double after = std::max(walk.segmentBest[j], onward);
            if (total + after <= longest) continue;  // keeping every R would not beat it
            const double kept = std::max(0.0, total - leaving.mostTime());
            if (kept + after > longest) {
                longest = kept + after;
                then = walk.segmentBest[j] >= onward ? handsOnTo(d, walk.segmentEnd[j]) : Hop{d, a};
                thenFrom = walk.segmentBest[j] >= onward ? walk.segmentEnd[j] : a - 1;
            }
        }
        if (longest - device.workBefore[i] > walk.fromStart[i]) {
            walk.fromStart[i] = longest - device.workBefore[i];
            walk.next[i] = then;
            walk.lastOf[i] = thenFrom;
        }
    });
    if (!whole) return makeError("recompute bound: the plan without its recomputations deadlocks");

    Hop first;
    for (std::size_t d = 0; d < devices; ++d) {
        const auto& program = bare.devices[d].program;
        const auto& timings = timeline->timings(static_cast<int>(d));
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (!startsAStretch(program, i)) continue;
            // Everything after a receive runs after it ended; after a compute, after it started.
            const double from = isRecv(program[i].op) ? timings[i].end : timings[i].start;
            if (from + walks[d].fromStart[i] > out.bound_ms) {
                out.bound_ms = from + walks[d].fromStart[i];
                out.device = static_cast<int>(d);
                first = Hop{static_cast<int>(d), i};
            }
        }
    }
    // The chain, stretch by stretch: a hop to the same device's next instruction continues the
    // stretch, a hop to a receive elsewhere (or nowhere) ends it.
    std::size_t from = first.index;
    for (Hop at = first; at.device >= 0;) {
        const DeviceWalk& walk = walks[at.device];
        const Hop to = walk.next[at.index];
        if (to.device == at.device && to.index > at.index) {
            at = to;
            continue;
        }
        const auto& program = bare.devices[at.device].program;
        out.stretches.push_back({at.device, program[from], program[walk.lastOf[at.index]]});
        from = to.index;
        at = to;
    }
    return out;
}

std::vector<InstructionRef> chainInstructions(const RecomputeBound& bound, const Plan& plan) {
    std::vector<InstructionRef> out;
    for (const BoundStretch& stretch : bound.stretches) {
        if (stretch.device < 0 || stretch.device >= static_cast<int>(plan.devices.size())) continue;
        const auto& program = plan.devices[stretch.device].program;
        // Instructions are equal by op, stage and micro-batch: found again wherever the Rs moved.
        const auto first = std::find(program.begin(), program.end(), stretch.first);
        const auto last = std::find(program.begin(), program.end(), stretch.last);
        if (first == program.end() || last == program.end() || last < first) continue;
        for (auto it = first; it <= last; ++it)
            if (isCompute(it->op)) out.push_back({stretch.device, static_cast<int>(it - program.begin())});
    }
    return out;
}

std::vector<int> RecomputeBound::chain() const {
    std::vector<int> devices;
    for (const BoundStretch& stretch : stretches)
        if (devices.empty() || devices.back() != stretch.device) devices.push_back(stretch.device);
    return devices;
}

std::string chainPhrase(const RecomputeBound& bound) {
    const std::vector<int> chain = bound.chain();
    if (chain.size() <= 1) return "device " + std::to_string(bound.device);
    std::string text = "devices ";
    const std::size_t n = chain.size();
    for (std::size_t k = 0; k < n; ++k) {
        if (n > 8 && k == 3) {  // a chain through 32 devices and back reads as its ends
            text += "… → ";
            k = n - 4;
            continue;
        }
        text += std::to_string(chain[k]) + (k + 1 < n ? " → " : "");
    }
    return text;
}

}  // namespace mario
