#pragma once
// The one table of passes (as LLVM's PassRegistry.def): each pass's id, names, whether it is
// the paper's or this project's, where the pass manager runs it, what the window and the tuner
// show and use, and the one signature it runs through. PassVocabulary, the pass manager, the
// window's pass panel, the CLI's help and the tuner all read this table; adding a pass is an
// entry here, the pass itself and its test (CONTRIBUTING.md).
#include <atomic>
#include <optional>
#include <string_view>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/passes/ReorderBound.h"
#include "core/schedule/Plan.h"
#include "core/sim/RecomputeBound.h"
#include "core/util/Result.h"

namespace mario {

// Where a pass runs in a run of the pass manager (PassManager.h).
enum class PassPhase {
    Once,    // first, once: the decision to checkpoint
    Rounds,  // repeated in table order until none changes anything
    Last,    // once each, in table order, after the rounds
};

// What a run shares with its passes: computed by the manager, read (and budgets spent) by them.
struct PassContext {
    const std::vector<PassId>* selected = nullptr;  // the run's passes
    std::vector<double> caps;                       // per device: the memory prepose and relax keep within
    const std::atomic<bool>* cancel = nullptr;
    int prepose_budget = 0;                    // simulations prepose-forward may still spend over the run
    long long prepose_evaluations = 0;         // instructions its trials may still re-time
    int hide_simulations = 0;                  // 0: no cap
    int reorder_evaluations = 0;               // 0: reorder's default
    bool bound_hide = false;                   // also compute hide's recompute bound
    std::optional<RecomputeBound> hide_bound;  // out: set by hide when bound_hide
    std::optional<ReorderBound> reorder_bound;  // out: set by reorder when bound_hide
    // Hide's budget, taken by the first of hide and reorder to run, on the plan it is handed, so
    // that reorder after hide keeps hide's budget instead of growing it from hide's result.
    std::optional<std::vector<double>> hide_budget;
    double hide_bound_us = 0;  // what computing both bounds took

    bool isSelected(PassId pass) const;
};

struct PassInfo {
    PassId id;
    std::string_view name;       // CLI, config and plan files: "checkpoint"
    std::string_view long_name;  // the paper's: "apply-checkpoint"
    bool beyond_paper;           // this project's addition (relax, bound-w, hide)
    PassPhase phase;
    std::string_view label;    // the window's pass panel
    std::string_view tooltip;  // and its tooltip
    bool tuner_screens;        // the tuner screens every checkpointed candidate with it
    bool tuner_refines;        // and refines its best with it
    // Its moves pay off only because forwards are checkpointed (prepose runs them early, when
    // they hold only a checkpoint): an order exported without recomputation leaves it out.
    bool needs_checkpointing;
    Result<PassReport> (*run)(Plan& plan, PassContext& context);
};

// Every pass, in the order a run applies them within its phase.
const std::vector<PassInfo>& passTable();
const PassInfo& passInfo(PassId pass);

// The passes the tuner runs on a checkpointed candidate: screening every one, or refining the best.
std::vector<PassId> tunerPasses(bool refine);

}  // namespace mario
