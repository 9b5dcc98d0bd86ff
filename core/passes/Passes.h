#pragma once
// The four graph passes of the Mario paper (§5.1). Each works on any valid plan of any
// scheme, keeps it valid, and reports what it changed.
#include <atomic>
#include <optional>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/schedule/Plan.h"
#include "core/sim/RecomputeBound.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

class WindowPeaks;

// Pass 1: every forward that has a backward on its device becomes checkpointed: an R is
// inserted immediately before the backward (after the RECV of its gradient), so each stage
// keeps one full activation at a time.
PassReport applyCheckpoint(Plan& plan);

// Pass 2: each R moves ahead of the receives that precede it, so it runs while the device
// would otherwise wait for the gradient from the next stage. Moving work ahead of a pure
// wait can only make every instruction start earlier or at the same time.
PassReport overlapRecompute(Plan& plan);

// Pass 3: an R whose only predecessor since its F is communication restores what was just
// dropped: the checkpoint buys no memory, so the R goes and the F keeps its activations.
PassReport removeRedundancy(Plan& plan);

// Pass 4: a checkpointed F (with its RECV and SEND) moves up into the earliest bubble that
// its input can fill, freeing its old slot for a later recompute. A move is kept only when
// the makespan does not grow, nothing deadlocks and the device's peak memory stays within
// `memoryCaps[device]` (empty: no cap).
// It stops early, with a valid plan, after `maxSimulations` trials or once its trials have
// re-timed `maxEvaluations` instructions (0: no limit on either).
Result<PassReport> preposeForward(Plan& plan, const std::vector<double>& memoryCaps = {},
                                  const std::atomic<bool>* cancel = nullptr, int maxSimulations = 0,
                                  long long maxEvaluations = 0);

// Beyond the paper — relax-checkpoint: checkpointing every stage is what the paper does to
// balance memory, but a device with memory to spare pays recomputation for nothing. This
// drops recomputations (the F keeps its activations) for as long as the device's peak stays
// within `memoryCaps[device]`: first those that delay their backward most in `timeline`
// (the plan's simulation, when given; hidden ones gain nothing), then the shortest F→R
// windows, which add the least overlapping memory. Removing work never delays anything in
// this execution model, so the makespan cannot grow. Without caps nothing is removed. With
// `exposedOnly` (hide-recompute's drops) only Rs that delay their backward in `timeline` go:
// a hidden one costs nothing, and dropping it would spend memory a later move may need.
PassReport relaxCheckpoint(Plan& plan, const std::vector<double>& memoryCaps, const SimResult* timeline = nullptr,
                           bool exposedOnly = false);
// The same with each device's timings given apart (null: none), as hide's incremental timeline
// holds them: copying them into a SimResult for every round was a tenth of its drops. And,
// where given, each device's memory levels as hide keeps them up to date move by move (equal
// to a fresh sum but for the last bits): a device where by them no exposed R comes within a
// millionth of fitting is passed over without summing its levels again (issue 45).
PassReport relaxCheckpoint(Plan& plan, const std::vector<double>& memoryCaps,
                           const std::vector<const InstructionTimings*>& timings, bool exposedOnly,
                           const std::vector<const WindowPeaks*>& knownLevels = {});

// Beyond the paper — bound-w: split-backward schedules defer W, and each deferred W keeps
// weight_grad_bytes, which checkpointing does not shrink. Wherever a device's running memory
// passes `budget[device]`, the oldest pending W moves in front of the instruction that
// passed it, until the device fits or no W is pending there. Memory depends on program
// order only, so no simulation is needed; the step may grow (Ws leave the bubbles they
// filled), which is the price of the memory.
PassReport boundWeightGradients(Plan& plan, const std::vector<double>& budget);

// Beyond the paper — hide-recompute: drops the recomputations that delay their backward while
// the device stays within `budget[device]`, moves the others up into earlier bubbles of their
// device (before a receive it waited on), keeping each such move only when a simulation says
// the step did not grow, and moves those that stand early later, toward their backward, where
// that shortens the step (RecomputeHider.h). Memory and step lengths compare with a relative
// tolerance (Tolerance.h), so a drop that fills the budget exactly is taken. The plan stays
// valid and deadlock-free; never slower than its input. `maxSimulations` 0 means no cap.
// With `bound`, it also bounds what hide could reach from the plan it starts from, within the
// same budget (sim/RecomputeBound.h): beside its starts, on a second thread, where they run
// on two (big plans, no cap; HideRecompute.cpp).
struct HideBound {
    std::optional<RecomputeBound> bound;  // none where the bound does not model the plan
    double us = 0;  // the time it added to the pass: none where it ran beside the starts
};
Result<PassReport> hideRecompute(Plan& plan, const std::vector<double>& budget,
                                 const std::atomic<bool>* cancel = nullptr, int maxSimulations = 0,
                                 HideBound* bound = nullptr);

}  // namespace mario
