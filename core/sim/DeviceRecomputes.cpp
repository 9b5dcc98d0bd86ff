#include "core/sim/DeviceRecomputes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "core/sim/CapacityPacking.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// How many activation sets of `extra` bytes fit in what `room` leaves above `level`.
int fitAbove(double level, double room, double extra, std::size_t count) {
    return static_cast<int>(std::min<double>(std::floor(std::max(0.0, room - level) / extra + 1e-9), count));
}

// Sizes this close are one size: rounding of the same stage's costs.
bool sameSize(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

DeviceRecomputes describeRecomputes(const Plan& plan, const Plan& bare, std::size_t device, double room) {
    const auto& original = plan.devices[device].program;
    const auto& program = bare.devices[device].program;
    std::unordered_map<std::uint64_t, std::size_t> recomputed;  // (stage, mb) -> R's index in original
    for (std::size_t i = 0; i < original.size(); ++i)
        if (original[i].op == Op::Recompute) recomputed[stageMicrobatchKey(original[i])] = i;
    DeviceRecomputes out;
    std::vector<Instruction> memoryProgram;
    std::vector<bool> matched;
    std::unordered_map<std::uint64_t, std::size_t> pending;  // (stage, mb) -> index in rs
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& ins = program[i];
        const auto r = recomputed.find(stageMicrobatchKey(ins));
        if (r != recomputed.end() && ins.op == Op::Forward) {
            const StageCost& c = plan.stages[ins.stage].cost;
            pending[stageMicrobatchKey(ins)] = out.rs.size();
            out.rs.push_back({i, 0, computeMs(plan, original, r->second), memoryProgram.size(), 0,
                              c.activation_bytes - c.checkpoint_bytes, 0});
            matched.push_back(false);
        }
        if (isBackwardStart(ins.op))
            if (auto p = pending.find(stageMicrobatchKey(ins)); p != pending.end()) {
                out.rs[p->second].backward = i;
                out.rs[p->second].memoryTo = memoryProgram.size();
                matched[p->second] = true;
                memoryProgram.push_back({Op::Recompute, ins.stage, ins.microbatch});
                pending.erase(p);
            }
        out.memoryAt.push_back(memoryProgram.size());
        out.ms.push_back(computeMs(bare, program, i));
        memoryProgram.push_back(ins);
    }
    std::size_t kept = 0;
    for (std::size_t k = 0; k < out.rs.size(); ++k)
        if (matched[k]) out.rs[kept++] = out.rs[k];
    out.rs.resize(kept);

    out.workBefore.assign(1, 0.0);
    for (double ms : out.ms) out.workBefore.push_back(out.workBefore.back() + ms);
    out.endingAt.resize(program.size());
    std::vector<double> sizes;  // distinct extras, smallest first
    for (std::size_t k = 0; k < out.rs.size(); ++k) {
        out.endingAt[out.rs[k].backward].push_back(k);
        out.backwards.push_back(out.rs[k].backward);
        sizes.push_back(out.rs[k].extraBytes);
    }
    std::sort(out.backwards.begin(), out.backwards.end());
    out.backwards.erase(std::unique(out.backwards.begin(), out.backwards.end()), out.backwards.end());
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end(), sameSize), sizes.end());
    for (auto& r : out.rs)
        r.size = static_cast<int>(
            std::find_if(sizes.begin(), sizes.end(), [&](double s) { return sameSize(s, r.extraBytes); }) -
            sizes.begin());

    const auto levels = memoryLevels(plan, memoryProgram);
    const std::size_t count = out.rs.size();
    out.capacity.assign(levels.size(), static_cast<int>(count));
    if (std::isfinite(room) && !sizes.empty() && sizes.front() > 0) {
        for (std::size_t p = 0; p < levels.size(); ++p)
            out.capacity[p] = fitAbove(levels[p], room, sizes.front(), count);
        if (sizes.size() > 1 && sizes.size() <= kMostSizes)
            for (double size : sizes) {
                out.capacityBySize.emplace_back(levels.size());
                for (std::size_t p = 0; p < levels.size(); ++p)
                    out.capacityBySize.back()[p] = fitAbove(levels[p], room, size, count);
            }
    }
    // Dropped Rs in order of their end, the order of their backwards (exact: an exchange
    // argument, docs/hide-recompute.md).
    CapacityPacking packing(out.capacity);
    for (std::size_t j : out.backwards)
        for (std::size_t k : out.endingAt[j]) out.droppable += packing.offer(out.rs[k].memoryFrom, out.rs[k].memoryTo);
    return out;
}

}  // namespace mario
