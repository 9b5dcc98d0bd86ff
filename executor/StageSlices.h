#pragma once
// Which part of the model every stage of a plan holds (docs/plan-format.md): the stage's own
// `layers` when they describe this model, else an even share of its chain. Torch-free, so that
// the memory estimate (RunMemoryEstimate.h) slices the model exactly as the run (RunSetup.h)
// will, before any weight exists.
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

// A plan's `layers` describe the model it was planned for (e.g. 40 blocks of a 13B model); they
// are used only when they describe this model: every stage has them and they end exactly at
// `layers`.
bool planLayersFit(const Plan& plan, int layers);

// Every stage's slice, in stage order: the plan's layers when they fit (planLayersUsed), else
// the j-th of L even slices of its chain. A chain's first stage also embeds, its last also holds
// norm + head + loss.
std::vector<LayerSlice> stageSlices(const Plan& plan, const PipelineTopology& topology, int layers,
                                    bool& planLayersUsed);

}  // namespace mario::exec
