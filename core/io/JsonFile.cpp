#include "core/io/JsonFile.h"

#include "core/io/TextFile.h"

namespace mario {
namespace {

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 3, column 7:
// syntax error while parsing object - unexpected '}'; expected string literal": the part
// after the last " - " (or after the first ": ") says what is wrong; the position we compute.
std::string whatWentWrong(const std::string& what) {
    std::string text = what;
    if (const auto dash = text.rfind(" - "); dash != std::string::npos) text = text.substr(dash + 3);
    else if (const auto bracket = text.find("] "); bracket != std::string::npos) text = text.substr(bracket + 2);
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

Result<nlohmann::json> readJsonFile(const std::string& path) {
    auto read = readTextFile(path);
    if (!read) return read.error();
    const std::string& text = *read;
    // Every exception the library can throw ends here: a parse error, a number too large for a
    // double (out_of_range 406, "1e999"), invalid UTF-8, nesting deeper than the stack allows.
    try {
        return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::parse_error& e) {
        return makeError(path + ":" + lineAndColumn(text, e.byte) + ": malformed JSON: " + whatWentWrong(e.what()));
    } catch (const nlohmann::json::exception& e) {
        return makeError(path + ": malformed JSON: " + whatWentWrong(e.what()));
    } catch (const std::bad_alloc&) {
        return makeError(path + ": malformed JSON: the document does not fit in memory");
    }
}

}  // namespace mario
