#include "core/util/OneLineText.h"

#include <cstdint>

namespace mario {
namespace {

std::string hexEscape(const char* prefix, unsigned value) {
    constexpr char kDigits[] = "0123456789ABCDEF";
    std::string text(prefix);
    text += kDigits[(value >> 4) & 0xF];
    text += kDigits[value & 0xF];
    return text;
}

bool continuation(std::string_view text, std::size_t at, unsigned low = 0x80, unsigned high = 0xBF) {
    if (at >= text.size()) return false;
    const auto byte = static_cast<std::uint8_t>(text[at]);
    return byte >= low && byte <= high;
}

// The length of the well-formed UTF-8 sequence at `at` (RFC 3629, table 3-7 of the Unicode
// standard: no overlong forms, no surrogates, nothing above U+10FFFF), or 0 when there is none.
std::size_t sequenceLength(std::string_view text, std::size_t at) {
    const auto lead = static_cast<std::uint8_t>(text[at]);
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return continuation(text, at + 1) ? 2 : 0;
    if (lead >= 0xE0 && lead <= 0xEF) {
        const unsigned low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
        return continuation(text, at + 1, low, high) && continuation(text, at + 2) ? 3 : 0;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        const unsigned low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
        const bool whole =
            continuation(text, at + 1, low, high) && continuation(text, at + 2) && continuation(text, at + 3);
        return whole ? 4 : 0;
    }
    return 0;
}

// The piece of the message that stands for the character at `at`; `length` is how many bytes
// of `text` it stands for.
std::string piece(std::string_view text, std::size_t at, std::size_t& length) {
    const auto byte = static_cast<std::uint8_t>(text[at]);
    length = sequenceLength(text, at);
    if (length == 0) {  // not UTF-8: the byte alone, as Python's repr() shows it
        length = 1;
        return hexEscape("\\x", byte);
    }
    if (length == 1) {
        if (byte == '\r') return "\\r";
        if (byte == '\n') return "\\n";
        if (byte == '\t') return "\\t";
        if (byte < 0x20 || byte == 0x7F) return hexEscape("\\x", byte);
        return std::string(1, static_cast<char>(byte));
    }
    // U+0080..U+009F, the C1 controls, are C2 80..C2 9F: some terminals act on them (CSI).
    if (byte == 0xC2 && static_cast<std::uint8_t>(text[at + 1]) <= 0x9F)
        return hexEscape("\\u00", static_cast<std::uint8_t>(text[at + 1]));
    return std::string(text.substr(at, length));
}

}  // namespace

std::string escapedForMessage(std::string_view text) {
    std::string shown;
    shown.reserve(text.size());
    for (std::size_t at = 0, length = 0; at < text.size(); at += length) shown += piece(text, at, length);
    return shown;
}

std::string quotedForMessage(std::string_view text, std::size_t limit) {
    std::string shown;
    std::size_t fitsWithEllipsis = 0;  // shown's length at the last whole piece that leaves room for "..."
    for (std::size_t at = 0, length = 0; at < text.size(); at += length) {
        const std::string next = piece(text, at, length);
        if (shown.size() + next.size() > limit) {
            shown.resize(fitsWithEllipsis);
            shown += "...";
            break;
        }
        shown += next;
        if (shown.size() + 3 <= limit) fitsWithEllipsis = shown.size();
    }
    return "\"" + shown + "\"";
}

}  // namespace mario
