#include "model/ParallelConfig.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace mario {

std::string_view schemeName(Scheme scheme) {
    switch (scheme) {
        case Scheme::GPipe: return "gpipe";
        case Scheme::OneFOneB: return "1f1b";
        case Scheme::Interleaved: return "interleaved";
        case Scheme::Chimera: return "chimera";
    }
    return "?";
}

std::optional<Scheme> parseScheme(std::string_view text) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "gpipe") return Scheme::GPipe;
    if (lower == "1f1b" || lower == "v") return Scheme::OneFOneB;
    if (lower == "interleaved" || lower == "w") return Scheme::Interleaved;
    if (lower == "chimera" || lower == "x") return Scheme::Chimera;
    return std::nullopt;
}

}  // namespace mario
