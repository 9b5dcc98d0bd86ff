#include "views/MemoryChartData.h"

#include <algorithm>

#include "views/MemoryEnvelope.h"

namespace mario::views {

const std::vector<MemoryPoint>& MemoryChartData::curveOf(int drawnIndex) const {
    const int device = drawn[static_cast<std::size_t>(drawnIndex)];
    return device >= 0 ? curves[static_cast<std::size_t>(device)] : envelope;
}

MemoryChartData prepareMemoryChart(const SimResult& result, std::optional<double> budgetBytes, bool budgetIsCard,
                                   int listed) {
    MemoryChartData data;
    data.makespan = result.makespan_ms;
    data.budgetBytes = budgetBytes;
    data.budgetIsCard = budgetIsCard && budgetBytes;
    const int devices = static_cast<int>(result.devices.size());
    data.curves.reserve(result.devices.size());
    data.peaks.reserve(result.devices.size());
    for (int d = 0; d < devices; ++d) {
        const DeviceStats& device = result.devices[static_cast<std::size_t>(d)];
        std::vector<MemoryPoint> curve = device.memory;
        // The last change holds until the step ends; draw it that far.
        if (!curve.empty() && curve.back().time_ms < data.makespan)
            curve.push_back({data.makespan, curve.back().bytes});
        data.curves.push_back(std::move(curve));
        data.peaks.push_back(device.peak_bytes);
        if (device.peak_bytes > data.highestPeak) {
            data.highestPeak = device.peak_bytes;
            data.fullestDevice = d;
        }
        if (budgetBytes && device.peak_bytes > *budgetBytes) {
            ++data.devicesOverBudget;
            if (static_cast<int>(data.overBudget.size()) < listed) data.overBudget.push_back(d);
        }
    }
    if (devices <= MemoryChartData::kCurvesUpTo) {
        for (int d = 0; d < devices; ++d) data.drawn.push_back(d);
    } else {
        data.drawn = fullestDevices(data.curves, MemoryChartData::kFullestDrawn);
        data.envelope = upperEnvelope(data.curves);
        data.drawn.push_back(-1);
    }
    for (int g = 0; g < static_cast<int>(data.drawn.size()); ++g)
        for (const MemoryPoint& p : data.curveOf(g)) data.highestDrawn = std::max(data.highestDrawn, p.bytes);
    data.devicesPerBar = std::max(1, (devices + MemoryChartData::kBarsUpTo - 1) / MemoryChartData::kBarsUpTo);
    for (int first = 0; first < devices; first += data.devicesPerBar) {
        const auto begin = data.peaks.begin() + first;
        data.barPeaks.push_back(*std::max_element(begin, begin + std::min(data.devicesPerBar, devices - first)));
    }
    return data;
}

MemoryChartData prepareMemoryChart(const SimResult& result, const MemoryFit& fit) {
    return prepareMemoryChart(result, fit.budget_bytes, fit.basis == MemoryFit::Basis::Card);
}

}  // namespace mario::views
