#pragma once
// The arithmetic a step does and how well it uses the GPUs (docs/cost-model.md#mfu): model
// FLOPs count each micro-batch's forward once and its backward as twice the forward (F, B, or
// I + W); hardware FLOPs add the recomputation (R) that checkpointing makes the GPUs repeat.
// MFU = model FLOPs / (step × GPUs × peak), HFU the same with hardware FLOPs, as in
// Korthikanti et al. 2022 and the PaLM paper.
#include "core/schedule/Plan.h"

namespace mario {

struct StepFlops {
    double model_flops = 0;     // the whole step, every GPU of every replica
    double hardware_flops = 0;  // model FLOPs plus recomputation
    double gpus = 0;            // devices × tp × dp
    double model_tflops_per_gpu = 0;
    double hardware_tflops_per_gpu = 0;
    double mfu = 0;  // 0 when the plan has no FLOPs or no peak
    double hfu = 0;

    bool known() const { return model_flops > 0; }
};

// From the stages' forward_flops and the programs' F, B, I, W and R; the rates need the step
// (makespanMs > 0) and the utilisations the plan's peak_tflops.
StepFlops stepFlops(const Plan& plan, double makespanMs);

}  // namespace mario
