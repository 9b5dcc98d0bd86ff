#pragma once
// What a pass changed, so that the GUI can highlight it and the stepper can caption it.
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule/Instruction.h"

namespace mario {

// The paper's four passes, then this project's three beyond the paper: Relax drops the
// recomputations that the memory limit does not need; BoundW runs deferred weight gradients
// earlier where they would lift a device above the plan's balanced peak; Hide places every
// recomputation where it costs least on its device (and drops those the memory budget allows);
// Reorder changes each device's order of F, B, I, W and R within hide's budget (ReorderSchedule.h).
enum class PassId { Checkpoint, Overlap, Redundancy, Prepose, Relax, BoundW, Hide, Reorder };

// "checkpoint", "overlap", "redundancy", "prepose", "relax", "bound-w", "hide"
std::string_view passName(PassId pass);

enum class ChangeKind { Inserted, Removed, Moved };

struct PassChange {
    ChangeKind kind = ChangeKind::Moved;
    int device = 0;
    Instruction instruction;
    int from_index = -1;  // position before the change (Removed, Moved)
    int to_index = -1;    // position after the change (Inserted, Moved)
};

struct PassReport {
    PassId pass = PassId::Checkpoint;
    int round = 0;  // which fixed-point round of the pass manager
    std::vector<PassChange> changes;
    int simulations = 0;  // how many simulations the pass ran to decide (prepose-forward)
    // Instructions those trials re-timed (prepose-forward: its incremental timeline's work).
    long long evaluations = 0;
    bool changed() const { return !changes.empty(); }
};

}  // namespace mario
