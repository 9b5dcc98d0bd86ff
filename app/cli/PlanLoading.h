#pragma once
// The CLI's side of the session layer: the file and --passes of a command turned into core's
// ScheduleInput and prepared by prepareSchedule(), with failures mapped to exit codes.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "app/cli/CliError.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleInput.h"
#include "core/session/SearchedLayerSplit.h"

namespace mario::cli {

struct PreparedPlan : PreparedSchedule {
    ScheduleInput input;  // what was prepared; input.passes ran (--passes, else the file's own)
    double load_us = 0;   // reading the file and generating the schedule
    // parallel.layer_split = "search": what the search chose with input.passes, and its time (the
    // search's own wall time; part of load_us, which counts it once whether it ran on opening the
    // file or again here with other --passes).
    std::optional<LayerSplitSearch> layer_split_search;
    double search_us = 0;
};

// `passes` overrides the file's own selection ("all", "none", "checkpoint,overlap", ...).
// Malformed files and invalid plans give kBadInput, deadlocking plans kDeadlock. `options`
// says what to simulate (nothing by default).
std::variant<PreparedPlan, CliError> preparePlan(const std::string& path, const std::optional<std::string>& passes,
                                                 const std::string& executable,
                                                 PrepareOptions options = {.simulate = false});

// Structural errors → kBadInput, deadlock → kDeadlock, with the validator's words.
std::optional<CliError> checkPlan(const Plan& plan, const std::string& path);

}  // namespace mario::cli
