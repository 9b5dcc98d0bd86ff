#pragma once
// Where each device's step goes: computing, recomputing, or idle — and idle split by where
// it sits, because each place has its own cure. Idle before the first instruction is the
// pipeline's fill (more micro-batches or a shape like interleaving shortens it), idle after
// the last is its drain, and idle in the interior is waiting on a neighbour (what the passes
// and a better order attack). The summary panel shows it per device.
//
// Recomputation that ran while the device would otherwise have waited for a message costs
// nothing: it is reported as hidden, as the simulator counts it per device
// (DeviceStats::recompute_hidden_ms) — a run of recomputations followed by a RECV hides as
// much of itself as lies before the message's arrival.
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

struct DeviceBubbles {
    int device = 0;
    double compute_ms = 0;        // F, B, I, W, REDUCE_GRAD and OPT
    double recompute_ms = 0;      // R
    double idle_before_ms = 0;    // from 0 to the first compute's start (fill)
    double idle_interior_ms = 0;  // between the first compute's start and the last one's end
    double idle_after_ms = 0;     // from the last compute's end to the makespan (drain)
    // The part of recompute_ms that ran while the device would otherwise have waited.
    double recompute_hidden_ms = 0;

    double busyMs() const { return compute_ms + recompute_ms; }
    double idleMs() const { return idle_before_ms + idle_interior_ms + idle_after_ms; }
    // Recomputation that lengthened the device's step.
    double recomputeExposedMs() const { return recompute_ms - recompute_hidden_ms; }
};

// One entry per device of the plan, in order; busy + idle = the makespan on each. Fails for a
// deadlocked result and for a result of another plan. A device that computes nothing is idle
// before for the whole step.
Result<std::vector<DeviceBubbles>> bubbleBreakdown(const Plan& plan, const SimResult& result);

}  // namespace mario
