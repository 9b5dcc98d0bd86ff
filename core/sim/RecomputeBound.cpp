#include "core/sim/RecomputeBound.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/sim/CapacityPacking.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// The lengths of a group of Rs, as counts of a few distinct values, longest first: a device's
// Rs take one length per stage it holds, so adding and summing cost that few, not a heap's
// log k (the bound adds ~10⁸ lengths on LLaMA-3 70B 32 × 128).
class Lengths {
public:
    void add(double value) {
        auto at = std::find_if(counts_.begin(), counts_.end(), [&](const auto& c) { return c.first <= value; });
        if (at != counts_.end() && at->first == value) ++at->second;
        else counts_.insert(at, {value, 1});
    }
    void clear() { counts_.clear(); }
    const std::vector<std::pair<double, int>>& counts() const { return counts_; }

private:
    std::vector<std::pair<double, int>> counts_;  // distinct values, longest first, with counts
};

// The most time `total` leavers can take out of a stretch: at most `fromBefore` of the Rs whose
// forward lies before it, at most `fromWithin` of the others, the longest first. (Crediting
// each leaver at the longest R overstated what leaves where a device holds Rs of two lengths,
// a V's or Chimera's two stages.) Longest first across both groups is optimal under those caps.
double longestLeavers(const Lengths& before, int fromBefore, const Lengths& within, int fromWithin, int total) {
    auto a = before.counts().begin(), b = within.counts().begin();
    const auto aEnd = before.counts().end(), bEnd = within.counts().end();
    int aUsed = 0, bUsed = 0;
    double sum = 0;
    while (total > 0) {
        const bool aOpen = a != aEnd && fromBefore > 0, bOpen = b != bEnd && fromWithin > 0;
        if (!aOpen && !bOpen) break;
        const bool takeA = aOpen && (!bOpen || a->first >= b->first);
        auto& it = takeA ? a : b;
        int& used = takeA ? aUsed : bUsed;
        int& cap = takeA ? fromBefore : fromWithin;
        const int taken = std::min({total, cap, it->second - used});
        sum += taken * it->first;
        total -= taken;
        cap -= taken;
        used += taken;
        if (used == it->second) {
            ++it;
            used = 0;
        }
    }
    return sum;
}

struct Recomputation {
    std::size_t forward = 0, backward = 0;  // indices in the program without its Rs
    double ms = 0;
    std::size_t memoryFrom = 0, memoryTo = 0;  // [from, to) in the memory program, see below
    double extraBytes = 0;                     // what keeping the activations instead costs
    bool matched = false;                      // its backward is on the device
};

// One device of the plan without its Rs, as the bound reads it.
struct DeviceRecomputes {
    std::vector<Recomputation> rs;
    std::vector<std::vector<std::size_t>> endingAt;  // per instruction: the Rs (into rs) it is the backward of
    std::vector<std::size_t> backwards;              // the instructions that are, in program order
    std::vector<double> ms;                          // per instruction: its compute time
    std::vector<double> workBefore;                  // per instruction: the compute before it
    // Per instruction: where it stands in the memory program, the program with every R just
    // before its backward; and per point of the memory program how many forwards' full
    // activations fit above what is held there (each at the device's smallest extra, so never
    // too few).
    std::vector<std::size_t> memoryAt;
    std::vector<int> capacity;
};

// How many of the Rs' extra activations fit in what `room` leaves above `level`, each taken at
// `smallest`, the least extra of the device's Rs (positive), so the count can only be too high.
int fitAbove(double level, double room, double smallest, std::size_t count) {
    return static_cast<int>(std::min<double>(std::floor(std::max(0.0, room - level) / smallest + 1e-9), count));
}

DeviceRecomputes describe(const Plan& plan, const Plan& bare, std::size_t d, double room) {
    const auto& original = plan.devices[d].program;
    const auto& program = bare.devices[d].program;
    std::unordered_map<std::uint64_t, std::size_t> recomputed;  // (stage, mb) -> R's index in original
    for (std::size_t i = 0; i < original.size(); ++i)
        if (original[i].op == Op::Recompute) recomputed[stageMicrobatchKey(original[i])] = i;
    DeviceRecomputes out;
    std::vector<Instruction> memoryProgram;
    std::unordered_map<std::uint64_t, std::size_t> pending;  // (stage, mb) -> index in rs
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& ins = program[i];
        const auto r = recomputed.find(stageMicrobatchKey(ins));
        if (r != recomputed.end() && ins.op == Op::Forward) {
            const StageCost& c = plan.stages[ins.stage].cost;
            pending[stageMicrobatchKey(ins)] = out.rs.size();
            out.rs.push_back({i, 0, computeMs(plan, original, r->second), memoryProgram.size(), 0,
                              c.activation_bytes - c.checkpoint_bytes, false});
        }
        if (isBackwardStart(ins.op))
            if (auto p = pending.find(stageMicrobatchKey(ins)); p != pending.end()) {
                Recomputation& matched = out.rs[p->second];
                matched.backward = i;
                matched.matched = true;
                matched.memoryTo = memoryProgram.size();
                memoryProgram.push_back({Op::Recompute, ins.stage, ins.microbatch});
                pending.erase(p);
            }
        out.memoryAt.push_back(memoryProgram.size());
        out.ms.push_back(computeMs(bare, program, i));
        memoryProgram.push_back(ins);
    }
    std::erase_if(out.rs, [](const Recomputation& r) { return !r.matched; });
    out.workBefore.assign(1, 0.0);
    for (double ms : out.ms) out.workBefore.push_back(out.workBefore.back() + ms);
    out.endingAt.resize(program.size());
    double smallest = INFINITY;
    for (std::size_t k = 0; k < out.rs.size(); ++k) {
        out.endingAt[out.rs[k].backward].push_back(k);
        out.backwards.push_back(out.rs[k].backward);
        smallest = std::min(smallest, out.rs[k].extraBytes);
    }
    std::sort(out.backwards.begin(), out.backwards.end());
    out.backwards.erase(std::unique(out.backwards.begin(), out.backwards.end()), out.backwards.end());
    const bool limited = std::isfinite(room) && smallest > 0;
    const auto levels = memoryLevels(plan, memoryProgram);
    out.capacity.assign(levels.size(), static_cast<int>(out.rs.size()));
    if (limited)
        for (std::size_t p = 0; p < levels.size(); ++p)
            out.capacity[p] = fitAbove(levels[p], room, smallest, out.rs.size());
    return out;
}

// The most Rs of one device that can go at once: dropping one holds its forward's full
// activations from the forward to where its R stood, and the budget caps the sum at every
// point; taken in order of their end (the order of their backwards).
int mostDroppable(const DeviceRecomputes& device) {
    CapacityPacking packing(device.capacity);
    int count = 0;
    for (const auto& ending : device.endingAt)
        for (std::size_t k : ending) count += packing.offer(device.rs[k].memoryFrom, device.rs[k].memoryTo);
    return count;
}

// Where a stretch is bounded on its own: at every compute and receive. (Between them stand
// only sends, which take no time on the device.) Only receives the device waited at in the
// plan without Rs would cost a quarter of the time on LLaMA-3 70B 32 × 128, but a stretch
// from a later start can hold more: from there, an R whose forward came before may leave only
// if the memory just before the start has room for its activations, and a receive that did not
// wait without Rs can wait with them. LLaMA-2 3B zbv 4 × 8 lost 10 ms of its bound that way.
bool startsAStretch(const std::vector<Instruction>& program, std::size_t i) {
    return i == 0 || isCompute(program[i].op) || isRecv(program[i].op);
}

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
    std::vector<CapacityPacking> packings;
    for (std::size_t d = 0; d < devices; ++d) {
        const double room = (d < budget.size() ? budget[d] : INFINITY) - staticBytesOf(plan, static_cast<int>(d));
        described.push_back(describe(plan, bare, d, room));
        out.recomputes[d] = static_cast<int>(described[d].rs.size());
        out.droppable[d] = mostDroppable(described[d]);
        packings.emplace_back(described[d].capacity);
    }

    // Per instruction, the least time from its start to the end of the step (`fromStart`, at
    // the instructions that start a stretch) and from its end through the message it sends
    // (`handedOn`). A stretch i…j of a device's program runs one instruction after another,
    // with the Rs whose backward lies in it (i < backward <= j) less those that may run
    // elsewhere; after j, the message j sends leads on to the receiver's own stretches. Each R
    // counts only in its backward's stretch, so the stretches of one chain never count an R
    // twice. Walking from the end, every receiver's time is known before its sender's.
    std::vector<std::vector<double>> fromStart(devices), handedOn(devices);
    for (std::size_t d = 0; d < devices; ++d) {
        fromStart[d].assign(bare.devices[d].program.size(), 0.0);
        handedOn[d].assign(bare.devices[d].program.size(), 0.0);
    }
    // Between two backwards of Rs what a stretch keeps stays the same, so per such segment only
    // its best end counts: workBefore[j + 1] + handedOn[j] at its largest (`segmentBest`, at
    // the segment's first instruction; `running` gathers it as the walk goes back).
    std::vector<std::vector<double>> segmentBest(devices);
    std::vector<double> running(devices, -INFINITY);
    // Which end each of those is at, and per instruction where its best chain goes on: the
    // receive its chosen stretch hands on to, the next instruction of its device, or nowhere.
    // The chain the bound takes is traced back through them (RecomputeBound::chain).
    struct Hop {
        int device = -1;
        std::size_t index = 0;
    };
    std::vector<std::vector<std::size_t>> segmentEnd(devices);
    std::vector<std::size_t> runningEnd(devices, 0);
    std::vector<std::vector<Hop>> next(devices);
    auto handsOnTo = [&](int d, std::size_t j) {
        const auto to = handedOn[d][j] > 0 ? timeline->handoff(d, j) : std::nullopt;
        return to ? Hop{to->device, to->index} : Hop{};
    };
    std::vector<std::size_t> nextBackward(devices);  // into backwards: the first one after the walk
    for (std::size_t d = 0; d < devices; ++d) nextBackward[d] = described[d].backwards.size();
    for (std::size_t d = 0; d < devices; ++d) {
        segmentBest[d].assign(bare.devices[d].program.size(), 0.0);
        segmentEnd[d].assign(bare.devices[d].program.size(), 0);
        next[d].assign(bare.devices[d].program.size(), Hop{});
    }
    Lengths before, within;
    const bool whole = timeline->walkFromEnd([&](int d, std::size_t i) {
        if (auto to = timeline->handoff(d, i)) handedOn[d][i] = to->ms + fromStart[to->device][to->index];
        const auto& program = bare.devices[d].program;
        const DeviceRecomputes& device = described[d];
        if (device.workBefore[i + 1] + handedOn[d][i] > running[d]) {
            running[d] = device.workBefore[i + 1] + handedOn[d][i];
            runningEnd[d] = i;
        }
        // The stretches from i up to the next backward of an R.
        const double firstSegment = running[d];
        const std::size_t firstEnd = runningEnd[d];
        if (!device.endingAt[i].empty()) {
            segmentBest[d][i] = running[d];
            segmentEnd[d][i] = runningEnd[d];
            running[d] = -INFINITY;
        }
        // Whatever the stretch from here gives, the instruction runs, then what follows it
        // on the device or through its message.
        const double onDevice = i + 1 < program.size() ? fromStart[d][i + 1] : 0.0;
        fromStart[d][i] = device.ms[i] + std::max(handedOn[d][i], onDevice);
        next[d][i] = handedOn[d][i] > onDevice ? handsOnTo(d, i) : i + 1 < program.size() ? Hop{d, i + 1} : Hop{};
        const auto& backwards = device.backwards;
        while (nextBackward[d] > 0 && backwards[nextBackward[d] - 1] > i) --nextBackward[d];
        if (!startsAStretch(program, i)) return;
        CapacityPacking& packing = packings[d];
        packing.clear();
        before.clear();
        within.clear();
        // An R whose forward lies before i may run before i, or be dropped; either way its
        // forward's full activations are held from just before i to its backward. One whose
        // forward lies in the stretch leaves only when dropped, holding them from its forward.
        // At most as many leave as those intervals fit under the memory program's capacities;
        // of the first group, at most what fits just before i, of the second, the droppable.
        const std::size_t beforeI = device.memoryAt[i] > 0 ? device.memoryAt[i] - 1 : 0;
        const int roomBeforeI = device.capacity.empty() ? 0 : device.capacity[beforeI];
        double total = 0, longest = firstSegment;
        std::size_t end = firstEnd;
        int leaving = 0;
        // The first group's intervals all start just before i and end later and later: once
        // one does not fit, none after it does (the packing only fills).
        bool beforeFull = false;
        for (std::size_t b = nextBackward[d]; b < backwards.size(); ++b) {
            const std::size_t j = backwards[b];
            for (std::size_t k : device.endingAt[j]) {
                const Recomputation& r = device.rs[k];
                total += r.ms;
                if (r.forward < i) {
                    before.add(r.ms);
                    const bool fits = !beforeFull && packing.offer(beforeI, r.memoryTo);
                    beforeFull = !fits;
                    leaving += fits;
                } else {
                    within.add(r.ms);
                    leaving += packing.offer(r.memoryFrom, r.memoryTo);
                }
            }
            const double kept =
                std::max(0.0, total - longestLeavers(before, roomBeforeI, within, out.droppable[d], leaving));
            if (kept + segmentBest[d][j] > longest) {
                longest = kept + segmentBest[d][j];
                end = segmentEnd[d][j];
            }
        }
        if (longest - device.workBefore[i] > fromStart[d][i]) {
            fromStart[d][i] = longest - device.workBefore[i];
            next[d][i] = handsOnTo(d, end);
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
            if (from + fromStart[d][i] > out.bound_ms) {
                out.bound_ms = from + fromStart[d][i];
                out.device = static_cast<int>(d);
                first = Hop{static_cast<int>(d), i};
            }
        }
    }
    for (Hop at = first; at.device >= 0; at = next[at.device][at.index])
        if (out.chain.empty() || out.chain.back() != at.device) out.chain.push_back(at.device);
    return out;
}

std::string chainPhrase(const RecomputeBound& bound) {
    if (bound.chain.size() <= 1) return "device " + std::to_string(bound.device);
    std::string text = "devices ";
    const std::size_t n = bound.chain.size();
    for (std::size_t k = 0; k < n; ++k) {
        if (n > 8 && k == 3) {  // a chain through 32 devices and back reads as its ends
            text += "… → ";
            k = n - 4;
            continue;
        }
        text += std::to_string(bound.chain[k]) + (k + 1 < n ? " → " : "");
    }
    return text;
}

}  // namespace mario
