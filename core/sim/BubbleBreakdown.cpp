#include "core/sim/BubbleBreakdown.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/sim/MessageGraph.h"

namespace mario {

Result<std::vector<DeviceBubbles>> bubbleBreakdown(const Plan& plan, const SimResult& result) {
    if (result.deadlocked) return makeError("the plan deadlocks: its devices never finish the step");
    // The graph checks that the result belongs to the plan; it also gives each RECV's arrival.
    auto messages = MessageGraph::build(plan, result);
    if (!messages) return messages.error();

    std::vector<DeviceBubbles> devices;
    devices.reserve(plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        const auto& timings = result.devices[d].timings;
        DeviceBubbles bubbles;
        bubbles.device = plan.devices[d].index;
        double first = std::numeric_limits<double>::infinity(), last = 0;
        // The recomputations since the device's last other compute, as the simulator counts
        // them: when the run started, how long it is, how much of it lay before an arrival.
        double runStart = 0, runLength = 0, runHidden = 0;
        auto closeRun = [&] {
            bubbles.recompute_hidden_ms += runHidden;
            runStart = runLength = runHidden = 0;
        };
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const InstructionTiming& t = timings[i];
            if (isRecv(ins.op)) {
                const Message* message = messages->receivedBy({static_cast<int>(d), static_cast<int>(i)});
                if (message && runLength > 0)
                    runHidden = std::max(runHidden, std::clamp(message->arrived_ms - runStart, 0.0, runLength));
                continue;
            }
            if (!isCompute(ins.op)) continue;
            const double duration = t.end - t.start;
            if (ins.op == Op::Recompute) {
                if (runLength == 0) runStart = t.start;
                runLength += duration;
                bubbles.recompute_ms += duration;
            } else {
                closeRun();
                bubbles.compute_ms += duration;
            }
            if (duration > 0) {
                first = std::min(first, t.start);
                last = std::max(last, t.end);
            }
        }
        closeRun();
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
