#pragma once
// For memory charts of many devices: the upper envelope of their step curves (the highest
// device at every instant), and which devices to draw beside it. Tens of thousands of curves
// are unreadable, and adding one graph each froze the window for over a minute at 65 536
// devices; the envelope keeps every peak in sight with one curve.
#include <vector>

#include "core/sim/SimResult.h"

namespace mario::views {

// `curves[d]` is device d's step curve (each point holds until the next, times ascending).
// The result is a step curve of the maximum over all devices, one point per change.
std::vector<MemoryPoint> upperEnvelope(const std::vector<std::vector<MemoryPoint>>& curves);

// The `count` devices whose curves rise highest, in device order.
std::vector<int> fullestDevices(const std::vector<std::vector<MemoryPoint>>& curves, int count);

}  // namespace mario::views
