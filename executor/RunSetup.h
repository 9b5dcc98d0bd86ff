#pragma once
// What every backend builds the same way from a plan and the options: the stages' layer
// slices and weights, the token batch, the single-device reference and its comparison. Kept
// apart from the runners so that the in-process and the multi-process runner cannot drift.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"
#include "executor/Executor.h"
#include "executor/GptModel.h"
#include "executor/StageRuntime.h"
#include "executor/StageSlices.h"

namespace mario::exec {

// Why this LibTorch sees no GPU, after "this LibTorch ": the one wording for the cuda backend's
// refusal and `capabilities`.
const char* whyNoGpu();

// The torch device and dtype named by the options ("cpu", "cuda", "cuda:1"; "float64", ...).
// Throws with a one-line reason for names LibTorch does not know.
torch::Device torchDevice(const ExecutorOptions& options);
torch::ScalarType torchDtype(const ExecutorOptions& options);
// Both, for a device and a dtype given apart (profile, calibrate): the first line of the reason
// as an error instead of a throw.
struct TorchPlace {
    torch::Device device;
    torch::ScalarType dtype;
};
Result<TorchPlace> torchPlace(const std::string& device, const std::string& dtype);

// Every stage of the plan with its slice (StageSlices.h), weights on `device` and its REDUCE_GRAD
// group, which spans the `replicas` data-parallel copies of the pipeline as well.
std::vector<StageRuntime> buildStages(const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                                      int replicas, const torch::Device& device, torch::ScalarType dtype,
                                      bool& planLayersUsed);

// replicas × M micro-batches of `micro_batch_size` rows, replica-major, from the seed or the
// options' token file. Throws with a one-line reason (e.g. a token outside the vocabulary).
Batch buildBatch(const GptModel& model, const ExecutorOptions& options, int microbatches, int microBatchSize,
                 int replicas, const torch::Device& device);

// The gradients and weights one stage ended a run with (what the reference is compared with).
struct StageOutcome {
    ParamMap grads;    // just before the last optimizer step
    ParamMap weights;  // after it
};

// The whole model on one device, all micro-batches in turn, the same optimizer steps; compares
// every parameter's gradient and weight with the first outcome holding it, into `report`.
// Whether a pipelined gradient equals the reference's: torch::allclose(rtol, atol) in float64
// and float32; in bfloat16 and float16, within the rounding two orders of summing
// `summedTerms` micro-batch gradients can differ by (RunSetup.cpp says how much).
bool gradientsAgree(const torch::Tensor& grad, const torch::Tensor& reference, int summedTerms,
                    const ExecutorOptions& options);

void checkAgainstReference(const GptModel& model, const Batch& batch, const ExecutorOptions& options,
                           const std::vector<StageOutcome>& outcomes, RunReport& report);

}  // namespace mario::exec
