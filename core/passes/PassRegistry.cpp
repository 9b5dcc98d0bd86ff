#include "core/passes/PassRegistry.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/passes/PassManager.h"
#include "core/passes/Passes.h"
#include "core/passes/ReorderSchedule.h"
#include "core/sim/Simulator.h"

namespace mario {

bool PassContext::isSelected(PassId pass) const {
    return selected && std::find(selected->begin(), selected->end(), pass) != selected->end();
}

namespace {

Result<PassReport> runCheckpoint(Plan& plan, PassContext&) { return applyCheckpoint(plan); }
Result<PassReport> runOverlap(Plan& plan, PassContext&) { return overlapRecompute(plan); }
Result<PassReport> runRedundancy(Plan& plan, PassContext&) { return removeRedundancy(plan); }

// Its budgets span every round: prepose can keep finding moves round after round, and the
// budgets are what bound the whole run.
Result<PassReport> runPrepose(Plan& plan, PassContext& context) {
    if (context.prepose_budget <= 0 || context.prepose_evaluations <= 0) return PassReport{PassId::Prepose, 0, {}};
    auto report =
        preposeForward(plan, context.caps, context.cancel, context.prepose_budget, context.prepose_evaluations);
    if (report) {
        context.prepose_budget -= report->simulations;
        context.prepose_evaluations -= report->evaluations;
    }
    return report;
}

Result<PassReport> runRelax(Plan& plan, PassContext& context) {
    auto timeline = Simulator::run(plan, SimOptions::timelineOnly());
    if (!timeline) return timeline.error();
    return relaxCheckpoint(plan, context.caps, &*timeline);
}

Result<PassReport> runBoundW(Plan& plan, PassContext&) { return boundWeightGradients(plan, boundWBudget(plan)); }

// Hide's budget, the same for hide and reorder within one run.
Result<std::vector<double>> sharedHideBudget(const Plan& plan, PassContext& context) {
    if (!context.hide_budget) {
        auto budget = hideBudget(plan, context.isSelected(PassId::Relax));
        if (!budget) return budget.error();
        context.hide_budget = std::move(*budget);
    }
    return *context.hide_budget;
}

Result<PassReport> runHide(Plan& plan, PassContext& context) {
    auto budget = sharedHideBudget(plan, context);
    if (!budget) return budget.error();
    HideBound bound;  // on big plans computed beside hide's starts (HideRecompute.cpp)
    auto report =
        hideRecompute(plan, *budget, context.cancel, context.hide_simulations, context.bound_hide ? &bound : nullptr);
    context.hide_bound = std::move(bound.bound);
    context.hide_bound_us = bound.us;
    return report;
}

Result<PassReport> runReorder(Plan& plan, PassContext& context) {
    auto budget = sharedHideBudget(plan, context);
    if (!budget) return budget.error();
    if (context.bound_hide) {
        const auto start = std::chrono::steady_clock::now();
        // As hide's: a plan the bound does not model (overlapped pairs) gets none.
        if (auto bound = reorderBound(plan, *budget)) context.reorder_bound = std::move(*bound);
        context.hide_bound_us +=
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    }
    return reorderSchedule(plan, *budget, context.cancel, context.reorder_evaluations, context.hide_simulations);
}

}  // namespace

const std::vector<PassInfo>& passTable() {
    static const std::vector<PassInfo> table{
        {PassId::Checkpoint, "checkpoint", "apply-checkpoint", false, PassPhase::Once, "apply checkpoint",
         "Checkpoint every forward; recompute right before its backward.", true, true, false, &runCheckpoint},
        {PassId::Overlap, "overlap", "overlap-recompute", false, PassPhase::Rounds, "overlap recompute",
         "Move each recompute ahead of the wait for its gradient.", true, true, false, &runOverlap},
        {PassId::Redundancy, "redundancy", "remove-redundancy", false, PassPhase::Rounds, "remove redundancy",
         "Drop a recompute that directly follows its own forward.", true, true, false, &runRedundancy},
        {PassId::Prepose, "prepose", "prepose-forward", false, PassPhase::Rounds, "prepose forward",
         "Run checkpointed forwards early, inside bubbles, when that shortens the step.", false, true, true,
         &runPrepose},
        {PassId::Relax, "relax", "relax-checkpoint", true, PassPhase::Rounds, "relax (beyond the paper)",
         "Keep activations where the memory limit allows.", false, false, false, &runRelax},
        {PassId::BoundW, "bound-w", "bound-weight-gradients", true, PassPhase::Last,
         "bound deferred W (beyond the paper)",
         "Zero-bubble schedules defer weight gradients (W), and each keeps memory until it runs. Run Ws "
         "earlier where they would lift a device above the plan's balanced peak or the memory limit.",
         true, true, false, &runBoundW},
        {PassId::Hide, "hide", "hide-recompute", true, PassPhase::Last, "hide recompute (beyond the paper)",
         "Place every recomputation in the bubbles of its device, and keep the activations that one more "
         "activation set of memory allows. Runs last.",
         false, true, false, &runHide},
        {PassId::Reorder, "reorder", "reorder-schedule", true, PassPhase::Last, "reorder (beyond the paper)",
         "Change each device's order of forwards, backwards and recomputations, then place the "
         "recomputations as hide does, within hide's memory budget. Runs after hide.",
         false, true, false, &runReorder},
    };
    return table;
}

const PassInfo& passInfo(PassId pass) {
    for (const PassInfo& info : passTable())
        if (info.id == pass) return info;
    throw std::logic_error("pass missing from the pass table");  // a new PassId without its entry
}

std::vector<PassId> tunerPasses(bool refine) {
    std::vector<PassId> passes;
    for (const PassInfo& info : passTable())
        if (refine ? info.tuner_refines : info.tuner_screens) passes.push_back(info.id);
    return passes;
}

}  // namespace mario
