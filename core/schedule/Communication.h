#pragma once
// Turns compute orders into full programs: a RECV before every compute instruction whose
// input comes from another device, a SEND after every one whose output goes to another
// device. The same rule serves every scheme because it only asks the virtual pipeline. An
// overlapped pair gets the receives of both halves before it and their sends after it.
#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"
#include "core/util/Result.h"

namespace mario {

std::vector<Instruction> withCommunication(const std::vector<Instruction>& computeOnly,
                                           const PipelineTopology& topology);

// REDUCE_GRAD for every stage that needs one (data parallel, or a stage replicated across
// chains as in Chimera), then OPT for every stage, appended to each device's program.
void appendGradientSync(std::vector<Instruction>& program, const std::vector<int>& stagesOfDevice,
                        const std::vector<bool>& needsReduce);

// Rebuilds full programs from compute-only orders for an existing plan's stages and chains:
// communication, then gradient synchronisation, on every device (the last step of
// session/PlanBuilder.h's buildPlan, and what importing a compute-only CSV needs).
Result<Plan> planFromComputeOrder(Plan skeleton, const ComputeOrder& order);

}  // namespace mario
