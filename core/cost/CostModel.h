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

// Distinct parameters of the config's model (AnalyticalCostModel::modelParameters); 0 in unit
// mode or when the model is incomplete.
double modelParameterCount(const Config& config);

// The point-to-point link between neighbouring pipeline stages, on the ranks of RankLayout.h
// (Megatron-LM's order, the one launch exports run): NVLink when every pipeline hop stays
// inside a node, else InfiniBand, since the slowest hop sets a pipeline's pace. Unit mode: a
// free link {0, 0}.
LinkSpec pipelineLink(const Config& config);

}  // namespace mario
