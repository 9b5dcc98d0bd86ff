#pragma once
// Config → Plan: lay stages out, cost them, generate the scheme's order, add communication
// and gradient synchronisation. Passes are not applied here (see passes/PassManager.h).
#include "model/Config.h"
#include "schedule/Plan.h"
#include "schedule/ScheduleShape.h"
#include "util/Result.h"

namespace mario {

ScheduleShape scheduleShapeOf(const Config& config);

Result<Plan> buildPlan(const Config& config);

// Rebuilds full programs from compute-only orders for an existing plan's stages and chains
// (used when importing a compute-only CSV).
Result<Plan> planFromComputeOrder(Plan skeleton, const ComputeOrder& order);

}  // namespace mario
