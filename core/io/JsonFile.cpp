#include "core/io/JsonFile.h"

#include "core/io/JsonScan.h"
#include "core/io/TextFile.h"
#include "core/util/OneLineText.h"

namespace mario {
namespace {

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 3, column 7:
// syntax error while parsing object - unexpected '}'; expected string literal": the part
// after the last " - " (or after the first "] ") says what is wrong; the position we compute.
// Its "last read: '…'" may hold bytes that are not UTF-8: escaped, so the message stays one line.
std::string whatWentWrong(const std::string& what) {
    std::string text = what;
    if (const auto dash = text.rfind(" - "); dash != std::string::npos) text = text.substr(dash + 3);
    else if (const auto bracket = text.find("] "); bracket != std::string::npos) text = text.substr(bracket + 2);
    text = escapedForMessage(text);
    if (text.size() > 120) text.replace(117, std::string::npos, "...");
    return text;
}

std::string lineAndColumn(const std::string& text, std::size_t byte) {
    // byte is 1-based and points just past the offending character.
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

Result<nlohmann::json> parseJsonText(const std::string& text, const std::string& name, std::int64_t budgetBytes) {
    const auto named = [&](const std::string& what) { return name.empty() ? what : name + ": " + what; };
    // A text far below the budget cannot reach it (JsonScan.h's kScanFreeRatio), so it is parsed
    // at once, and scanned only to word an error: the scan lexes the whole text a second time,
    // a tenth of `mario simulate`'s whole process on a 26 KB plan (issue 45).
    if (static_cast<std::int64_t>(text.size()) <= budgetBytes / kScanFreeRatio) {
        try {
            return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
        } catch (const nlohmann::json::exception&) {
            // worded below, with its line and column
        } catch (const std::bad_alloc&) {
            return makeError(named("malformed JSON: the document does not fit in memory"));
        }
    }
    // First a pass that builds nothing: the DOM costs up to 33 times the text (empty objects),
    // so whether it fits is decided before it exists, and every error, "1e999" included,
    // gets its line and column.
    const JsonScan scan = scanJson(text, static_cast<std::uint64_t>(budgetBytes));
    if (!scan.error.empty())
        return makeError((name.empty() ? "" : name + ":") + lineAndColumn(text, scan.error_byte) +
                         ": malformed JSON: " + whatWentWrong(scan.error));
    if (scan.over_budget)
        return makeError(named("the JSON would take more than " + std::to_string(budgetBytes >> 20) +
                               " MiB of memory once read (over " + std::to_string(scan.values) +
                               " values); the limit is " + std::to_string(budgetBytes >> 20) + " MiB"));
    // The scan accepted the text, so the parser will too; what it throws all the same (memory
    // the machine does not have) ends here.
    try {
        return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::exception& e) {
        return makeError(named("malformed JSON: " + whatWentWrong(e.what())));
    } catch (const std::bad_alloc&) {
        return makeError(named("malformed JSON: the document does not fit in memory"));
    }
}

Result<nlohmann::json> readJsonFile(const std::string& path) {
    auto read = readTextFile(path);
    if (!read) return read.error();
    return parseJsonText(*read, path);
}

}  // namespace mario
