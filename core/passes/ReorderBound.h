#pragma once
// A bound for reorder's space (issue 43, item 4): no order of each device's F, B (or I and W)
// and R, no choice of which forwards keep their activations and no place of the Rs within the
// memory budget runs faster than `bound_ms`. RecomputeBound (core/sim) bounds hide's space,
// where each device keeps its order; this one lets the order go and keeps only the budget.
//
// What it combines (docs/reorder.md#the-bound-proves it):
// - the exact search's root bound (ExactSchedule.h): every operation released no earlier than
//   its inputs allow, the one-machine relaxation per device;
// - memory held over time, per device: a forward that keeps its activations holds them at least
//   from its start until its backward can start — its own time plus the shortest chain of work
//   the micro-batch must cross in between (the later stages' forwards and backwards and their
//   transfers). A checkpointed forward holds its checkpoint as long and its whole activations
//   from its R's start, at least the R's time. The device's level never passes its room (budget
//   less static bytes), so all these holds together fit within room × the device's active span;
//   and the span holds the device's work plus every R it runs. The least span that meets both —
//   a fractional knapsack over which forwards to checkpoint, solved exactly by bisection on the
//   span — plus the least head before the device can start and the least tail after it ends.
//   Memory is weighed in bytes and by dual-feasible functions that count the sets that fit
//   together (ReorderBound.cpp); each weighing gives a bound, the largest is kept;
// - a warm-up term per device: before its j-th backward it holds whole only what fits its
//   room, so the forwards beyond that (or their Rs) run after that backward, which starts no
//   earlier than the j-th earliest release of its backwards.
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct ReorderBound {
    double bound_ms = 0;  // no schedule of the space runs faster
    double order_ms = 0;  // the part without memory: the exact search's root bound
    int device = -1;      // the device whose memory or warm-up term sets the bound (-1: order_ms does)
    // Per device: the least work its budget forces (ms: the memory term's recomputation, or what
    // the room adds to the warm-up term where that is larger), and the bound its own terms give.
    std::vector<double> forced_recompute_ms;
    std::vector<double> device_ms;

    // A step this close (0.01%, rounding of summed times) is optimal in the space.
    bool reachedBy(double makespan) const { return bound_ms > 0 && makespan <= bound_ms * (1 + 1e-4); }
    double above(double makespan) const { return makespan / bound_ms - 1; }
};

// `budget[d]`: device d's memory budget in bytes, static bytes included (hideBudget in
// PassManager.h). Errors for plans the exact search does not model (overlapped pairs, compute
// that takes no time: ScheduleProblem::fromPlan).
Result<ReorderBound> reorderBound(const Plan& plan, const std::vector<double>& budget);

}  // namespace mario
