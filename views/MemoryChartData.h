#pragma once
// What the memory chart draws of one simulation, worked out without touching a widget, so
// the window can prepare it on a worker thread with the schedule: the curves extended to the
// makespan, which of them are drawn (every device, or the fullest few and the envelope of
// all), the peaks (binned to at most kBarsUpTo bars), and the budget they are judged against.
// At 65 536 devices the envelope and the choice of curves took 60 ms and drawing one bar per
// device 100 ms a replot, all on the GUI thread.
#include <optional>
#include <vector>

#include "core/sim/MemoryFit.h"
#include "core/sim/SimResult.h"

namespace mario::views {

struct MemoryChartData {
    // Beyond this many devices the curves chart draws the kFullestDrawn fullest devices and
    // the envelope of all of them (views/MemoryEnvelope.h), not one curve each.
    static constexpr int kCurvesUpTo = 64;
    static constexpr int kFullestDrawn = 8;
    // Beyond this many devices one bar stands for a run of neighbours, at the run's highest
    // peak: bars narrower than a pixel show nothing more and cost a rectangle each.
    static constexpr int kBarsUpTo = 2048;

    double makespan = 0;
    std::optional<double> budgetBytes;  // the limit, or one card's memory when budgetIsCard
    bool budgetIsCard = false;
    // Per device, as simulated (static + dynamic bytes), the last change held to the makespan.
    std::vector<std::vector<MemoryPoint>> curves;
    std::vector<int> drawn;             // the device each curve graph draws; -1: the envelope
    std::vector<MemoryPoint> envelope;  // the highest device at every instant, with many devices
    std::vector<double> peaks;          // per device
    int devicesPerBar = 1;              // neighbours one peak bar stands for
    std::vector<double> barPeaks;       // the highest peak of each bar's devices
    double highestPeak = 0;             // 0 with no devices
    int fullestDevice = 0;
    double highestDrawn = 0;  // the tallest point of the drawn curves
    int devicesOverBudget = 0;
    std::vector<int> overBudget;  // the first few devices over it, in order

    int deviceCount() const { return static_cast<int>(peaks.size()); }
    const std::vector<MemoryPoint>& curveOf(int drawnIndex) const;
};

// `result` simulated with record_memory_curve. `listed`: how many devices over the budget to
// name (the chart's sentence names a dozen).
MemoryChartData prepareMemoryChart(const SimResult& result, std::optional<double> budgetBytes, bool budgetIsCard,
                                   int listed = 13);
// Against what `fit` judged by: the limit, one card's memory, or nothing.
MemoryChartData prepareMemoryChart(const SimResult& result, const MemoryFit& fit);

}  // namespace mario::views
