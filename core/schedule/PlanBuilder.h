#pragma once
// Config → Plan: lay stages out, cost them, generate the scheme's order, add communication
// and gradient synchronisation. Passes are not applied here (see passes/PassManager.h).
#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"
#include "core/util/Result.h"

namespace mario {

ScheduleShape scheduleShapeOf(const Config& config);

Result<Plan> buildPlan(const Config& config);

// Rebuilds full programs from compute-only orders for an existing plan's stages and chains
// (used when importing a compute-only CSV).
Result<Plan> planFromComputeOrder(Plan skeleton, const ComputeOrder& order);

}  // namespace mario
