#pragma once
// The first steps every command shares: open a config or plan, check it, apply passes.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "CliError.h"
#include "passes/PassReport.h"
#include "schedule/Plan.h"

namespace mario::cli {

struct PreparedPlan {
    Plan plan;
    std::vector<PassId> passes;
    std::vector<PassReport> steps;
    double load_us = 0;    // reading the file and generating the schedule
    double passes_us = 0;
};

// `passes` overrides the file's own selection ("all", "none", "checkpoint,overlap", ...).
// Malformed files and invalid plans give kBadInput, deadlocking plans kDeadlock.
std::variant<PreparedPlan, CliError> preparePlan(const std::string& path, const std::optional<std::string>& passes,
                                                 const std::string& executable);

// Structural errors → kBadInput, deadlock → kDeadlock, with the validator's words.
std::optional<CliError> checkPlan(const Plan& plan, const std::string& path);

}  // namespace mario::cli
