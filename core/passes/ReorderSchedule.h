#pragma once
// Beyond the paper — reorder (issue 43): hide places the recomputations within each device's
// order of forwards and backwards, and that order is the generator's. This pass changes the
// order itself: a local search moves F, B, I, W and R within their devices (OrderSearch.h),
// then hide places and drops the Rs within the same budget, and the two alternate while either
// gains. docs/reorder.md describes the search, the exact search it is tested against
// (ExactSchedule.h) and what it reaches.
#include <atomic>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

// `budget[d]`: device d's memory budget (hide's, hideBudget in PassManager.h); every device
// stays within it. The plan stays valid and is never slower than its input; `maxEvaluations`
// caps the instructions the search's trials re-time (0: the pass's default), `hideSimulations`
// caps each of its hide rounds as hideRecompute's cap does (0: none; the tuner's effort), and
// `cancel` stops it early with a valid plan.
Result<PassReport> reorderSchedule(Plan& plan, const std::vector<double>& budget,
                                   const std::atomic<bool>* cancel = nullptr, long long maxEvaluations = 0,
                                   int hideSimulations = 0);

}  // namespace mario
