#include "core/sim/MemoryFit.h"

namespace mario {

MemoryFit memoryFit(const SimResult& result, std::optional<double> limit_bytes) {
    MemoryFit fit;
    fit.limit_bytes = limit_bytes;
    fit.devices = static_cast<int>(result.devices.size());
    bool first = true;
    for (const DeviceStats& device : result.devices) {
        if (first || device.peak_bytes > fit.highest_peak_bytes) {
            fit.highest_peak_bytes = device.peak_bytes;
            fit.fullest_device = device.index;
            first = false;
        }
        fit.devices_over_limit += fit.isOver(device);
    }
    return fit;
}

}  // namespace mario
