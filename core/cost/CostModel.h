#pragma once
// What plan building asks of the cost models besides a model's own stage costs (AnalyticalCostModel,
// ProfileCostModel): the unit costs of teaching mode, the model's size and the pipeline link
// (docs/cost-model.md). Picking the model a config asks for, which may mean reading its profile
// file, is session/PlanBuilder.h's computeStageCosts.
#include <cstddef>
#include <vector>

#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/schedule/StageCost.h"

namespace mario {

// Unit mode: every one of `stages` stages costs the same fixed amounts, over a free link.
std::vector<StageCost> unitStageCosts(const UnitCosts& unit, std::size_t stages);

// Distinct parameters of the config's model (AnalyticalCostModel::modelParameters); 0 in unit
// mode or when the model is incomplete.
double modelParameterCount(const Config& config);

// The point-to-point link between neighbouring pipeline stages, on the ranks of RankLayout.h
// (Megatron-LM's order, the one launch exports run): NVLink when every pipeline hop stays
// inside a node, else InfiniBand, since the slowest hop sets a pipeline's pace. Unit mode: a
// free link {0, 0}.
LinkSpec pipelineLink(const Config& config);

}  // namespace mario
