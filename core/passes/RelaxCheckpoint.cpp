// Relax-checkpoint (beyond the paper): keep activations wherever the memory cap allows.
// Works on program order alone: a device's memory is a running sum over its own program
// (docs/execution-model.md), so each candidate is checked in O(window) without simulating.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/passes/Passes.h"
#include "core/passes/Tolerance.h"
#include "core/passes/WindowPeaks.h"
#include "core/schedule/StageMicrobatchTable.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/SimResult.h"

namespace mario {
namespace {

constexpr std::size_t kNoForward = static_cast<std::size_t>(-1);

struct Candidate {
    std::size_t forward = 0, recompute = 0;
    double exposed_ms = 0;  // how much the R delays its backward (0 when hidden in a bubble)
};

// The R delays its backward unless the device then waits for the gradient anyway: a RECV
// between R and B that waited past R's end shows the R was hidden in that wait. A delay within
// rounding of the times compared is none (0).
double exposure(const std::vector<Instruction>& program, const InstructionTimings& timings, std::size_t r) {
    const double duration = timings[r].end - timings[r].start;
    for (std::size_t k = r + 1; k < program.size() && !isCompute(program[k].op); ++k)
        if (isRecv(program[k].op) && clearlyBelow(timings[k].start, timings[k].end)) {
            const double delay = std::clamp(timings[r].end - timings[k].end, 0.0, duration);
            return delay > roundingOf(timings[r].end, timings[k].end) ? delay : 0.0;
        }
    return duration > roundingOf(timings[r].end, timings[r].start) ? duration : 0.0;
}

// Whether dropping the candidate comes within a millionth of `cap` by levels that may differ
// from a fresh sum in their last bits: far more than they can differ (10⁴ moves of 10¹⁰ bytes
// shift a level by about 10⁻² bytes), so a candidate that does not come near does not fit.
bool nearlyFits(const Plan& plan, const std::vector<Instruction>& program, const WindowPeaks& levels,
                const Candidate& candidate, double staticBytes, double cap) {
    const StageCost& c = plan.stages[program[candidate.recompute].stage].cost;
    const double needs = staticBytes + levels.peak(candidate.forward, candidate.recompute) +
                         (c.activation_bytes - c.checkpoint_bytes);
    return needs <= cap + 1e-6 * std::max(std::abs(cap), std::abs(needs));
}

}  // namespace

PassReport relaxCheckpoint(Plan& plan, const std::vector<double>& memoryCaps, const SimResult* timeline,
                           bool exposedOnly) {
    std::vector<const InstructionTimings*> timings;
    if (timeline)
        for (const DeviceStats& device : timeline->devices) timings.push_back(&device.timings);
    return relaxCheckpoint(plan, memoryCaps, timings, exposedOnly);
}

PassReport relaxCheckpoint(Plan& plan, const std::vector<double>& memoryCaps,
                           const std::vector<const InstructionTimings*>& timings, bool exposedOnly,
                           const std::vector<const WindowPeaks*>& knownLevels) {
    PassReport report{PassId::Relax, 0, {}};
    for (std::size_t d = 0; d < plan.devices.size() && d < memoryCaps.size(); ++d) {
        auto& program = plan.devices[d].program;
        const bool timed = timings.size() > d && timings[d] && timings[d]->size() == program.size();
        // Each R's exposure first: hide asks after every round for the Rs that delay their
        // backward, on most devices none does, and the memory levels and forward index of those
        // devices were a fifth of hide's time (issue 45).
        std::vector<Candidate> candidates;
        for (std::size_t r = 0; r < program.size(); ++r) {
            if (program[r].op != Op::Recompute) continue;
            const double exposed = timed ? exposure(program, *timings[d], r) : 0.0;
            if (!exposedOnly || exposed > 0) candidates.push_back({0, r, exposed});
        }
        if (candidates.empty()) continue;
        // Each R's forward (the latest F of its pair before it), in one pass over a table (a
        // backward search per R was most of hide's drops, a hash map's nodes the next most).
        StageMicrobatchTable forwardAt(program, -1);
        std::size_t next = 0;
        for (std::size_t i = 0; i < program.size() && next < candidates.size(); ++i) {
            if (program[i].op == Op::Forward) forwardAt.set(program[i], static_cast<std::int64_t>(i));
            if (i == candidates[next].recompute) {
                const std::int64_t forward = forwardAt.get(program[i]);
                candidates[next].forward = forward < 0 ? kNoForward : static_cast<std::size_t>(forward);
                ++next;
            }
        }
        std::erase_if(candidates, [](const Candidate& candidate) { return candidate.forward == kNoForward; });
        const double staticBytes = staticBytesOf(plan, static_cast<int>(d));
        const WindowPeaks* known = d < knownLevels.size() ? knownLevels[d] : nullptr;
        if (known && known->levels().size() == program.size() &&
            std::none_of(candidates.begin(), candidates.end(), [&](const Candidate& candidate) {
                return nearlyFits(plan, program, *known, candidate, staticBytes, memoryCaps[d]);
            }))
            continue;  // the first drop below would not fit, so none would
        // Dynamic memory right after each instruction.
        WindowPeaks prefix(memoryLevels(plan, program));
        std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            if (a.exposed_ms != b.exposed_ms) return a.exposed_ms > b.exposed_ms;
            return a.recompute - a.forward < b.recompute - b.forward;
        });

        std::vector<std::uint8_t> removed(program.size(), 0);
        bool anyRemoved = false;
        for (const Candidate& candidate : candidates) {
            const StageCost& c = plan.stages[program[candidate.recompute].stage].cost;
            const double extra = c.activation_bytes - c.checkpoint_bytes;
            // Between the F and its R the full activations now stay; after the R nothing changes.
            // A drop that fits the cap exactly fits (Tolerance.h: the sums differ in their last bits).
            const double windowPeak = prefix.peak(candidate.forward, candidate.recompute);
            if (!atMost(staticBytes + windowPeak + extra, memoryCaps[d])) continue;
            prefix.add(candidate.forward, candidate.recompute, extra);
            removed[candidate.recompute] = 1;
            anyRemoved = true;
        }

        if (!anyRemoved) continue;
        std::vector<Instruction> kept;
        kept.reserve(program.size());
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (removed[i]) {
                report.changes.push_back(
                    {ChangeKind::Removed, static_cast<int>(d), program[i], static_cast<int>(i), -1});
                continue;
            }
            kept.push_back(program[i]);
        }
        program = std::move(kept);
    }
    return report;
}

}  // namespace mario
