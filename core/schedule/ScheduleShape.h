#pragma once
// What a generator needs to know: the scheme and the sizes, nothing about costs except the
// forward:backward ratio that Chimera's list scheduler orders by.
#include <vector>

#include "core/model/ParallelConfig.h"
#include "core/schedule/Instruction.h"

namespace mario {

struct ScheduleShape {
    Scheme scheme = Scheme::OneFOneB;
    int devices = 1;
    int chunks = 1;  // interleaved: stages per device (v)
    int microbatches = 1;
    int group_size = 0;  // interleaved: Megatron's micro-batch group; 0 means `devices`
    double forward_cost = 1;
    double backward_cost = 2;

    int groupSize() const { return group_size > 0 ? group_size : devices; }
};

// Which device runs each stage, and the chains of stages micro-batches flow through.
struct PipelineLayout {
    std::vector<int> stage_device;
    std::vector<std::vector<int>> chains;
};

// Per device, its compute instructions (F and B) in program order; SEND/RECV come later.
using ComputeOrder = std::vector<std::vector<Instruction>>;

}  // namespace mario
