#include "views/TimeBase.h"

#include <algorithm>
#include <cmath>

namespace mario::views {

namespace {

const TimeUnit kMicroseconds{1e-3, QStringLiteral("\u00b5s")};
const TimeUnit kMilliseconds{1, QStringLiteral("ms")};
const TimeUnit kSeconds{1e3, QStringLiteral("s")};
const TimeUnit kMinutes{60e3, QStringLiteral("min")};
const TimeUnit kUnits{1, QStringLiteral("units")};

// Minutes only from ten on: "150 s" reads better than "2.5 min", and a step of a few
// minutes is rare enough that the seconds it replaces would have five digits.
constexpr double kMinutesFromMs = 600e3;

// Fixed notation with enough decimals for `significant` digits, then trailing zeros dropped.
QString fixed(double value, int significant) {
    if (value == 0 || !std::isfinite(value)) return QString::number(std::isfinite(value) ? 0.0 : value);
    const int integerDigits = static_cast<int>(std::floor(std::log10(std::abs(value)))) + 1;
    const int decimals = std::clamp(significant - integerDigits, 0, 9);
    QString text = QString::number(value, 'f', decimals);
    if (text.contains(QLatin1Char('.'))) {
        while (text.endsWith(QLatin1Char('0'))) text.chop(1);
        if (text.endsWith(QLatin1Char('.'))) text.chop(1);
    }
    if (text == QLatin1String("-0")) text = QStringLiteral("0");
    return text;
}

}  // namespace

TimeUnit timeUnitForSpan(double spanMs, TimeBase base) {
    if (base == TimeBase::Units) return kUnits;
    const double span = std::abs(spanMs);
    if (span >= kMinutesFromMs) return kMinutes;
    if (span >= 2e3) return kSeconds;
    if (span >= 1 || span == 0) return kMilliseconds;
    return kMicroseconds;
}

TimeUnit timeUnitForValue(double ms, TimeBase base) {
    if (base == TimeBase::Units) return kUnits;
    const double magnitude = std::abs(ms);
    if (magnitude >= kMinutesFromMs) return kMinutes;
    if (magnitude >= 1e3) return kSeconds;
    if (magnitude >= 1 || magnitude == 0) return kMilliseconds;
    return kMicroseconds;
}

QString timeAxisLabel(const TimeUnit& unit) { return QStringLiteral("time (%1)").arg(unit.name); }

QString formatDuration(double ms, TimeBase base, int significant) {
    const TimeUnit unit = timeUnitForValue(ms, base);
    return fixed(ms / unit.per, std::max(1, significant)) + QLatin1Char(' ') + unit.name;
}

}  // namespace mario::views
