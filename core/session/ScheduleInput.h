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

// How many simulations the costly passes may spend (PassManagerOptions); 0: the pass
// manager's own budgets. The tuner caps both (core/tune: Tuner::passEffort); a candidate the
// window opens from the tuner keeps the caps, so that it computes the schedule the tuner
// ranked (GPT-3 13B at 1024 micro-batches: uncapped, prepose ran 415 simulations and hide 4227
// against the tuner's 48 each, and the winner's peak moved by 21 MB).
struct PassEffort {
    int prepose_simulations = 0;
    int hide_simulations = 0;
    int reorder_evaluations = 0;  // instructions reorder's trials may re-time; 0: the pass's default
    bool capped() const { return prepose_simulations > 0 || hide_simulations > 0 || reorder_evaluations > 0; }
    friend bool operator==(const PassEffort&, const PassEffort&) = default;
};

struct ScheduleInput {
    std::optional<Config> config;  // set when the schedule comes from a config
    Plan source;                   // the generated or loaded plan, before passes
    std::vector<PassId> passes;
    std::vector<HandEdit> edits;
    PassEffort effort = {};  // files and the CLI leave it at the defaults
};

}  // namespace mario
