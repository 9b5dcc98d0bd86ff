#pragma once
// How the framework trains a step, beyond the split of ParallelConfig: the choices of a
// Megatron-LM or torchtitan launch that change kernel times and activation memory
// (docs/cost-model.md). Mario's own checkpointing (the R instructions) is a pass, not a
// setting here; selective recomputation is the framework's finer-grained alternative.
#include <optional>

#include "core/model/ModelConfig.h"

namespace mario {

struct TrainingConfig {
    // FlashAttention keeps no s×s score matrix and fuses softmax and dropout into its kernel.
    // Materialized: two batched products around Megatron-LM's fused scale-mask-softmax and a
    // dropout over b·a·s² elements (Megatron before 2022). Eager: the same products with the
    // scale, the causal mask and the softmax as three kernels of their own (PyTorch without
    // fusion, as mario-executor's blocks run).
    enum class Attention { Flash, Materialized, Eager };
    Attention attention = Attention::Flash;
    bool flashAttention() const { return attention == Attention::Flash; }
    // The framework's own activation recomputation, block by block inside the backward
    // (Megatron's --recompute-granularity): Selective (Korthikanti et al. 2022) recomputes the
    // attention core instead of keeping its s×s activations (FlashAttention never keeps them);
    // Full keeps only each block's input and repeats the block's forward before its backward.
    enum class Recompute { None, Selective, Full };
    Recompute recompute = Recompute::None;
    // With tp > 1, layer norms, dropouts and residuals run on a 1/tp slice of the sequence and
    // the two all-reduces per block become all-gather + reduce-scatter (same bytes).
    bool sequence_parallel = true;
    // The tokens a GPU's element-wise kernels and their saved inputs see, of `tokens` per
    // micro-batch: a 1/tp slice with sequence parallelism, all of them without.
    double slicedTokens(double tokens, int tp) const { return sequence_parallel && tp > 1 ? tokens / tp : tokens; }
    // Data-parallel gradient reduction in buckets while the last micro-batch's backward still
    // runs (Megatron's --overlap-grad-reduce); off, it waits for the backward to finish.
    bool overlap_grad_reduce = false;
    // With the distributed optimizer: the all-gather of updated bf16 weights runs under the next
    // step's forward (Megatron's --overlap-param-gather), off the step's critical path.
    bool overlap_param_gather = false;
    // Tensor-parallel all-gathers and reduce-scatters split into chunks that run while the
    // neighbouring GEMM computes (Megatron's --tp-comm-overlap, Transformer Engine userbuffers):
    // only what a collective takes beyond its GEMM stays on the critical path.
    bool overlap_tp_comm = false;
    // Dropout after attention, on the attention probabilities and after the MLP (byte masks kept
    // for the backward). Unset: on for GPT-style models (Megatron's 0.1), off for LLaMA-style.
    std::optional<bool> dropout;
    bool dropoutFor(const ModelConfig& model) const { return dropout.value_or(!model.gated_mlp); }
    // Gradients reduced in bf16 (Megatron's --grad-reduce-in-bf16) rather than fp32, its default.
    bool grad_reduce_in_bf16 = false;
    // The stack whose host thread issues the kernels (docs/cost-model.md#host-time): it sets the
    // host's cost per issued operator (cost/HostIssue.h) and, for DeepSpeed's pipeline engine,
    // whole blocking sends on the compute stream instead of Megatron's scatter-gathered ones.
    enum class Framework { Megatron, Torchtitan, DeepSpeed };
    Framework framework = Framework::Megatron;
    // Pipeline sends beside compute rather than waited for before the next instruction
    // (Megatron's --overlap-p2p-communication). Megatron's 1F1B waits on every send it posts
    // (req.wait() in _communicate, and torch.cuda.synchronize() with batch_p2p_sync), so a
    // sender's compute stream holds for the transfer; 2021-22 Megatron did so in every schedule.
    // Unset: waited for in 1f1b, beside compute otherwise (docs/cost-model.md#host-time).
    std::optional<bool> overlap_p2p_comm;
    // Each instruction's kernels captured in a CUDA graph: one launch per instruction.
    bool cuda_graphs = false;
    // The host's cost per issued operator in microseconds, in place of the framework's
    // (a measured host, or a what-if); unset: the framework's constant.
    std::optional<double> host_op_us;

    friend bool operator==(const TrainingConfig&, const TrainingConfig&) = default;
};

}  // namespace mario
