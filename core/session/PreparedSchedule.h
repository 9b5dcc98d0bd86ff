#pragma once
// The one path from a user's decisions to a simulated schedule: passes, then hand edits, then
// the simulation (and the source plan's own simulation, for comparison). The CLI's commands,
// the window's document, its compare view and the tuner panel all call prepareSchedule(), so
// they can never disagree on what a schedule is. Pure and thread-safe: the window runs it off
// the GUI thread.
#include <atomic>
#include <optional>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/passes/ReorderBound.h"
#include "core/session/ScheduleInput.h"
#include "core/sim/RecomputeBound.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

struct PrepareOptions {
    bool simulate = true;              // false: passes and edits only (export, validate)
    bool simulate_base = false;        // also simulate the source plan as it came (no memory curves)
    bool record_memory_curve = false;  // memory over time of `result`, for charts
    bool bound_hide = false;           // PreparedSchedule::hide_bound and reorder_bound, when selected
    // Once set, the passes stop at their next safe point and the simulation is skipped: the
    // caller (the window's job, superseded or cancelled) drops whatever comes back. Without it
    // a cancelled job ran its passes to the end: seconds on a big step.
    const std::atomic<bool>* cancel = nullptr;
};

struct PreparedSchedule {
    Plan plan;                                 // after passes and edits
    SimResult result;                          // when PrepareOptions::simulate
    SimResult base;                            // when PrepareOptions::simulate_base
    std::vector<PassReport> steps;             // what each pass step changed
    std::vector<HandEdit> skipped_edits;       // edits that no longer apply to this pass output
    std::optional<RecomputeBound> hide_bound;  // see PassRun::hide_bound
    std::optional<ReorderBound> reorder_bound;  // see PassRun::reorder_bound
    double passes_us = 0;                      // the passes alone
    double total_ms = 0;                       // everything above
};

// Errors: a pass or a simulation failed, or the schedule is too large to compute (memory).
// The input's source plan is expected to be valid (openSchedule() checks files).
Result<PreparedSchedule> prepareSchedule(const ScheduleInput& input, const PrepareOptions& options = {});

}  // namespace mario
