#pragma once
// What a schedule's times mean, and how to write them so a person reads them at a glance.
// Costs from the analytical model or a profile are milliseconds; the unit costs of teaching
// plans (a config's "unit_costs", Figure 2) are abstract time units, and calling them "ms"
// made the window report meaningless things (issue 14: "unit costs are labelled ms").
// Milliseconds are written in the unit the magnitude asks for (µs, ms, s, min: "150 s", not
// "150000 ms"); units are never converted. Qt Core only, so any view or panel can include it
// (the axis ticker that uses it is views/TimeAxis.h).
#include <QString>
#include <cstdint>

namespace mario::views {

enum class TimeBase : std::uint8_t {
    Milliseconds,  // analytical or profiled costs: real time
    Units,         // unit costs: abstract time units, shown as they are
};

// One display unit: how many milliseconds (or time units) it holds and its name.
struct TimeUnit {
    double per = 1;                       // the value of one display unit in the time base (1000 for s)
    QString name = QStringLiteral("ms");  // "µs", "ms", "s", "min" or "units"
    bool operator==(const TimeUnit&) const = default;
};

// The unit an axis showing `spanMs` of time labels its ticks in: the largest one in which
// the span still reads as numbers of a few digits — µs below 1 ms, ms below 2 s (a 1.5 s
// step reads better as 0…1500 ms than as 0…1.5 s), s below 10 min, minutes beyond. Units
// are always "units".
TimeUnit timeUnitForSpan(double spanMs, TimeBase base);

// The unit one value is written in: µs below 1 ms, ms below 1 s, s below 10 min, else min.
TimeUnit timeUnitForValue(double ms, TimeBase base);

// "time (s)", "time (units)": the axis label for a unit.
QString timeAxisLabel(const TimeUnit& unit);

// A duration or an instant for tooltips and summaries, in timeUnitForValue's unit with
// `significant` digits (at least all integer digits, never an exponent), trailing zeros
// dropped: "150 s", "6.03 s", "22 units", "250 µs", "12.5 min", "0 ms".
QString formatDuration(double ms, TimeBase base, int significant = 3);

}  // namespace mario::views
