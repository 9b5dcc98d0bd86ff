#pragma once
// The one rule for number option values of both programs (`mario`, `mario-executor`): written
// whole, in range. For an integer "3abc", "1e9", "4.5", " 3", "+3" and "" are not numbers, so a
// typo never runs as some other count; for a decimal "0.5s", "nan", "inf" and "" are not.
#include <charconv>
#include <cmath>
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

// A finite decimal in (low, high]: "0.25", "5", "1e-3".
inline std::optional<double> decimalNumberIn(std::string_view text, double low, double high) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        !(value > low) || value > high)
        return std::nullopt;
    return value;
}

}  // namespace mario
