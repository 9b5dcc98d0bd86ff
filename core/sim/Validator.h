#pragma once
// Checks that a plan is executable (docs/execution-model.md): every (stage, micro-batch) has its F and
// B (or I and W) on the owning device, R stands between them, every SEND has its RECV and
// each sits on the right side of its compute, and the whole thing does not deadlock.
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/CostNames.h"
#include "core/sim/SimResult.h"

namespace mario {

struct PlanIssue {
    std::string path;     // JSON path into the plan file, e.g. "devices[1].program[7]"
    std::string message;  // what is wrong there
    std::string text() const { return path.empty() ? message : path + ": " + message; }
};

struct ValidationReport {
    std::vector<PlanIssue> issues;        // structural problems
    std::vector<BlockedDevice> deadlock;  // non-empty when the plan deadlocks
    bool ok() const { return issues.empty() && deadlock.empty(); }
    // The first problem in one line (for the CLI and the status bar).
    std::string summary() const;
};

class Validator {
public:
    // Structural checks, then (when they pass) a simulation for deadlocks. `names` say the
    // costs as the user wrote them in the refusals of their values (null: the plan's fields).
    static ValidationReport validate(const Plan& plan, const CostNames* names = nullptr);
    static std::vector<PlanIssue> checkStructure(const Plan& plan);
};

}  // namespace mario
