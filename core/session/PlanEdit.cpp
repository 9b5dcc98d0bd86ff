#include "core/session/PlanEdit.h"

#include <algorithm>
#include <string>

#include "core/sim/Validator.h"

namespace mario {

namespace {

// The receive a compute instruction waits for and the send that passes its result on.
std::pair<Instruction, Instruction> ownCommunication(const Instruction& ins) {
    const bool forward = ins.op == Op::Forward;
    return {{forward ? Op::RecvForward : Op::RecvBackward, ins.stage, ins.microbatch},
            {forward ? Op::SendForward : Op::SendBackward, ins.stage, ins.microbatch}};
}

}  // namespace

std::pair<int, int> movingGroup(const std::vector<Instruction>& program, int index) {
    const Instruction& ins = program[index];
    if (ins.op != Op::Forward && !isBackwardStart(ins.op)) return {index, index + 1};
    // An overlapped pair moves as one, with the receives before it and the sends after it.
    int first = index, last = index + 1;
    if (const auto pair = overlappedPairAt(program, static_cast<std::size_t>(index))) {
        first = static_cast<int>(*pair);
        last = first + 2;
    }
    std::vector<std::pair<Instruction, Instruction>> own;
    for (int k = first; k < last; ++k) own.push_back(ownCommunication(program[k]));
    auto receives = [&](const Instruction& x) {
        return std::any_of(own.begin(), own.end(), [&](const auto& comm) { return x == comm.first; });
    };
    auto sends = [&](const Instruction& x) {
        return std::any_of(own.begin(), own.end(), [&](const auto& comm) { return x == comm.second; });
    };
    for (std::size_t n = 0; n < own.size() && first > 0 && receives(program[first - 1]); ++n) --first;
    for (std::size_t n = 0; n < own.size() && last < static_cast<int>(program.size()) && sends(program[last]); ++n)
        ++last;
    return {first, last};
}

Result<EditedPlan> moveInstruction(const Plan& plan, const InstructionMove& move) {
    if (move.device < 0 || move.device >= static_cast<int>(plan.devices.size()))
        return makeError("device " + std::to_string(move.device) + " does not exist");
    const auto& program = plan.devices[move.device].program;
    const int size = static_cast<int>(program.size());
    if (move.from_index < 0 || move.from_index >= size || move.before_index < 0 || move.before_index > size)
        return makeError("position out of range on device " + std::to_string(move.device));
    const Instruction moved = program[move.from_index];
    if (!isCompute(moved.op)) return makeError(toActionString(moved) + " is communication; move its compute instead");

    const auto [first, last] = movingGroup(program, move.from_index);
    EditedPlan edited{plan, move.from_index};
    if (move.before_index >= first && move.before_index <= last) return edited;  // dropped onto itself

    std::vector<Instruction> group(program.begin() + first, program.begin() + last);
    std::vector<Instruction> rest;
    rest.reserve(program.size());
    rest.insert(rest.end(), program.begin(), program.begin() + first);
    rest.insert(rest.end(), program.begin() + last, program.end());
    const int insertAt = move.before_index > last ? move.before_index - (last - first) : move.before_index;
    rest.insert(rest.begin() + insertAt, group.begin(), group.end());
    edited.plan.devices[move.device].program = std::move(rest);
    edited.new_index = insertAt + (move.from_index - first);

    const ValidationReport report = Validator::validate(edited.plan);
    if (!report.ok())
        return makeError("moving " + toActionString(moved) + " on device " + std::to_string(move.device) +
                         " is refused: " + report.summary());
    return edited;
}

}  // namespace mario
