#include "ModelSpec.h"

#include <charconv>

namespace mario::exec {

Result<ModelSpec> parseModelSpec(std::string_view text) {
    ModelSpec spec;
    if (text.empty() || text == "tiny") return spec;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view entry = text.substr(start, comma - start);
        start = comma + 1;
        if (entry.empty()) continue;
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos)
            return makeError("--model: entry \"" + std::string(entry) + "\" is not key=value");
        const std::string_view key = entry.substr(0, eq), value = entry.substr(eq + 1);
        int number = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (ec != std::errc() || end != value.data() + value.size() || number <= 0)
            return makeError("--model: \"" + std::string(entry) + "\" needs a positive integer");
        if (key == "layers") spec.layers = number;
        else if (key == "hidden") spec.hidden = number;
        else if (key == "heads") spec.heads = number;
        else if (key == "seq") spec.seq = number;
        else if (key == "vocab") spec.vocab = number;
        else return makeError("--model: unknown key \"" + std::string(key) + "\"");
    }
    if (spec.hidden % spec.heads != 0)
        return makeError("--model: hidden (" + std::to_string(spec.hidden) + ") must be a multiple of heads (" +
                         std::to_string(spec.heads) + ")");
    return spec;
}

std::string describe(const ModelSpec& s) {
    return "layers=" + std::to_string(s.layers) + ",hidden=" + std::to_string(s.hidden) +
           ",heads=" + std::to_string(s.heads) + ",seq=" + std::to_string(s.seq) +
           ",vocab=" + std::to_string(s.vocab);
}

}  // namespace mario::exec
