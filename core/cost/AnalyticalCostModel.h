#pragma once
// Costs from first principles (docs/cost-model.md): every kernel of a micro-batch timed by a
// roofline at the hardware preset's measured efficiencies (TransformerKernels), tensor- and
// data-parallel collectives as NCCL picks them (Collectives), activation memory after Korthikanti
// et al. with FlashAttention (ActivationMemory), mixed-precision Adam state.
// All figures are per GPU: tensor parallelism divides them.
#include "core/cost/ActivationMemory.h"
#include "core/cost/Collectives.h"
#include "core/cost/HostIssue.h"
#include "core/cost/KernelRoofline.h"
#include "core/cost/StageLayout.h"
#include "core/cost/TransformerKernels.h"
#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/schedule/StageCost.h"
#include "core/util/Result.h"

namespace mario {

class AnalyticalCostModel {
public:
    // Checks that the model, hardware and parallel sizes the formulas divide by are positive.
    static Result<AnalyticalCostModel> create(const Config& config);

    // Model FLOPs of one micro-batch's forward on the whole (unsplit) piece, Megatron-LM's count
    // (every score of the s×s attention, whatever the mask); divide by tp per GPU.
    double layerForwardFlops() const;  // one transformer block
    double headForwardFlops() const;   // LM head projection to the vocabulary

    // Parameters (whole, before tp). GPT-style models (no gated MLP) carry LayerNorms with
    // biases and learned positions; LLaMA-style ones RMSNorm and rotary positions.
    double layerParameters() const;
    double embeddingParameters() const;  // on the first stage of a chain
    double headParameters() const;       // on the last stage, plus the final norm
    // Distinct parameters of the model: a tied head is counted once here, although under
    // pipeline parallelism the last stage keeps its own copy (stageParameters counts it).
    double modelParameters() const;
    double stageParameters(const StageLayout& layout) const;

    // Weights + gradients + optimizer state per parameter.
    double staticBytesPerParameter() const;
    // The gradient buffer's bytes per parameter, in the reduction's dtype (grad_reduce_dtype).
    double gradientBytesPerParameter() const;

    // Per block and direction: the tensor-parallel collectives (0 at tp 1).
    double tensorParallelCommMs() const;
    // What of them stays on a block's critical path: all of it, or with overlap_tp_comm what
    // Transformer Engine's userbuffer overlap leaves (docs/cost-model.md#tensor-parallelism):
    // each collective split into chunks that run beside chunks of the GEMM next to it, that
    // GEMM slowed by the SMs the communication kernels take, and the first GEMM chunk or the
    // last communication chunk alone. Beyond the block's kernels, which time the GEMMs alone.
    double exposedTensorParallelMs(bool backward) const;
    // The gradient reduction of a stage with `params` parameters per GPU whose last backward
    // takes backwardMs (Megatron's overlap hides all of it but the last bucket under it); with the
    // distributed optimizer and overlap_param_gather, the weight gather beyond forwardWindowMs of
    // the next step's first forwards, and its first bucket where the stage opens the step.
    double gradientReductionMs(double params, double backwardMs, double forwardWindowMs = 0,
                               bool opensTheStep = false) const;

    const TransformerKernels& kernels() const { return kernels_; }
    const ActivationMemory& activations() const { return activations_; }
    StageCost stageCost(const StageLayout& layout) const;
    // The boundary a stage sends on: its tensor-parallel rank's 1/tp of it (Megatron's
    // scatter-gather), or whole under DeepSpeed's pipeline engine; 0 from a chain's last stage.
    double sendBytes(const StageLayout& layout) const;
    // Whether a sender's compute stream waits for its pipeline sends before the next instruction:
    // DeepSpeed's pipeline engine (blocking dist.send, deepspeed/runtime/pipe/p2p.py), and 1F1B as
    // Megatron and PyTorch's Schedule1F1B run it; overlap_p2p_comm overrides (not DeepSpeed's).
    bool sendsBlock() const;
    // The transfer a blocking send adds to the sender's F and B (0 when sends overlap compute):
    // its rank's 1/tp of the boundary, or the whole of it under DeepSpeed.
    double blockingSendMs() const;
    // Megatron's scatter-gather without sequence parallelism: a received 1/tp of the boundary is
    // all-gathered over the tensor-parallel group on the receiver's compute stream before use
    // (gather_split_1d_tensor); 0 with sequence parallelism, at tp 1 and under DeepSpeed.
    double boundaryGatherMs() const;

private:
    explicit AnalyticalCostModel(const Config& config);
    // One GEMM overlapped with one collective of `commMs` (docs/cost-model.md): the time the
    // pair takes beyond the GEMM alone.
    // All-gather into the GEMM; `role` prices the GEMM at its role's rate (a calibrated preset's).
    double ringExchangeMs(const GemmShape& gemm, double commMs, GemmRole role = GemmRole::Forward) const;
    double pipelinedMs(const GemmShape& gemm, double commMs) const;     // the GEMM into a reduce-scatter
    CollectiveGroup tensorParallelGroup() const;  // a stage's tp ranks and the links between them
    double boundaryBytesPerRank() const;          // what one rank sends of a stage boundary
    double bulkMs(double gemmMs, double commMs) const;                  // side by side, not chunked
    double besideCommunication(double gemmMs) const;  // a GEMM sharing the SMs with communication

    ModelConfig model_;
    HardwareConfig hardware_;
    ParallelConfig parallel_;
    TrainingConfig training_;
    Collectives collectives_;
    TransformerKernels kernels_;  // with the roofline every kernel is timed by
    ActivationMemory activations_;
    double b_;  // micro-batch size
    double s_;  // sequence length
    double h_;  // hidden size
    // Gradients are summed over 2·dp replicas when a scheme keeps two copies of each stage.
    int replicas_;
    CollectiveGroup data_parallel_;  // the replicas a stage's gradients are reduced over
    double overhead_ms_;        // kernel_overhead_us: each chunk of an overlapped GEMM is a launch
    HostIssue host_;            // the host thread's issue time of each instruction
    LinkSpec link_;             // the pipeline link, for blocking sends
};

}  // namespace mario
