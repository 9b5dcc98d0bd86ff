#include "core/session/HandEdits.h"

#include <algorithm>

#include "core/session/PlanEdit.h"

namespace mario {

int findInstruction(const std::vector<Instruction>& program, const Instruction& instruction) {
    const auto it = std::find(program.begin(), program.end(), instruction);
    return it == program.end() ? -1 : static_cast<int>(it - program.begin());
}

int dropInsertionIndex(const Plan& plan, const SimResult& result, int device, int programIndex, double dropTimeMs) {
    const auto& program = plan.devices[device].program;
    const auto& timings = result.devices[device].timings;
    const auto [first, last] = movingGroup(program, programIndex);
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        // Compared by centres: the window draws the dragged box centred on the cursor, so a drop
        // on the left half of a box lands before it and on its right half after it, where the
        // ghost shows it. Starts put a drop anywhere on a box after it (issue 39).
        const double centre = (timings[i].start + timings[i].end) / 2;
        if ((i >= first && i < last) || !isCompute(program[i].op) || centre < dropTimeMs) continue;
        return movingGroup(program, i).first;
    }
    return static_cast<int>(program.size());
}

Result<std::optional<HandEdit>> editForDrop(const Plan& plan, const SimResult& result, int device, int programIndex,
                                            double dropTimeMs) {
    if (device < 0 || device >= static_cast<int>(plan.devices.size()) ||
        device >= static_cast<int>(result.devices.size()))
        return makeError("no device " + std::to_string(device) + " in this schedule");
    const auto& program = plan.devices[device].program;
    if (programIndex < 0 || programIndex >= static_cast<int>(program.size()))
        return makeError("no instruction " + std::to_string(programIndex) + " on device " + std::to_string(device));
    const int before = dropInsertionIndex(plan, result, device, programIndex, dropTimeMs);
    auto edited = moveInstruction(plan, {device, programIndex, before});
    if (!edited) return edited.error();
    if (edited->new_index == programIndex) return std::optional<HandEdit>{};
    HandEdit edit{device, program[programIndex], std::nullopt};
    if (before < static_cast<int>(program.size())) edit.before = program[before];
    return std::optional<HandEdit>{edit};
}

std::vector<HandEdit> applyHandEdits(Plan& plan, const std::vector<HandEdit>& edits) {
    std::vector<HandEdit> skipped;
    for (const HandEdit& edit : edits) {
        if (edit.device < 0 || edit.device >= static_cast<int>(plan.devices.size())) {
            skipped.push_back(edit);
            continue;
        }
        const auto& program = plan.devices[edit.device].program;
        const int from = findInstruction(program, edit.moved);
        const int before = edit.before ? findInstruction(program, *edit.before) : static_cast<int>(program.size());
        if (from < 0 || before < 0) {
            skipped.push_back(edit);
            continue;
        }
        auto edited = moveInstruction(plan, {edit.device, from, before});
        if (!edited) {
            skipped.push_back(edit);
            continue;
        }
        plan = std::move(edited->plan);
    }
    return skipped;
}

}  // namespace mario
