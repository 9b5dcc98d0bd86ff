#pragma once
// How much slower the optimizer step runs beside neighbours stepping too (`mario-executor
// profile` with neighbours: the profile's "optimizer_contention", StageCost::optimizer_contention).
// A step streams every weight, gradient and moment and computes almost nothing, so two SM
// partitions of one GPU stepping at once share the HBM bandwidth: on an H100 a Chimera OPT took
// 1.8-2.1x its profiled time beside the other partition's OPT, where the blocks' contention
// (neighbours running forward and backward) gave 1.24 (docs/gpu.md#on-an-h100-2026-11-28).
#include <vector>

#include <c10/core/Stream.h>
#include <torch/torch.h>

#include "executor/GptModel.h"
#include "executor/Optimizer.h"

namespace mario::exec {

struct StepTimes {
    double alone_ms = 0;   // median step alone
    double beside_ms = 0;  // median step while every neighbour steps
    // (beside / alone − 1) / neighbours, at least 0.
    double contention(int neighbours) const;
};

// `slice`'s optimizer step on `device` (the caller's current stream: partition 0 on a GPU),
// timed `repeats` times after one warm-up, alone and beside `neighbours` threads stepping their
// own copies of the slice on `streams` (a GPU's other partitions; empty on the CPU).
StepTimes measureOptimizerSteps(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                                const torch::Tensor& targets, const torch::Device& device, torch::ScalarType dtype,
                                const Optimizer& optimizer, int repeats, int neighbours,
                                const std::vector<c10::Stream>& streams);

}  // namespace mario::exec
