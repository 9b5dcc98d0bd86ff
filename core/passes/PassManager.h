#pragma once
// Applies a chosen set of passes until nothing changes, each where the pass table
// (PassRegistry.h) places it. Checkpointing runs once, first: it is the decision to checkpoint,
// and running it again would undo what remove-redundancy decided. The paper's other three (and
// relax) repeat in table order, because each can open opportunities for the others (a preposed
// forward frees a slot that overlap-recompute then fills); bound-w and hide run once, last.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/passes/ReorderBound.h"
#include "core/passes/PassVocabulary.h"
#include "core/schedule/Plan.h"
#include "core/sim/RecomputeBound.h"
#include "core/util/Result.h"

namespace mario {

struct PassManagerOptions {
    bool validate_each_pass = true;  // run the validator after every pass (an error is a bug)
    int max_rounds = 32;
    // Called after every step that changed something, with the plan as it stands then (the
    // GUI's pass stepper keeps these snapshots).
    std::function<void(const PassReport&, const Plan&)> on_step = {};
    // Polled between passes and inside prepose-forward; when set, the passes stop early and
    // leave a valid plan (the tuner's cancel).
    const std::atomic<bool>* cancel = nullptr;
    // At most this many prepose-forward trials over the whole run. 0: about 5e7 / plan size
    // trials and at most 1e7 instructions re-timed by them, whichever ends first (never reached
    // below ~5 000 instructions; well under a second at 32 × 2048 micro-batches). The tuner
    // caps the effort harder, so that huge candidates cost a bounded, deterministic time.
    int prepose_simulations = 0;
    // At most this many simulations for hide-recompute; 0: no cap (it is linear in the
    // recomputations it moves).
    int hide_simulations = 0;
    // At most this many instructions re-timed by reorder's trials; 0: the pass's own default
    // (ReorderSchedule.cpp). The tuner's refinement spends less (TuneOptions).
    int reorder_evaluations = 0;
    // Also bound what hide could reach at best (sim/RecomputeBound.h) on the plan hide starts
    // from, within hide's budget: one more simulation and a sweep over each device's program.
    // With reorder, also reorder's bound (passes/ReorderBound.h) within the same budget.
    bool bound_hide = false;
};

struct PassRun {
    std::vector<PassReport> steps;  // only the steps that changed something, in order
    int rounds = 0;
    // With PassManagerOptions::bound_hide and hide selected: no placement of the Rs that hide
    // may choose from runs faster than this.
    std::optional<RecomputeBound> hide_bound;
    // With bound_hide and reorder selected: no order, checkpointing and R placement within the
    // budget runs faster than this (passes/ReorderBound.h).
    std::optional<ReorderBound> reorder_bound;
    // What computing the bounds took (not the passes' own time); hide's bound counts nothing
    // where it ran beside hide's starts on a second thread (big plans, HideRecompute.cpp).
    double hide_bound_us = 0;
};

// Hide-recompute's memory budget per device: the plan's own peak there plus one activation set
// of the device's largest stage, never past a configured memory limit (unless the plan is
// already past it); with `relaxToLimit` and a limit, the limit itself.
Result<std::vector<double>> hideBudget(const Plan& plan, bool relaxToLimit);

// Bound-w's budget, the same on every device: the highest peak any device would have with
// every W right after its I (nothing deferred), or the memory limit when that is higher.
std::vector<double> boundWBudget(const Plan& plan);

// Memory caps for prepose-forward and relax-checkpoint: the plan's memory limit, and never
// more than the device used before any pass (Mario must not cost memory).
Result<PassRun> runPasses(Plan& plan, const std::vector<PassId>& passes, const PassManagerOptions& options = {});

}  // namespace mario
