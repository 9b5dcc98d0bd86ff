#pragma once
// A device's memory depends only on its own program order (docs/execution-model.md): the running sum
// of what each instruction allocates or frees. Passes use this to check a memory cap
// without simulating the whole plan.
#include <vector>

#include "core/schedule/Plan.h"

namespace mario {

// Bytes each instruction of `program` adds (F, R) or frees (B, I, W), in program order.
std::vector<double> memoryDeltas(const Plan& plan, const std::vector<Instruction>& program);

// The running sum: dynamic bytes right after each instruction of `program`.
std::vector<double> memoryLevels(const Plan& plan, const std::vector<Instruction>& program);

// Weights and optimizer state of the stages on `device`, with the framework's reserve and the
// largest working bytes of its stages (StageCost::working_bytes): the floor its levels stand on.
double staticBytesOf(const Plan& plan, int device);
// The same for every device at once, in one pass over the stages: for loops over the devices,
// where staticBytesOf would rescan every stage per device.
std::vector<double> staticBytesPerDevice(const Plan& plan);

// Static bytes of the device plus the peak of the running sum of its program.
double programPeakBytes(const Plan& plan, int device);

}  // namespace mario
