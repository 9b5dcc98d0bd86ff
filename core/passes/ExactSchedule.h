#pragma once
// Exact search on small pipelines (issue 43, item 3): the shortest step over every device's
// order of F, B (or I and W) and R, which forwards are checkpointed and where their Rs stand,
// under each device's memory budget, keeping every dependency (ScheduleProblem.h). A
// branch-and-bound that proves its answer: it stops with `proven` only after every branch was
// either explored or cut by an admissible argument, and says `proven = false` when its node
// budget ran out first. docs/reorder.md explains the search and why branch-and-bound rather
// than an integer program.
#include <limits>
#include <optional>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct ExactOptions {
    long long node_budget = 2'000'000;  // search nodes at most; then the answer is not proven
    // Only schedules strictly shorter than this are recorded (the input's step, say): with
    // nothing below it and the search complete, no schedule beats it.
    double upper_bound = std::numeric_limits<double>::infinity();
};

struct ExactResult {
    bool proven = false;  // the search completed: `makespan` is optimal (or nothing beats upper_bound)
    bool found = false;   // a schedule below upper_bound was found; `plan` holds it
    double makespan = std::numeric_limits<double>::infinity();
    double root_bound = 0;  // the search's lower bound at its root
    long long nodes = 0;
    std::optional<Plan> plan;
};

// `budget[d]`: device d's memory budget in bytes, static bytes included (hide's rule:
// hideBudget in PassManager.h). Errors for plans the search does not model
// (ScheduleProblem::fromPlan). Sizes up to PP 4 with 8 micro-batches are what it is meant for;
// larger plans only exhaust the node budget sooner.
Result<ExactResult> exactSchedule(const Plan& plan, const std::vector<double>& budget, const ExactOptions& options = {});

}  // namespace mario
