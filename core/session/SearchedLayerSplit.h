#pragma once
// parallel.layer_split = "search" (docs/config-format.md, docs/hide-recompute.md "The layer
// split"): the split whose step, with the passes the user runs, is the fastest found among
// splits that are valid and fit memory. The balanced split prices each device's F + B + R alone;
// what the passes then hide (a recomputation under a bubble, a reordered warm-up) depends on the
// whole schedule, so only simulating the schedule the user will run ranks splits by its step.
//
// Candidates: the even split (so the answer is never slower than even), the balanced one, the
// even split's counts in every other order where there are at most kEvenArrangements of them
// (they tie on the cost model's balance, not on the step), then a deterministic local search
// from the best so far: move one layer between neighbouring chain positions (the first and last
// may go down to none, as torchtitan allows), in a fixed order, keeping a move when it shortens
// the step; when no such move does, move one layer between positions further apart, and go back
// to the neighbours after any that gains; stop at a split neither kind improves or at the
// evaluation cap. No wall clock is read, so the same config and passes give the same split.
#include <atomic>
#include <optional>
#include <vector>

#include "core/model/Config.h"
#include "core/passes/PassReport.h"
#include "core/session/ScheduleInput.h"
#include "core/util/Result.h"

namespace mario {

// The even split's orders are tried only up to this many: LLaMA-2 3B's 26 layers on 8 positions
// have 28 (two 4s among 3s); a chain of 16 positions with 10 twos among ones has 8008, which a
// cap of kLayerSplitEvaluations could not cover in any useful way.
inline constexpr long long kEvenArrangements = 32;

// At most this many splits built, passed and simulated per search: the even split's 28 orders
// for LLaMA-2 3B on 8 positions, the balanced split, and 2(n - 1) = 30 one-layer moves, every
// move once around the start on 16 positions (interleaved 8 x 2, the grid's longest chain).
// Each evaluation is one run of the passes: with all,hide,reorder at 8 x 32 about 0.1 s on the
// 2-core machine, so a search stays within seconds (docs/hide-recompute.md, "The layer split").
inline constexpr int kLayerSplitEvaluations = 64;

// With reorder among the passes, the search screens splits without it and runs every pass,
// reorder included, on the even split and the best this many others (searchLayerSplit).
inline constexpr int kRefinedSplits = 4;

struct LayerSplitSearchOptions {
    std::vector<PassId> passes;  // what runs on every candidate: the passes the user runs
    PassEffort effort = {};      // their budgets, as the schedule's own run spends them
    int max_evaluations = kLayerSplitEvaluations;
    // Polled between candidates and inside the passes; once set, the search returns the best
    // split evaluated so far (even at least).
    const std::atomic<bool>* cancel = nullptr;
};

struct LayerSplitSearch {
    std::vector<int> counts;  // layers per chain position of the fastest fitting split found
    double step_ms = 0;       // its step with the passes
    bool fits = true;         // false only when no candidate fit memory (then: the fastest)
    double even_step_ms = 0;  // the even split's step with the same passes
    int evaluations = 0;      // splits built, passed and simulated
    bool local_optimum = false;  // false: stopped at the cap or by cancel
    double search_us = 0;        // wall time of the search that found it (reporting only)
};

// `config` must hold layers to split (not unit costs); its own layer_split is ignored. With
// reorder among the passes: screened without it, the even split and the kRefinedSplits best
// refined with every pass; `evaluations` counts both. Errors
// only when the even split itself cannot be built or simulated: a candidate that fails (a
// cost model refusing a stage, a pass or simulation error) is skipped.
Result<LayerSplitSearch> searchLayerSplit(const Config& config, const LayerSplitSearchOptions& options);

// The split a config says, every candidate evaluated exactly as searchLayerSplit does: its step
// with `passes` and whether it fits memory; nullopt where it cannot be built or simulated.
struct EvaluatedSplit {
    double step_ms = 0;
    bool fits = true;
};
std::optional<EvaluatedSplit> evaluateLayerSplit(const Config& config, const std::vector<int>& counts,
                                                 const LayerSplitSearchOptions& options);

}  // namespace mario
