#pragma once
// Does a simulated schedule fit its memory limit, and where is it tightest? The CLI's memory
// line, the window's summary and compare view and the tuner's feasibility all read these
// values, so "highest peak" and "devices over the limit" mean one thing everywhere.
#include <optional>

#include "core/sim/SimResult.h"

namespace mario {

struct MemoryFit {
    double highest_peak_bytes = 0;  // of the fullest device (0 with no devices)
    int fullest_device = 0;         // its index; the first one on ties
    int devices = 0;
    int devices_over_limit = 0;  // 0 without a limit
    std::optional<double> limit_bytes;
    bool fits() const { return devices_over_limit == 0; }
    bool isOver(const DeviceStats& device) const { return limit_bytes && device.peak_bytes > *limit_bytes; }
};

MemoryFit memoryFit(const SimResult& result, std::optional<double> limit_bytes);

}  // namespace mario
