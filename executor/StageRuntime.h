#pragma once
// What a step works on: every stage's weights and optimizer state, and the token batch. Built
// once per run (RunSetup.h), read and written by the workers of every step (DeviceWorker), by
// the optimizer (Optimizer.h) and by the reference check.
#include <vector>

#include <torch/torch.h>

#include "executor/GptModel.h"
#include "executor/Transport.h"

namespace mario::exec {

// One stage's weights and what the step did to them. Owned by the runner, touched only by the
// thread of the stage's device while a step runs.
struct StageRuntime {
    int index = 0;
    LayerSlice slice;
    ParamMap params;
    ReduceGroup reduce;          // every stage of the run holding the same slice (Chimera: 2 × dp)
    bool reducePending = false;  // REDUCE_GRAD contributed, the sum not yet collected
    bool reduced = false;        // gradients hold the sum over replicas this step
    bool stepped = false;        // OPT ran this step
    ParamMap gradSnapshot;       // gradients just before the optimizer step (what tests compare)
    ParamMap adamM, adamV;       // Adam moments (empty with SGD)
    int adamSteps = 0;
};

// The micro-batches of one step, replica-major (replica r's micro-batch m is r·M + m): token
// inputs [B, seq] and targets [B, seq], on the device of the worker that reads them.
struct Batch {
    std::vector<torch::Tensor> inputs;
    std::vector<torch::Tensor> targets;
};

}  // namespace mario::exec
