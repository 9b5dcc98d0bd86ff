// The three passes that need no timing: apply-checkpoint, overlap-recompute,
// remove-redundancy. Each is one linear sweep per device program.
#include <unordered_set>

#include "core/passes/Passes.h"

namespace mario {

PassReport applyCheckpoint(Plan& plan) {
    PassReport report{PassId::Checkpoint, 0, {}};
    for (auto& device : plan.devices) {
        std::unordered_set<std::uint64_t> forwarded, recomputed;
        for (const auto& ins : device.program) {
            if (ins.op == Op::Forward) forwarded.insert(stageMicrobatchKey(ins));
            if (ins.op == Op::Recompute) recomputed.insert(stageMicrobatchKey(ins));
        }
        std::vector<Instruction> program;
        program.reserve(device.program.size() + forwarded.size());
        for (const auto& ins : device.program) {
            const auto key = stageMicrobatchKey(ins);
            if (isBackwardStart(ins.op) && forwarded.count(key) && !recomputed.count(key)) {
                const Instruction recompute{Op::Recompute, ins.stage, ins.microbatch};
                // The backward of an overlapped pair: the recomputation goes before the pair.
                const bool closesPair = !program.empty() && program.back().overlapped;
                const std::size_t at = program.size() - (closesPair ? 1 : 0);
                report.changes.push_back({ChangeKind::Inserted, device.index, recompute, -1, static_cast<int>(at)});
                program.insert(program.begin() + static_cast<std::ptrdiff_t>(at), recompute);
                recomputed.insert(key);
            }
            program.push_back(ins);
        }
        device.program = std::move(program);
    }
    return report;
}

PassReport overlapRecompute(Plan& plan) {
    PassReport report{PassId::Overlap, 0, {}};
    for (auto& device : plan.devices) {
        auto& program = device.program;
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (program[i].op != Op::Recompute) continue;
            std::size_t at = i;
            while (at > 0 && isRecv(program[at - 1].op)) {
                std::swap(program[at - 1], program[at]);
                --at;
            }
            if (at != i)
                report.changes.push_back(
                    {ChangeKind::Moved, device.index, program[at], static_cast<int>(i), static_cast<int>(at)});
        }
    }
    return report;
}

PassReport removeRedundancy(Plan& plan) {
    PassReport report{PassId::Redundancy, 0, {}};
    for (auto& device : plan.devices) {
        std::vector<Instruction> program;
        program.reserve(device.program.size());
        for (std::size_t i = 0; i < device.program.size(); ++i) {
            const Instruction& ins = device.program[i];
            if (ins.op == Op::Recompute) {
                std::size_t back = program.size();
                while (back > 0 && isCommunication(program[back - 1].op)) --back;
                if (back > 0 && program[back - 1] == Instruction{Op::Forward, ins.stage, ins.microbatch}) {
                    report.changes.push_back({ChangeKind::Removed, device.index, ins, static_cast<int>(i), -1});
                    continue;
                }
            }
            program.push_back(ins);
        }
        device.program = std::move(program);
    }
    return report;
}

}  // namespace mario
