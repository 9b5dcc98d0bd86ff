#pragma once
// The one rule for integer option values of both programs (`mario`, `mario-executor`): a
// decimal integer written whole, in range. "3abc", "1e9", "4.5", " 3", "+3" and "" are not
// numbers, so a typo never runs as some other count.
#include <charconv>
#include <optional>
#include <string_view>

namespace mario {

inline std::optional<long long> wholeNumberIn(std::string_view text, long long min, long long max) {
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
        return std::nullopt;
    return value;
}

}  // namespace mario
