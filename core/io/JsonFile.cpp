#include "io/JsonFile.h"

#include <fstream>
#include <sstream>

namespace mario {

Result<nlohmann::json> readJsonFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path + ": cannot open the file");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    try {
        return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based and points just past the offending character.
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return makeError(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": malformed JSON");
    }
}

}  // namespace mario
