#pragma once
// Config → Plan: lay stages out, cost them, generate the scheme's order, add communication
// and gradient synchronisation. Passes are not applied here (see passes/PassManager.h).
// It sits above io because a config's profile is a file (io/ProfileJson.h), read on every build.
#include <string>
#include <vector>

#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"
#include "core/schedule/StageCost.h"
#include "core/util/Result.h"

namespace mario {

ScheduleShape scheduleShapeOf(const Config& config);

Result<Plan> buildPlan(const Config& config);

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

// A message about a plan built from `config` in the words of the config: its first
// "stages[N].KEY" becomes the config key the user wrote ("unit_costs.forward"), or, for costs a
// model or profile computes, "stage N's KEY (from model and hardware)". The simulator and the
// validator name a plan's fields; a config's user never wrote those (issue 39).
std::string inConfigTerms(const std::string& message, const Config& config);

}  // namespace mario
