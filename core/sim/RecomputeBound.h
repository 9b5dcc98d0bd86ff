#pragma once
// How fast a plan could run if its recomputations were placed perfectly within a memory
// budget: a lower bound on the makespan of every plan that keeps the order of the plan's
// forwards, backwards and transfers on each device and only moves its recomputations (each
// between its own forward and backward) or drops them where the budget holds the forward's
// activations instead. That is the space hide-recompute searches (passes/HideRecompute.cpp),
// so the bound says how much of hide's gap to the no-checkpointing step is the budget's and
// how much is hide's own. docs/hide-recompute.md proves it; the tests check it against
// exhaustive search over R placements on tiny plans.
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/MessageGraph.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

// One stretch of the chain that sets the bound: on `device`, its program from `first` to `last`
// (named by op, stage and micro-batch, so they can be found in a plan whose Rs moved).
struct BoundStretch {
    int device = -1;
    Instruction first, last;
};

struct RecomputeBound {
    double bound_ms = 0;                  // no placement of the Rs within the budget runs faster
    int device = -1;                      // the device where the chain of stretches that sets the bound starts
    std::vector<BoundStretch> stretches;  // that chain, stretch by stretch
    // Per device: at most this many Rs can go (the budget cannot hold more forwards'
    // activations at once, counted exactly over the device's program).
    std::vector<int> droppable;
    std::vector<int> recomputes;  // the Rs each device has now

    // The devices that chain runs through, in order, each once per visit: the devices whose
    // Rs hold the step up (the gradient of Chimera 8 × 32 passes 0 → … → 7 → … → 0).
    std::vector<int> chain() const;

    // A step this close to the bound (0.01%, rounding of summed times) is optimal among the
    // placements the bound covers: the CLI and the window say "reached". The bound is on the
    // step with every device timed alone, as hide times it, so where devices share hardware it
    // is held against that step (SimResult::aloneMakespan), not the contended one.
    bool reachedBy(const SimResult& sim) const { return bound_ms > 0 && sim.aloneMakespan() <= bound_ms * (1 + 1e-4); }
    // How far above the bound the step is, as a fraction (0.05: 5% above).
    double above(const SimResult& sim) const { return sim.aloneMakespan() / bound_ms - 1; }
};

// `budget`: bytes per device (static + dynamic), as hideBudget gives it. Fails when the plan
// does not simulate or deadlocks. Plans with overlapped F/B pairs (overlap_factor > 0) get
// the bound of their forwards and backwards alone, which an overlap can undercut: 0 there.
Result<RecomputeBound> recomputeBound(const Plan& plan, const std::vector<double>& budget);

// The compute instructions of the chain's stretches in `plan` (the plan the bound was taken
// of, or the same with its Rs moved or dropped: hide's result), in chain order, Rs standing
// inside a stretch included: what the window highlights. A stretch whose ends `plan` lacks is
// left out.
std::vector<InstructionRef> chainInstructions(const RecomputeBound& bound, const Plan& plan);

// The chain in words, for the CLI and the window: "device 3", "devices 3 → 2 → 1" (a long
// chain by its first and last three).
std::string chainPhrase(const RecomputeBound& bound);

}  // namespace mario
