#pragma once
// A sweep's results as the charts `mario sweep --plot` writes: one line per scheme × pass set
// against the first knob, for one metric, with the memory budget as the limit line on the
// peak chart.
#include <string>
#include <string_view>

#include "core/sweep/Capacity.h"
#include "core/sweep/Sweep.h"
#include "core/sweep/SvgLineChart.h"

namespace mario {

enum class SweepMetric { Throughput, Step, Mfu, Peak };
Result<SweepMetric> parseSweepMetric(std::string_view text);  // "throughput", "step", "mfu", "peak"

// The second knob's first value is charted when there are two; capacity's answers, when given,
// mark the largest fitting point of each line.
SvgLineChart sweepChart(const SweepResult& result, SweepMetric metric, const CapacityResult* capacity = nullptr);

}  // namespace mario
