#include "io/PipeliningCsv.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace mario {
namespace {

// What PyTorch's compute_only format can express (plus Mario's R, see the header).
bool exported(Op op) {
    return op == Op::Forward || op == Op::Recompute || op == Op::Backward ||
           op == Op::BackwardInput || op == Op::BackwardWeight;
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
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"')
        cell = trim(cell.substr(1, cell.size() - 2));
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

}  // namespace

std::string toPipeliningCsv(const Plan& plan) {
    int ranks = 0;
    for (const auto& device : plan.devices) ranks = std::max(ranks, device.index + 1);
    std::vector<std::string> lines(static_cast<std::size_t>(ranks));
    for (const auto& device : plan.devices) {
        if (device.index < 0) continue;  // not a rank; a validated plan has none
        std::string& line = lines[static_cast<std::size_t>(device.index)];
        for (const auto& instruction : device.program) {
            if (!exported(instruction.op)) continue;
            if (!line.empty()) line += ',';
            line += toActionString(instruction);
        }
    }
    std::string csv;
    for (const auto& line : lines) {
        csv += line;
        csv += '\n';
    }
    return csv;
}

Result<bool> writePipeliningCsv(const Plan& plan, const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return makeError("cannot open \"" + path + "\" for writing the pipelining CSV");
    out << toPipeliningCsv(plan);
    out.close();
    if (!out) return makeError("cannot write the pipelining CSV to \"" + path + "\"");
    return true;
}

Result<std::vector<std::vector<Instruction>>> parsePipeliningCsv(std::string_view text) {
    constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) text.remove_prefix(kByteOrderMark.size());

    std::vector<std::vector<Instruction>> programs;
    const auto lines = splitLines(text);
    for (std::size_t row = 0; row < lines.size(); ++row) {
        std::vector<Instruction>& program = programs.emplace_back();
        std::string_view rest = lines[row];
        for (std::size_t column = 1;; ++column) {
            const auto comma = rest.find(',');
            const std::string_view cell = unquote(rest.substr(0, comma));
            // PyTorch writes idle slots as empty cells or, via str(None), as "None".
            if (!cell.empty() && cell != "None") {
                auto parsed = parseAction(cell);
                if (!parsed) return makeError(location(row + 1, column) + parsed.error().message);
                if (isCommunication(parsed->op))
                    return makeError(location(row + 1, column) + "\"" + std::string(cell) +
                                     "\" is a communication action; a compute_only CSV holds "
                                     "compute actions only");
                program.push_back(*parsed);
            }
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    return programs;
}

Result<std::vector<std::vector<Instruction>>> readPipeliningCsvFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError("cannot open \"" + path + "\" for reading");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) return makeError("cannot read \"" + path + "\"");
    auto programs = parsePipeliningCsv(text);
    if (!programs) return makeError(path + ": " + programs.error().message);
    return programs;
}

}  // namespace mario
