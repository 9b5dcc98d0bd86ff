#include "executor/ModelSpec.h"

#include <charconv>

namespace mario::exec {

Result<ModelSpec> parseModelSpec(std::string_view text) {
    ModelSpec spec;
    std::size_t start = 0;
    bool first = true;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view entry = text.substr(start, comma - start);
        start = comma + 1;
        if (entry.empty()) continue;
        const bool wasFirst = first;
        first = false;
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos) {
            const bool preset = entry == "tiny" || entry == "tiny-llama";
            if (preset && wasFirst) {
                if (entry == "tiny-llama") spec.flavor = "llama";
                continue;
            }
            return makeError("--model: entry \"" + std::string(entry) + "\"" +
                             (preset ? " is a preset and must come first" : " is not key=value"));
        }
        const std::string_view key = entry.substr(0, eq), value = entry.substr(eq + 1);
        if (key == "flavor" || key == "flavour") {
            if (value != "gpt" && value != "llama")
                return makeError("--model: \"" + std::string(entry) + "\" needs gpt or llama");
            spec.flavor = std::string(value);
            continue;
        }
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
    // Rotary embeddings turn pairs of head dimensions.
    if (spec.flavor == "llama" && (spec.hidden / spec.heads) % 2 != 0)
        return makeError(
            "--model: flavor=llama needs an even head size, hidden/heads = " + std::to_string(spec.hidden) + "/" +
            std::to_string(spec.heads) + " = " + std::to_string(spec.hidden / spec.heads));
    return spec;
}

std::string describe(const ModelSpec& s) {
    return "layers=" + std::to_string(s.layers) + ",hidden=" + std::to_string(s.hidden) +
           ",heads=" + std::to_string(s.heads) + ",seq=" + std::to_string(s.seq) + ",vocab=" + std::to_string(s.vocab) +
           (s.flavor == "gpt" ? "" : ",flavor=" + s.flavor);
}

int llamaFfnSize(int hidden) {
    const int width = 2 * (4 * hidden) / 3;
    return (width + 7) / 8 * 8;
}

}  // namespace mario::exec
