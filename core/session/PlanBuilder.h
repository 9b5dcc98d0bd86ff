#pragma once
// Config → Plan: lay stages out, cost them, generate the scheme's order, add communication
// and gradient synchronisation. Passes are not applied here (see passes/PassManager.h).
// It sits above io because a config's profile is a file (io/ProfileJson.h), read on every build.
#include <atomic>
#include <string>
#include <vector>

#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"
#include "core/schedule/StageCost.h"
#include "core/sim/CostNames.h"
#include "core/util/Result.h"

namespace mario {

ScheduleShape scheduleShapeOf(const Config& config);

// parallel.layer_split = "search" simulates candidate splits with the config's own passes
// (session/SearchedLayerSplit.h), so building such a plan runs those passes many times, for
// seconds on big chains. `cancel`, polled by that search only, stops it: the plan then holds the
// best split found so far (an error when not even the even split was done). A caller that sets it
// discards what comes back, as the window does with a schedule it no longer shows.
Result<Plan> buildPlan(const Config& config, const std::atomic<bool>* cancel = nullptr);

// The layers of each chain position that buildPlan gives `config` (parallel.layer_split):
// even, balanced, searched or the file's counts. Errors for unit costs, which have no layers.
Result<std::vector<int>> chainLayerCounts(const Config& config);

// The one entry point from a config to per-stage costs (docs/cost-model.md). It picks the cost
// model the config asks for:
//   unit_costs present -> every stage costs the same fixed amounts (teaching mode);
//   profile present    -> ProfileCostModel, linear fits to measured numbers;
//   otherwise          -> AnalyticalCostModel, FLOP and byte formulas from the presets.
// One StageCost per layout entry, same order. Errors name what is missing or inconsistent
// ("layouts[3]: layers [40, 44) lie outside the model's 40 layers"). The profile is read from
// disk on every call; callers that evaluate many configs (the tuner) should load a
// ProfileCostModel once and call it directly.
Result<std::vector<StageCost>> computeStageCosts(const Config& config, const std::vector<StageLayout>& layouts);

// The costs of a plan built from `config` in the words of the config, for the simulator's and
// the validator's refusals (sim/CostNames.h): the key the user wrote ("unit_costs.forward"), or,
// for costs a model or a profile computes, the stage and where it comes from ("stage 7's
// backward_ms (from model and hardware, at hardware.peak_tflops 1e-302 and
// hardware.hbm_gb_per_s 2039)", "stage 0's forward_ms (from the profile "cpu-small")"); the peak
// as hardware.peak_tflops with the efficiencies that share it out. A config's user never wrote a
// plan's "stages[0].forward_ms" (issue 39).
CostNames costNamesOf(const Config& config);

}  // namespace mario
