#include "core/sim/RecomputeBound.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/sim/ComputeTime.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// The sum of the k largest values added so far: at most k of a stretch's Rs leave it, so what
// stays is at least their total less this. (Crediting each leaver at the longest R overstated
// what leaves where a device holds Rs of two lengths, a V's or Chimera's two stages.) A device's
// Rs take one length per stage it holds, so the values are kept as counts of a few distinct
// lengths, longest first: adding and summing cost that few, not a heap's log k (the bound runs
// once per stretch end, ~10⁶ times on LLaMA-3 70B 32 × 128).
class LargestSum {
public:
    explicit LargestSum(int k) : k_(k) {}
    void add(double value) {
        if (k_ <= 0) return;
        auto at = std::find_if(counts_.begin(), counts_.end(), [&](const auto& c) { return c.first <= value; });
        if (at != counts_.end() && at->first == value) ++at->second;
        else counts_.insert(at, {value, 1});
    }
    double sum() const {
        double sum = 0;
        int left = k_;
        for (auto it = counts_.begin(); it != counts_.end() && left > 0; ++it) {
            const int taken = std::min(left, it->second);
            sum += taken * it->first;
            left -= taken;
        }
        return sum;
    }

private:
    int k_;
    std::vector<std::pair<double, int>> counts_;  // distinct values, longest first, with counts
};

struct Recomputation {
    std::size_t forward = 0, backward = 0;  // indices in the program without its Rs
    double ms = 0;
    std::size_t memoryFrom = 0, memoryTo = 0;  // [from, to) in the memory program, see below
    double extraBytes = 0;                     // what keeping the activations instead costs
    bool matched = false;                      // its backward is on the device
};

// How many of the Rs' extra activations fit in what `room` leaves above `level`, each taken at
// `smallest`, the least extra of the device's Rs (positive), so the count can only be too high.
int fitAbove(double level, double room, double smallest, std::size_t count) {
    return static_cast<int>(std::min<double>(std::floor(std::max(0.0, room - level) / smallest + 1e-9), count));
}

// The most Rs of one device that can go at once: dropping one holds its forward's full
// activations from the forward to where its R stood, and the budget caps the sum at every
// point. Counted with every R just before its backward (each kept R then costs the least
// memory) and with each dropped R costing the smallest extra of the device's Rs, so the
// count can only be too high. Earliest end first is exact for intervals under per-point
// capacities (an exchange argument, docs/hide-recompute.md).
int mostDroppable(const std::vector<Recomputation>& rs, const std::vector<double>& levels, double room,
                  double smallest) {
    if (rs.empty()) return 0;
    if (smallest <= 0) return static_cast<int>(rs.size());
    std::vector<int> capacity(levels.size()), load(levels.size(), 0);
    for (std::size_t p = 0; p < levels.size(); ++p) capacity[p] = fitAbove(levels[p], room, smallest, rs.size());
    std::vector<const Recomputation*> byEnd;
    for (const auto& r : rs) byEnd.push_back(&r);
    std::sort(byEnd.begin(), byEnd.end(), [](const Recomputation* a, const Recomputation* b) {
        return a->memoryTo != b->memoryTo ? a->memoryTo < b->memoryTo : a->memoryFrom > b->memoryFrom;
    });
    int count = 0;
    for (const Recomputation* r : byEnd) {
        bool fits = true;
        for (std::size_t p = r->memoryFrom; p < r->memoryTo && fits; ++p) fits = load[p] < capacity[p];
        if (!fits) continue;
        for (std::size_t p = r->memoryFrom; p < r->memoryTo; ++p) ++load[p];
        ++count;
    }
    return count;
}

}  // namespace

Result<RecomputeBound> recomputeBound(const Plan& plan, const std::vector<double>& budget) {
    RecomputeBound out;
    out.droppable.assign(plan.devices.size(), 0);
    out.recomputes.assign(plan.devices.size(), 0);
    if (plan.overlap_factor > 0) return out;
    // Without its Rs the plan's every instruction starts no later than in any plan that adds
    // Rs to it (more work on a device only delays what follows), and the dependencies after an
    // instruction stay at least as long.
    Plan bare = plan;
    for (auto& device : bare.devices)
        std::erase_if(device.program, [](const Instruction& ins) { return ins.op == Op::Recompute; });
    // Its timeline, and per instruction the longest chain of work that must follow its end (its
    // device's later compute, the messages it sends and all they start): whatever else delays
    // a real run only adds to it.
    auto timeline = IncrementalTimeline::build(bare);
    if (!timeline)
        return makeError("recompute bound: the plan without its recomputations: " + timeline.error().message);
    timeline->takeTails();

    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& original = plan.devices[d].program;
        const auto& program = bare.devices[d].program;
        std::unordered_map<std::uint64_t, std::size_t> recomputed;  // (stage, mb) -> R's index in original
        for (std::size_t i = 0; i < original.size(); ++i)
            if (original[i].op == Op::Recompute) recomputed[stageMicrobatchKey(original[i])] = i;
        // The memory program: every R moved to just before its backward.
        std::vector<Instruction> memoryProgram;
        std::vector<Recomputation> rs;
        std::unordered_map<std::uint64_t, std::size_t> pending;  // (stage, mb) -> index in rs
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const auto r = recomputed.find(stageMicrobatchKey(ins));
            if (r != recomputed.end() && ins.op == Op::Forward) {
                const StageCost& c = plan.stages[ins.stage].cost;
                pending[stageMicrobatchKey(ins)] = rs.size();
                rs.push_back({i, 0, computeMs(plan, original, r->second), memoryProgram.size(), 0,
                              c.activation_bytes - c.checkpoint_bytes, false});
            }
            if (isBackwardStart(ins.op)) {
                if (auto p = pending.find(stageMicrobatchKey(ins)); p != pending.end()) {
                    rs[p->second].backward = i;
                    rs[p->second].matched = true;
                    rs[p->second].memoryTo = memoryProgram.size();
                    memoryProgram.push_back({Op::Recompute, ins.stage, ins.microbatch});
                    pending.erase(p);
                }
            }
            memoryProgram.push_back(ins);
        }
        std::erase_if(rs, [](const Recomputation& r) { return !r.matched; });
        out.recomputes[d] = static_cast<int>(rs.size());
        const double room = (d < budget.size() ? budget[d] : INFINITY) - staticBytesOf(plan, static_cast<int>(d));
        const auto levels = memoryLevels(plan, memoryProgram);
        double smallest = INFINITY;
        for (const auto& r : rs) smallest = std::min(smallest, r.extraBytes);
        const int droppable = std::isfinite(room) ? mostDroppable(rs, levels, room, smallest) : out.recomputes[d];
        out.droppable[d] = droppable;
        // Every stretch i..j of the device's program runs one instruction after another, with
        // the Rs whose backward lies in it (i < backward <= j), less those that may run
        // elsewhere: one whose forward lies before i may run before i or go, but either way
        // its forward's full activations are held just before i, where the budget has room
        // for at most `roomBefore[i]` of them; one whose forward lies in the stretch runs in
        // it unless it goes (at most `droppable`). The step is at least i's earliest start,
        // that work, and the path after j.
        std::vector<int> roomBefore(program.size(), static_cast<int>(rs.size()));
        if (std::isfinite(room) && smallest > 0)
            for (std::size_t i = 0, at = 0; i < program.size(); ++i, ++at) {
                if (at < memoryProgram.size() && memoryProgram[at].op == Op::Recompute) ++at;
                const double level = at > 0 ? levels[at - 1] : 0.0;
                roomBefore[i] = fitAbove(level, room, smallest, rs.size());
            }
        std::vector<std::vector<const Recomputation*>> endingAt(program.size());
        for (const auto& r : rs) endingAt[r.backward].push_back(&r);
        const auto& timings = timeline->timings(static_cast<int>(d));
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (!isCompute(program[i].op)) continue;
            double work = 0, before = 0, within = 0;
            LargestSum leaveBefore(roomBefore[i]), leaveWithin(droppable);
            for (std::size_t j = i; j < program.size(); ++j) {
                const double ms = computeMs(bare, program, j);
                work += ms;
                if (j > i)
                    for (const Recomputation* r : endingAt[j]) {
                        if (r->forward < i) {
                            before += r->ms;
                            leaveBefore.add(r->ms);
                        } else {
                            within += r->ms;
                            leaveWithin.add(r->ms);
                        }
                    }
                const double kept =
                    std::max(0.0, before - leaveBefore.sum()) + std::max(0.0, within - leaveWithin.sum());
                const double total = timings[i].start + work + kept + timeline->chainAfter(static_cast<int>(d), j);
                if (total > out.bound_ms) {
                    out.bound_ms = total;
                    out.device = static_cast<int>(d);
                }
            }
        }
    }
    return out;
}

}  // namespace mario
