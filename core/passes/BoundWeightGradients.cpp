// Beyond the paper — bound-w. Zero-bubble schedules defer weight gradients (W) into the
// bubbles; between its I and its W a micro-batch keeps what the weight gradients need
// (weight_grad_bytes), and checkpointing does not shrink that. With checkpointing, the device
// that defers most Ws then peaks far above the others (LLaMA-2 13B, ZB-H1 on 8 devices: 125
// GB against 52 GB for 1F1B). This pass pulls Ws earlier, where a device would otherwise pass
// the budget, and leaves the other deferrals alone.
//
// Memory depends only on program order (sim/ProgramMemory.h), so the pass needs no
// simulation: walk the running sum, and at the first instruction above the budget move the
// oldest pending W (its I ran, its W is still ahead) in front of that instruction, as the
// zero-bubble schedulers' own W queues would run it. Repeat until the device fits or no W is
// pending there.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>

#include "core/passes/Passes.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-6;  // bytes: sums in another order differ in their last bits

// The first instruction whose running sum passes `room`.
std::optional<std::size_t> firstAbove(const std::vector<double>& levels, double room) {
    for (std::size_t i = 0; i < levels.size(); ++i)
        if (levels[i] > room + kSlack) return i;
    return std::nullopt;
}

// The W, after `at`, whose I stands earliest before `at`: the oldest deferral. One scan each
// way, O(program) per move.
std::optional<std::size_t> oldestPendingWeight(const std::vector<Instruction>& program, std::size_t at) {
    std::unordered_map<std::uint64_t, std::size_t> inputAt;
    for (std::size_t i = 0; i < at; ++i)
        if (program[i].op == Op::BackwardInput) inputAt.emplace(stageMicrobatchKey(program[i]), i);
    std::optional<std::size_t> best;
    std::size_t bestInput = std::numeric_limits<std::size_t>::max();
    for (std::size_t j = at + 1; j < program.size(); ++j) {
        if (program[j].op != Op::BackwardWeight) continue;
        const auto input = inputAt.find(stageMicrobatchKey(program[j]));
        if (input != inputAt.end() && input->second < bestInput) {
            bestInput = input->second;
            best = j;
        }
    }
    return best;
}

}  // namespace

PassReport boundWeightGradients(Plan& plan, const std::vector<double>& budget) {
    PassReport report{PassId::BoundW, 0, {}};
    for (auto& device : plan.devices) {
        if (static_cast<std::size_t>(device.index) >= budget.size()) continue;
        auto& program = device.program;
        const double room = budget[device.index] - staticBytesOf(plan, device.index);
        // Each move runs one W earlier and never later again: at most one move per W.
        for (std::size_t moves = 0; moves <= program.size(); ++moves) {
            const auto above = firstAbove(memoryLevels(plan, program), room);
            if (!above) break;
            const auto from = oldestPendingWeight(program, *above);
            if (!from) break;  // nothing deferred holds memory here: Ws cannot help
            // In front of the instruction that passed the budget, but never inside a pair.
            const std::size_t to = overlappedPairAt(program, *above).value_or(*above);
            const Instruction weight = program[*from];
            std::rotate(program.begin() + static_cast<std::ptrdiff_t>(to),
                        program.begin() + static_cast<std::ptrdiff_t>(*from),
                        program.begin() + static_cast<std::ptrdiff_t>(*from + 1));
            report.changes.push_back(
                {ChangeKind::Moved, device.index, weight, static_cast<int>(*from), static_cast<int>(to)});
        }
    }
    return report;
}

}  // namespace mario
