#pragma once
// What a pass changed, so that the GUI can highlight it and the stepper can caption it.
#include <string>
#include <string_view>
#include <vector>

#include "schedule/Instruction.h"

namespace mario {

enum class PassId { Checkpoint, Overlap, Redundancy, Prepose };

std::string_view passName(PassId pass);  // "checkpoint", "overlap", "redundancy", "prepose"

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
    bool changed() const { return !changes.empty(); }
};

}  // namespace mario
