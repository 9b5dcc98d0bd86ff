#include "core/io/PipeliningCsv.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "core/io/PipeliningLowering.h"
#include "core/io/TextFile.h"
#include "core/model/Limits.h"
#include "core/util/OneLineText.h"

namespace mario {
namespace {

using Kind = PipeliningCsvAction::Kind;

// What PyTorch's compute_only format holds: its compute types F, I, B, W.
bool computeOnlyCell(Op op) {
    return op == Op::Forward || op == Op::Backward || op == Op::BackwardInput || op == Op::BackwardWeight;
}

std::string_view trim(std::string_view text) {
    constexpr std::string_view kSpace = " \t\r\n\f\v";
    const auto begin = text.find_first_not_of(kSpace);
    if (begin == std::string_view::npos) return {};
    const auto end = text.find_last_not_of(kSpace);
    return text.substr(begin, end - begin + 1);
}

// A cell as Python's csv module or a spreadsheet may have written it: `"0F1"` is `0F1`.
// Action strings hold no commas or quotes, so no cell needs real CSV unquoting.
std::string_view unquote(std::string_view cell) {
    cell = trim(cell);
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = trim(cell.substr(1, cell.size() - 2));
    return cell;
}

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t begin = 0;
    while (begin < text.size()) {
        const auto end = text.find('\n', begin);
        if (end == std::string_view::npos) {
            lines.push_back(text.substr(begin));
            break;
        }
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    for (auto& line : lines)
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A file ends in a newline, editors add more; none of those are ranks.
    while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
    return lines;
}

std::string location(std::size_t line, std::size_t column) {
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
}

// A cell may hold a bare carriage return or binary bytes: escaped, so the message stays one line.
std::string quoted(std::string_view text) { return quotedForMessage(text); }

// FSDP's "1UNSHARD" / "1RESHARD": a stage and no micro-batch. Mario's IR has no such
// instruction (they cost nothing here), so they are recognised before parseAction, which
// would read "1RESHARD" as an R lacking its micro-batch.
bool parseFsdp(std::string_view text, PipeliningCsvAction& action) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    const std::string_view type = text.substr(digits);
    if (digits == 0 || (type != "UNSHARD" && type != "RESHARD")) return false;
    std::int32_t stage = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, stage);
    if (ec != std::errc() || ptr != text.data() + digits) return false;
    action.instruction = {Op::Forward, stage, -1};
    action.kind = type == "UNSHARD" ? Kind::Unshard : Kind::Reshard;
    return true;
}

// PyTorch 2.15's waits: "0WAIT_SEND_F3" and "1WAIT_SEND_B3" retire a send (stage and micro-batch),
// "2WAIT_REDUCE_GRAD" a stage's gradient reduction. Recognised before parseAction, which would
// read them as a W with junk. False when `text` is not a wait.
Result<bool> parseWait(std::string_view text, PipeliningCsvAction& action) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    std::string_view rest = text.substr(digits);
    if (digits == 0 || !rest.starts_with("WAIT_")) return false;
    std::int32_t stage = 0;
    if (std::from_chars(text.data(), text.data() + digits, stage).ec != std::errc())
        return makeError(quoted(text) + ": the stage number is out of range");
    if (rest == "WAIT_REDUCE_GRAD") {
        action.instruction = {Op::ReduceGrad, stage, -1};
        action.kind = Kind::Wait;
        return true;
    }
    const bool forward = rest.starts_with("WAIT_SEND_F"), backward = rest.starts_with("WAIT_SEND_B");
    // Both prefixes have the same length; the micro-batch follows.
    const std::string_view number = forward || backward ? rest.substr(11) : std::string_view{};
    std::int32_t microbatch = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), microbatch);
    if (number.empty() || ec != std::errc() || ptr != number.data() + number.size())
        return makeError(quoted(text) + " is not a wait PyTorch writes (WAIT_SEND_F, WAIT_SEND_B with a "
                                        "micro-batch, or WAIT_REDUCE_GRAD)");
    action.instruction = {forward ? Op::SendForward : Op::SendBackward, stage, microbatch};
    action.kind = Kind::Wait;
    return true;
}

// One simple action string; the error is the message after the location.
Result<PipeliningCsvAction> parseSimple(std::string_view text, int column) {
    PipeliningCsvAction action;
    action.column = column;
    if (parseFsdp(text, action)) return action;
    auto wait = parseWait(text, action);
    if (!wait) return wait.error();
    if (*wait) return action;
    if (text.find("OVERLAP_F_B") != std::string_view::npos)
        return makeError(quoted(text) + ": OVERLAP_F_B comes only as a composite, e.g. (0F3;3B1)OVERLAP_F_B");
    auto parsed = parseAction(text);
    if (!parsed) return parsed.error();
    // Refused here, at its cell, rather than after a plan of millions of micro-batches was built
    // and written as a file its readers refuse (a 70 MiB CSV took 18 s and 1.9 GB that way).
    if (hasMicrobatch(parsed->op) && parsed->microbatch >= limits::kMaxMicrobatches)
        return makeError("instruction " + quoted(text) + ": micro-batch " + std::to_string(parsed->microbatch) +
                         "; a step runs at most " + std::to_string(limits::kMaxMicrobatches) + " micro-batches");
    action.instruction = *parsed;
    if (isCommunication(parsed->op)) action.kind = Kind::Communication;
    else if (!hasMicrobatch(parsed->op)) action.kind = Kind::Gradient;
    return action;
}

// PyTorch's composite "(0F3;3B1)OVERLAP_F_B": the parts up to the first ')', separated by
// ';', then the type. Its only composite type is OVERLAP_F_B, whose parts are computations.
// True when the parts became an overlapped pair.
Result<bool> parseComposite(std::string_view cell, int column, std::vector<PipeliningCsvAction>& out) {
    const auto close = cell.find(')');
    const std::string_view type = trim(cell.substr(close + 1));
    if (type != "OVERLAP_F_B")
        return makeError(quoted(cell) + " is a composite of type " + quoted(type) +
                         "; PyTorch's composite is OVERLAP_F_B");
    std::string_view parts = cell.substr(1, close - 1);
    const std::size_t before = out.size();
    while (true) {
        const auto semicolon = parts.find(';');
        const std::string_view part = trim(parts.substr(0, semicolon));
        if (!part.empty()) {
            auto action = parseSimple(part, column);
            if (!action) return makeError(quoted(cell) + ": " + action.error().message);
            if (action->kind != Kind::Compute)
                return makeError(quoted(cell) + " holds " + quoted(part) + "; OVERLAP_F_B overlaps computations only");
            out.push_back(*action);
        }
        if (semicolon == std::string_view::npos) break;
        parts.remove_prefix(semicolon + 1);
    }
    if (out.size() == before) return makeError(quoted(cell) + " overlaps nothing");
    // One forward and one backward make Mario's overlapped pair, forward first; anything
    // else runs part after part, as PyTorch's runtime runs it without an overlap callback.
    if (out.size() - before != 2) return false;
    const auto pair = overlappedPair(out[before].instruction, out[before + 1].instruction);
    if (!pair) return false;
    std::tie(out[before].instruction, out[before + 1].instruction) = *pair;  // both carry the cell's column
    return true;
}

}  // namespace

Result<PipeliningCsvFormat> parsePipeliningCsvFormat(std::string_view name) {
    if (name == "compute_only") return PipeliningCsvFormat::ComputeOnly;
    if (name == "compute_comms") return PipeliningCsvFormat::ComputeComms;
    return makeError("unknown CSV format " + quoted(name) + " (compute_only or compute_comms)");
}

int recomputeCount(const Plan& plan) {
    int count = 0;
    for (const auto& device : plan.devices)
        for (const auto& instruction : device.program) count += instruction.op == Op::Recompute;
    return count;
}

Result<std::string> toPipeliningCsv(const Plan& plan, const PipeliningCsvOptions& options) {
    const auto chains = plan.chains();
    if (chains.size() > 1)
        return makeError("the plan has " + std::to_string(chains.size()) +
                         " stage chains; PyTorch's pipelining runs one chain (stages 0..S-1)");
    for (std::size_t p = 0; p < chains.front().size(); ++p)
        if (chains.front()[p] != static_cast<int>(p))
            return makeError("the plan's chain runs stage " + std::to_string(chains.front()[p]) + " at position " +
                             std::to_string(p) + "; PyTorch's pipelining runs stages 0..S-1 in order");
    if (const int recomputes = recomputeCount(plan); recomputes > 0 && !options.drop_recompute)
        return makeError("the plan recomputes " + std::to_string(recomputes) +
                         (recomputes == 1 ? " forward" : " forwards") +
                         " (R); PyTorch's pipelining has no recompute action");

    int ranks = 0;
    for (const auto& device : plan.devices) ranks = std::max(ranks, device.index + 1);
    ComputeOrder programs(static_cast<std::size_t>(ranks));
    for (const auto& device : plan.devices) {
        if (device.index < 0) continue;  // not a rank; a validated plan has none
        for (const auto& instruction : device.program)
            if (computeOnlyCell(instruction.op))
                programs[static_cast<std::size_t>(device.index)].push_back(instruction);
    }
    std::vector<std::vector<std::string>> rows;
    if (options.format == PipeliningCsvFormat::ComputeComms) {
        std::vector<int> stageRank(plan.stages.size(), -1);
        for (const auto& stage : plan.stages)
            if (stage.index >= 0 && stage.index < static_cast<int>(stageRank.size()))
                stageRank[stage.index] = stage.device;
        auto lowered = lowerLikePyTorch(programs, stageRank, plan.microbatchCount());
        if (!lowered) return lowered.error();
        rows = std::move(*lowered);
    } else {
        for (const auto& program : programs) rows.push_back(toProgramEntries(program));
    }
    std::string csv;
    for (const auto& entries : rows) {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i > 0) csv += ',';
            csv += entries[i];
        }
        csv += '\n';
    }
    return csv;
}

Result<bool> writePipeliningCsv(const Plan& plan, const std::string& path, const PipeliningCsvOptions& options) {
    auto csv = toPipeliningCsv(plan, options);
    if (!csv) return csv.error();
    return writeTextFile(path, *csv, "the pipelining CSV");
}

std::string PipeliningCsvAction::text() const {
    switch (kind) {
        case Kind::Unshard: return std::to_string(instruction.stage) + "UNSHARD";
        case Kind::Reshard: return std::to_string(instruction.stage) + "RESHARD";
        case Kind::Wait:
            if (instruction.op == Op::ReduceGrad) return std::to_string(instruction.stage) + "WAIT_REDUCE_GRAD";
            return std::to_string(instruction.stage) +
                   (instruction.op == Op::SendForward ? "WAIT_SEND_F" : "WAIT_SEND_B") +
                   std::to_string(instruction.microbatch);
        default: return toActionString(instruction);
    }
}

int PipeliningCsv::count(PipeliningCsvAction::Kind kind) const {
    int total = 0;
    for (const auto& rank : ranks)
        total +=
            static_cast<int>(std::count_if(rank.begin(), rank.end(), [&](const auto& a) { return a.kind == kind; }));
    return total;
}

ComputeOrder PipeliningCsv::computeOrder() const {
    ComputeOrder order(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r)
        for (const auto& action : ranks[r])
            if (action.kind == Kind::Compute) order[r].push_back(action.instruction);
    return order;
}

Result<PipeliningCsv> parsePipeliningCsv(std::string_view text) {
    constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) text.remove_prefix(kByteOrderMark.size());

    PipeliningCsv csv;
    const auto lines = splitLines(text);
    if (lines.size() > static_cast<std::size_t>(limits::kMaxPipelineDevices))
        return makeError(std::to_string(lines.size()) + " lines (ranks); the limit is " +
                         std::to_string(limits::kMaxPipelineDevices) + " pipeline devices");
    std::int64_t actionsSoFar = 0;
    for (std::size_t row = 0; row < lines.size(); ++row) {
        if (row > 0) actionsSoFar += static_cast<std::int64_t>(csv.ranks.back().size());
        if (actionsSoFar > limits::kMaxInstructions)
            return makeError("line " + std::to_string(row) + ": more than " + std::to_string(limits::kMaxInstructions) +
                             " actions so far; a plan holds at most " + std::to_string(limits::kMaxInstructions) +
                             " instructions");
        auto& actions = csv.ranks.emplace_back();
        std::string_view rest = lines[row];
        for (int column = 1;; ++column) {
            const auto comma = rest.find(',');
            const std::string_view cell = unquote(rest.substr(0, comma));
            // PyTorch writes idle slots as empty cells; "None" is str(None) from other tools.
            if (!cell.empty() && cell != "None") {
                if (cell.front() == '(' && cell.find(')') != std::string_view::npos) {
                    auto paired = parseComposite(cell, column, actions);
                    if (!paired) return makeError(location(row + 1, column) + paired.error().message);
                    ++(*paired ? csv.overlap_cells : csv.unpaired_overlap_cells);
                } else {
                    auto action = parseSimple(cell, column);
                    if (!action) return makeError(location(row + 1, column) + action.error().message);
                    actions.push_back(*action);
                }
            }
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    return csv;
}

Result<PipeliningCsv> readPipeliningCsvFile(const std::string& path) {
    auto text = readTextFile(path);
    if (!text) return text.error();
    auto csv = parsePipeliningCsv(*text);
    if (!csv) return makeError(path + ": " + csv.error().message);
    return csv;
}

}  // namespace mario
