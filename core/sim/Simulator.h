#pragma once
// The exact simulator of docs/execution-model.md: one compute stream per device, non-blocking sends
// that arrive after latency + bytes/bandwidth, blocking receives. Every instruction starts at
// the max of its device being free and its input having arrived, so the timeline is the
// longest-path solution of the plan's dependency graph (the paper's dynamic programme).
// It runs each device until it blocks on a receive whose data has not been sent, parking the
// device on that message; the send wakes it. Work is O(instructions), no device polling.
#include "core/schedule/Plan.h"
#include "core/sim/CostNames.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

struct SimOptions {
    bool record_memory_curve = false;  // fill DeviceStats::memory
    // The lower bounds (critical chain, pipeline bound) and throughput; a pass that simulates
    // thousands of trials needs only the timeline, the makespan and the peaks.
    bool summary = true;
    // Devices that share hardware stretch each other's compute (StageCost::contention,
    // sim/SharedHardware.h), solved by re-timing the plan until the stretch settles.
    bool contention = true;
    // What the refusals call the plan's costs (an overflow, costs faster than the peak): a
    // config's keys where the plan was built from one; null, the plan's own fields.
    const CostNames* names = nullptr;
    // For the passes' trials: no summary, and every instruction timed alone.
    static SimOptions timelineOnly() {
        SimOptions options;
        options.summary = false;
        options.contention = false;
        return options;
    }
};

class Simulator {
public:
    // Errors only for plans that cannot be interpreted at all (a stage that does not exist,
    // chains that do not cover the stages); a deadlock is a result, with `blocked` filled in.
    static Result<SimResult> run(const Plan& plan, const SimOptions& options = {});
};

}  // namespace mario
