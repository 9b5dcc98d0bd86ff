#include "core/schedule/Instruction.h"

#include <array>
#include <charconv>
#include <utility>

#include "core/util/OneLineText.h"

namespace mario {
namespace {

// Longest names first so that "SEND_F" is not read as "S" + junk.
constexpr std::array<std::pair<std::string_view, Op>, 11> kOpNames{{
    {"REDUCE_GRAD", Op::ReduceGrad},
    {"SEND_F", Op::SendForward},
    {"RECV_F", Op::RecvForward},
    {"SEND_B", Op::SendBackward},
    {"RECV_B", Op::RecvBackward},
    {"OPT", Op::Optimizer},
    {"F", Op::Forward},
    {"R", Op::Recompute},
    {"B", Op::Backward},
    {"I", Op::BackwardInput},
    {"W", Op::BackwardWeight},
}};

bool parseNonNegative(std::string_view digits, std::int32_t& out) {
    if (digits.empty()) return false;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && ptr == digits.data() + digits.size() && out >= 0;
}

// The action as the user wrote it, escaped and cut short for a one-line message.
std::string quoted(std::string_view text) { return quotedForMessage(text); }

}  // namespace

std::string_view opName(Op op) {
    for (const auto& [name, value] : kOpNames)
        if (value == op) return name;
    return "?";
}

std::string toActionString(const Instruction& instruction) {
    std::string text = std::to_string(instruction.stage);
    text += opName(instruction.op);
    if (hasMicrobatch(instruction.op)) text += std::to_string(instruction.microbatch);
    return text;
}

Result<Instruction> parseAction(std::string_view text) {
    std::size_t digitsEnd = 0;
    while (digitsEnd < text.size() && text[digitsEnd] >= '0' && text[digitsEnd] <= '9') ++digitsEnd;
    Instruction instruction;
    if (!parseNonNegative(text.substr(0, digitsEnd), instruction.stage))
        return makeError("instruction " + quoted(text) + " does not start with a stage number");
    const std::string_view rest = text.substr(digitsEnd);
    for (const auto& [name, op] : kOpNames) {
        if (rest.substr(0, name.size()) != name) continue;
        const std::string_view tail = rest.substr(name.size());
        instruction.op = op;
        if (!hasMicrobatch(op)) {
            if (!tail.empty()) break;
            instruction.microbatch = -1;
            return instruction;
        }
        if (!parseNonNegative(tail, instruction.microbatch))
            return makeError("instruction " + quoted(text) + " lacks a micro-batch number after " + std::string(name));
        return instruction;
    }
    return makeError("unknown instruction " + quoted(text));
}

std::optional<std::pair<Instruction, Instruction>> overlappedPair(Instruction a, Instruction b) {
    if (b.op == Op::Forward) std::swap(a, b);
    if (a.op != Op::Forward || !canCloseOverlap(b.op)) return std::nullopt;
    a.overlapped = true;
    return std::pair{a, b};
}

std::string toOverlapString(const Instruction& forward, const Instruction& backward) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "(" + std::string.
    std::string text(1, '(');
    text += toActionString(forward);
    text += ';';
    text += toActionString(backward);
    text += ")OVERLAP_F_B";
    return text;
}

Result<std::vector<Instruction>> parseProgramEntry(std::string_view text) {
    if (text.empty() || text.front() != '(') {
        auto single = parseAction(text);
        if (!single) return single.error();
        return std::vector<Instruction>{*single};
    }
    const auto semicolon = text.find(';');
    const auto close = text.find(')');
    if (semicolon == std::string_view::npos || close == std::string_view::npos || semicolon > close ||
        text.substr(close + 1) != "OVERLAP_F_B")
        return makeError("composite " + quoted(text) + " is not of the form (0F7;7B3)OVERLAP_F_B");
    auto first = parseAction(text.substr(1, semicolon - 1));
    if (!first) return makeError("composite " + quoted(text) + ": " + first.error().message);
    auto second = parseAction(text.substr(semicolon + 1, close - semicolon - 1));
    if (!second) return makeError("composite " + quoted(text) + ": " + second.error().message);
    const auto pair = overlappedPair(*first, *second);
    if (!pair)
        return makeError("composite " + quoted(text) + " must overlap one forward (F) with one backward (B or I)");
    return std::vector<Instruction>{pair->first, pair->second};
}

std::optional<std::size_t> overlappedPairAt(const std::vector<Instruction>& program, std::size_t i) {
    auto opens = [&](std::size_t f) {
        return f + 1 < program.size() && program[f].overlapped && program[f].op == Op::Forward &&
               canCloseOverlap(program[f + 1].op);
    };
    if (i < program.size() && opens(i)) return i;
    if (i > 0 && i < program.size() && opens(i - 1)) return i - 1;
    return std::nullopt;
}

std::vector<std::string> toProgramEntries(const std::vector<Instruction>& program) {
    std::vector<std::string> entries;
    entries.reserve(program.size());
    for (std::size_t i = 0; i < program.size(); ++i) {
        if (program[i].overlapped && i + 1 < program.size()) {
            entries.push_back(toOverlapString(program[i], program[i + 1]));
            ++i;
        } else {
            entries.push_back(toActionString(program[i]));
        }
    }
    return entries;
}

}  // namespace mario
