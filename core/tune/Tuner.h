#pragma once
// The schedule tuner (paper §5.3): grid search over scheme × PP × DP × TP × micro-batch size ×
// checkpointing under a memory limit, maximising simulated throughput. Candidates whose
// cheap memory bound already exceeds the limit are pruned before simulating; the rest are
// screened with the three cheap Mario passes, and the best few re-evaluated with all four.
// Work is spread over threads; results are stored by candidate index, so the outcome is the
// same for any thread count.
#include <atomic>
#include <functional>

#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/session/ScheduleInput.h"
#include "core/tune/TuneTypes.h"
#include "core/util/Result.h"

namespace mario {

class Tuner {
public:
    using Progress = std::function<void(const TuneProgress&, const TuneOutcome& latest)>;

    // Every candidate the options allow for `base` (model, hardware, global batch; its own
    // parallel settings are ignored), in a fixed order.
    static std::vector<TuneCandidate> searchSpace(const Config& base, const TuneOptions& options);

    // The search's size: (stage, micro-batch) pairs of one chain summed over `space`, which its
    // simulations and passes grow with. run() refuses a search above limits::kMaxTunePairs.
    static double searchPairs(const Config& base, const std::vector<TuneCandidate>& space);

    // Checks the options against the base config; errors say what to change.
    static Result<bool> checkOptions(const Config& base, const TuneOptions& options);

    // `progress` is called from worker threads (serialised by the tuner); `cancel` is polled
    // between candidates, so a cancelled search returns within one candidate's evaluation.
    static Result<TuneResult> run(const Config& base, const TuneOptions& options, const Progress& progress = {},
                                  const std::atomic<bool>* cancel = nullptr);

    // The config and the plan (with the full Mario passes when it checkpoints) of a candidate.
    static Config configFor(const Config& base, const TuneCandidate& candidate, const TuneOptions& options);
    static Result<Plan> planFor(const Config& base, const TuneCandidate& candidate, const TuneOptions& options);

    // The passes a checkpointed candidate is screened with, and the best refined with, in the
    // pass table's order (TuneOptions::passes narrows them).
    static std::vector<PassId> screeningPasses(const TuneOptions& options);
    static std::vector<PassId> refiningPasses(const TuneOptions& options);
    // The effort caps of every pass run of a candidate (screening, refining, planFor, and the
    // window opening it): the one place they are decided.
    static PassEffort passEffort(const TuneOptions& options);
};

}  // namespace mario
