#pragma once
// The one entry point from a config to per-stage costs and the pipeline link
// (docs/cost-model.md). It picks the cost model the config asks for:
//   unit_costs present -> every stage costs the same fixed amounts (teaching mode);
//   profile present    -> ProfileCostModel, linear fits to measured numbers;
//   otherwise          -> AnalyticalCostModel, FLOP and byte formulas from the presets.
#include <vector>

#include "core/cost/StageCost.h"
#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

// One StageCost per layout entry, same order. Errors name what is missing or inconsistent
// ("layouts[3]: layers [40, 44) lie outside the model's 40 layers"). The profile is read from
// disk on every call; callers that evaluate many configs (the tuner) should load a
// ProfileCostModel once and call it directly.
Result<std::vector<StageCost>> computeStageCosts(const Config& config, const std::vector<StageLayout>& layouts);

// The point-to-point link between neighbouring pipeline stages. Ranks are assumed in the
// order tp (fastest), then pp, then dp, so a pipeline of pp * tp GPUs stays inside one node
// when it fits there and uses NVLink; otherwise neighbours may sit on different nodes and the
// slower InfiniBand bandwidth sets the pace. Unit mode: a free link {0, 0}.
LinkSpec pipelineLink(const Config& config);

}  // namespace mario
