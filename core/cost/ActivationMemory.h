#pragma once
// Bytes a micro-batch keeps from its forward to its backward, per GPU (docs/cost-model.md#memory),
// after Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", table 2): a GPT block keeps sbh(10 + 24/t + 5as/(ht)) bytes, 34sbh/t + 5as²b/t with
// sequence parallelism, and drops the 5as²b/t of the s×s scores with selective recomputation
// or FlashAttention (which keeps only its output and the fp32 log-sum-exp per row). The same
// accounting covers grouped-query attention, any FFN width, SwiGLU and dropout-free blocks.
#include "core/model/ModelConfig.h"
#include "core/model/TrainingConfig.h"

namespace mario {

class ActivationMemory {
public:
    ActivationMemory(const ModelConfig& model, const TrainingConfig& training, int tp, int microBatchSize);

    double block() const;  // one transformer block's activations (before the framework's recompute)
    // What a micro-batch keeps per block until its backward, and in all on a stage of `blocks`
    // blocks (with full recomputation: every block's input).
    double keptPerBlock() const;
    double stage(int blocks) const;
    // With full recomputation, the one block a backward rebuilds at a time: live once per
    // stage whatever the micro-batches in flight (0 otherwise).
    double backwardWorkspace() const;
    double head() const;        // the last stage's fp32 logits (vocabulary-parallel)
    // The bf16 logits live beside their fp32 copy while the head runs: the GEMM's output while
    // `.float()` copies it, and in the backward the gradient's cast back to bf16 while the fp32
    // gradient lives. Transient (StageCost::working_bytes), not kept.
    double headTransient() const;
    double stageInput() const;  // what a checkpointed F keeps: the bf16 stage input

private:
    ModelConfig model_;
    TrainingConfig training_;
    double t_;
    double tokens_;  // b·s
    double sliced_;  // tokens per GPU of the tensors sequence parallelism slices
};

}  // namespace mario
