#pragma once
// Everything the user decided, as one value: where the schedule comes from, which passes
// are on, and the hand edits on top. Undo and redo swap whole states, so nothing the user
// did can be half-undone.
#include <optional>
#include <vector>

#include "model/Config.h"
#include "passes/PassReport.h"
#include "schedule/Plan.h"

namespace mario::gui {

// A drag, remembered by what moved and what it went before (not by indices), so it still
// applies after a pass toggle reshuffles the program.
struct HandEdit {
    int device = 0;
    Instruction moved;
    std::optional<Instruction> before;  // nullopt: to the end of the program
};

struct DocumentState {
    std::optional<Config> config;  // set when the schedule comes from a config
    Plan source;                   // the generated or loaded plan, before passes
    std::vector<PassId> passes;
    std::vector<HandEdit> edits;
};

}  // namespace mario::gui
