#pragma once
// Everything a user decided about one schedule, as one value: where it comes from, which
// passes run on it and the hand edits on top. The CLI builds one from a file and its flags,
// the window keeps one per undo step; prepareSchedule() turns either into what they show.
#include <optional>
#include <vector>

#include "core/model/Config.h"
#include "core/passes/PassReport.h"
#include "core/schedule/Plan.h"

namespace mario {

// A drag, remembered by what moved and what it went before (not by indices), so it still
// applies after a pass toggle reshuffles the program.
struct HandEdit {
    int device = 0;
    Instruction moved;
    std::optional<Instruction> before;  // nullopt: to the end of the program
};

struct ScheduleInput {
    std::optional<Config> config;  // set when the schedule comes from a config
    Plan source;                   // the generated or loaded plan, before passes
    std::vector<PassId> passes;
    std::vector<HandEdit> edits;
};

}  // namespace mario
