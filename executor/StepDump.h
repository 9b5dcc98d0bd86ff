#pragma once
// One training step written out for another runtime to repeat (`mario-executor run PLAN
// --dump-step DIR`): tests/pytorch/pytorch_runtime_test.py rebuilds the same model from these
// files, runs the plan's CSV on PyTorch's own pipeline runtime and compares its loss and
// gradients with the executor's. So the dump holds what that comparison needs and nothing of
// the executor's internals: the model spec, the INITIAL weights (the optimizer step has run by
// the time the dump is written, the model's master copy has not moved), the pipeline's
// gradients as the reference check reads them (RunSetup.h), the stages' layer slices, and the
// micro-batches' token ids.
//
// DIR/step.json ("mario-step-dump" v1) indexes raw little-endian files beside it, one per
// tensor: float64 for weights and gradients, int64 for token ids, row-major in the shape given.
#include <string>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/Executor.h"
#include "executor/GptModel.h"
#include "executor/StageRuntime.h"

namespace mario::exec {

// What the step ran on and what it gave; all of it belongs to the runner that ran the step.
struct StepDumpInputs {
    const GptModel& model;
    const ExecutorOptions& options;
    const PipelineTopology& topology;
    const Batch& batch;                       // replica-major, as RunSetup.h builds it
    const std::vector<StageRuntime>& stages;  // every replica's stages, after the step
    int microbatches = 0;                     // per replica
    int micro_batch_size = 0;
    const RunReport& report;
};

// Writes DIR/step.json and its tensor files, creating DIR. Throws std::runtime_error with a
// one-line reason (a file that cannot be written, a parameter without a pipeline gradient:
// a step that ran without snapshotting them, see ExecutorOptions::snapshotGradients).
void writeStepDump(const std::string& dir, const StepDumpInputs& step);

}  // namespace mario::exec
