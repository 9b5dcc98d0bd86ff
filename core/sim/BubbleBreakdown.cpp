#include "core/sim/BubbleBreakdown.h"

#include <algorithm>
#include <limits>
#include <string>

namespace mario {

Result<std::vector<DeviceBubbles>> bubbleBreakdown(const Plan& plan, const SimResult& result) {
    if (result.deadlocked) return makeError("the plan deadlocks: its devices never finish the step");
    if (result.devices.size() != plan.devices.size())
        return makeError("the simulation is of another plan (" + std::to_string(result.devices.size()) +
                         " devices, the plan has " + std::to_string(plan.devices.size()) + ")");

    std::vector<DeviceBubbles> devices;
    devices.reserve(plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        const DeviceStats& stats = result.devices[d];
        if (stats.timings.size() != program.size())
            return makeError("the simulation is of another plan (device " + std::to_string(d) + ")");
        // The recompute totals are the simulator's, so the breakdown and the summary's
        // "recompute hidden" can never disagree; only fill and drain are found here.
        DeviceBubbles bubbles;
        bubbles.device = plan.devices[d].index;
        bubbles.recompute_ms = stats.recompute_ms;
        bubbles.recompute_hidden_ms = stats.recompute_hidden_ms;
        bubbles.compute_ms = stats.busy_ms - stats.recompute_ms;
        double first = std::numeric_limits<double>::infinity(), last = 0;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const InstructionTiming& t = stats.timings[i];
            if (!isCompute(program[i].op) || !(t.end > t.start)) continue;
            first = std::min(first, t.start);
            last = std::max(last, t.end);
        }
        if (first > last) {  // nothing computed: the whole step is idle
            bubbles.idle_before_ms = result.makespan_ms;
        } else {
            bubbles.idle_before_ms = first;
            bubbles.idle_after_ms = std::max(0.0, result.makespan_ms - last);
            bubbles.idle_interior_ms = std::max(0.0, (last - first) - bubbles.busyMs());
        }
        devices.push_back(bubbles);
    }
    return devices;
}

}  // namespace mario
